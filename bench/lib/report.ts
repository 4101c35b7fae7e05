import { execFileSync } from "node:child_process";
import { cpus, loadavg, totalmem } from "node:os";
import type { FanoutFigure } from "../suites/fanout.js";
import type { ApiFigure } from "../suites/secret-api.js";
import type { SyncFigure } from "../suites/sync.js";
import { fmt, fmtSpread, type Spread } from "./stats.js";

/** The machine and run, recorded with every result. */
export interface Machine {
  date: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  db: "pglite" | "postgres";
  redis: boolean;
  mode: "quick" | "full";
  loadAverageAtStart: number[];
  fdLimit: string;
  commit?: string;
  /** Ferry's node flags (those of `npm start`). */
  ferryNodeFlags: string[];
}

export function machine(
  db: Machine["db"],
  redis: boolean,
  mode: Machine["mode"],
  ferryNodeFlags: string[],
): Machine {
  let fdLimit = "unknown";
  let commit: string | undefined;
  try {
    fdLimit = execFileSync("sh", ["-c", "ulimit -n"]).toString().trim();
  } catch {
    // no shell: leave unknown
  }
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    cpuModel: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    db,
    redis,
    mode,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    fdLimit,
    commit,
    ferryNodeFlags,
  };
}

export interface Target {
  figure: string;
  value: number;
  target: string;
  pass: boolean;
}

export interface Results {
  machine: Machine;
  api?: ApiFigure[];
  fanout?: FanoutFigure[];
  sync?: SyncFigure[];
  skipped: string[];
  targets: Target[];
  profiles?: unknown[];
}

export function targets(r: Omit<Results, "targets">): Target[] {
  const t: Target[] = [];
  const atLeast = (figure: string, s: Spread, min: number) =>
    t.push({ figure, value: s.median, target: `≥ ${min}`, pass: s.median >= min });
  const atMost = (figure: string, s: Spread, max: number) =>
    t.push({ figure, value: s.median, target: `≤ ${max}`, pass: s.median <= max });
  for (const f of r.api ?? []) {
    if (f.op === "delete") {
      atLeast(`v4 DELETE ÷ bare DELETE, req/s, c=${f.connections}`, f.ratio, 0.5);
      atMost(`v4 DELETE p99 ÷ bare p99, c=${f.connections}`, f.p99Ratio, 1.5);
    } else atLeast(`v3 GET by name ÷ bare SELECT, req/s, c=${f.connections}`, f.ratio, 0.6);
  }
  const fan = r.fanout ?? [];
  const top = fan.reduce<FanoutFigure | undefined>((a, f) => (a && a.n >= f.n ? a : f), undefined);
  if (top) {
    atMost(`fan-out p99 ÷ bare p99, N=${top.n}`, top.p99Ratio, 1.5);
    atMost(`RSS per idle subscriber ÷ bare, N=${top.n}`, top.rssRatio, 1.5);
    if (top.otherRequests)
      atMost(`other requests p99 during fan-out ÷ without, N=${top.n}`, top.otherRequests.ratio, 2.0);
  }
  for (const s of r.sync ?? []) {
    const w = s.incrementalWrites;
    t.push({
      figure: `${s.destination}: incremental sync writes after one change`,
      value: w.median,
      target: "= 1",
      pass: w.min === 1 && w.max === 1,
    });
    if (s.destination === "aws-parameter-store")
      atMost("SSM full sync calls ÷ API minimum", s.fullRatio, 1.05);
  }
  return t;
}

const ms = (s: Spread) => fmtSpread(s, 1);
/** Older result files have no with-connect figure. */
const connectP99 = (side: { p99WithConnect?: Spread }) =>
  side.p99WithConnect ? fmt(side.p99WithConnect.median, 1) : "–";
const ratio = (s: Spread) => fmtSpread(s, 2);

export function markdown(r: Results): string {
  const m = r.machine;
  const out: string[] = [];
  out.push(
    `**${m.date.slice(0, 10)}**, ${m.mode} run: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ` +
      `${m.db === "pglite" ? "embedded PGlite" : "PostgreSQL"}${m.redis ? " + Redis" : ""}, ` +
      `load average at start ${m.loadAverageAtStart.join(" / ")}, Ferry started as \`node ${m.ferryNodeFlags.join(" ")}\`. Figures: median (min–max) over interleaved runs; ratios run by run.`,
    "",
  );
  if (r.api?.length) {
    out.push(
      "| Secret API | conns | Ferry req/s | bare req/s | ratio | Ferry p50 / p99 ms | bare p50 / p99 ms | p99 ratio | p99 with connect, Ferry / bare ms |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    for (const f of r.api) {
      const name = f.op === "get" ? "GET /api/v3/secrets/raw/{name}" : "DELETE /api/v4/secrets/{name}";
      out.push(
        `| ${name} | ${f.connections} | ${fmtSpread(f.ferry.rps, 0)} | ${fmtSpread(f.bare.rps, 0)} | ${ratio(f.ratio)} | ` +
          `${fmt(f.ferry.p50.median)} / ${ms(f.ferry.p99)} | ${fmt(f.bare.p50.median)} / ${ms(f.bare.p99)} | ${ratio(f.p99Ratio)} | ` +
          `${connectP99(f.ferry)} / ${connectP99(f.bare)} |`,
      );
    }
    out.push(
      "",
      "p50 / p99: requests on established connections. *With connect* also counts each connection's first request, which waited for the server to accept the connection: Node accepts one pending connection per event-loop turn, so on a busy server the last of 50 fresh connections is accepted late in a short run.",
      "",
    );
  }
  if (r.fanout?.length) {
    out.push(
      "| Event fan-out | Ferry p50 / p99 / max ms | bare p50 / p99 / max ms | p99 ratio | RSS/subscriber Ferry / bare KiB | RSS ratio | write answered, Ferry / bare ms |",
      "|---|---|---|---|---|---|---|",
    );
    const kib = (s: Spread) =>
      fmtSpread({ ...s, median: s.median / 1024, min: s.min / 1024, max: s.max / 1024 }, 1);
    for (const f of r.fanout) {
      const lost =
        f.ferry.missing + f.ferry.openFailed > 0
          ? ` (${f.ferry.openFailed} not opened, ${f.ferry.missing} not delivered)`
          : "";
      out.push(
        `| N=${f.n}, M=${f.m}${lost} | ${fmt(f.ferry.p50.median)} / ${ms(f.ferry.p99)} / ${fmt(f.ferry.max.median)} | ` +
          `${fmt(f.bare.p50.median)} / ${ms(f.bare.p99)} / ${fmt(f.bare.max.median)} | ${ratio(f.p99Ratio)} | ` +
          `${kib(f.ferry.rssPerSubBytes)} / ${kib(f.bare.rssPerSubBytes)} | ${ratio(f.rssRatio)} | ` +
          `${fmt(f.ferry.writeMs.median)} / ${fmt(f.bare.writeMs.median)} |`,
      );
      const x = f.crossInstance;
      if (x) {
        out.push(
          `| N=${f.n}, write on A → Redis → B | ${fmt(x.p50.median)} / ${ms(x.p99)} / ${fmt(x.max.median)} | (bare above) | ${ratio(x.p99Ratio)} | | | ${fmt(x.writeMs.median)} |`,
        );
      }
    }
    out.push("");
    for (const f of r.fanout) {
      if (!f.otherRequests) continue;
      out.push(
        `Other API requests (GET by name, ${f.otherRequests.ratePerS} req/s) p99 during fan-out to N=${f.n}: ${ms(f.otherRequests.with)} ms, ` +
          `without: ${ms(f.otherRequests.without)} ms, ratio ${ratio(f.otherRequests.ratio)}.`,
        "",
      );
    }
  }
  if (r.sync?.length) {
    out.push(
      "| Sync (secrets) | full sync s | full calls (writes) | API minimum | calls ÷ min | incremental calls (writes) | incremental minimum |",
      "|---|---|---|---|---|---|---|",
    );
    for (const s of r.sync) {
      out.push(
        `| ${s.destination} (${s.secrets}, ${s.runs.length} run${s.runs.length === 1 ? "" : "s"}) | ${fmtSpread(s.fullTimeS, 2)} | ${fmt(s.fullCalls.median, 0)} (${fmt(s.fullWrites.median, 0)}) | ` +
          `${s.fullMinimum} | ${ratio(s.fullRatio)} | ${fmt(s.incrementalCalls.median, 0)} (${fmt(s.incrementalWrites.median, 0)}) | ${s.incrementalMinimum} |`,
      );
    }
    out.push("");
  }
  if (r.targets.length) {
    out.push("| Target | value | target | |", "|---|---|---|---|");
    for (const t of r.targets)
      out.push(`| ${t.figure} | ${fmt(t.value, 2)} | ${t.target} | ${t.pass ? "PASS" : "MISS"} |`);
    out.push("");
  }
  for (const s of r.skipped) out.push(`- skipped: ${s}`);
  return out.join("\n");
}
