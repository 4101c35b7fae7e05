import { api, updateSecret, type World } from "../lib/ferry.js";
import { collectGarbage } from "../lib/inspector.js";
import { nowMs, type ServerChild, sleep, type Worker } from "../lib/procs.js";
import { latencySummary, pairRatio, type Spread, spread } from "../lib/stats.js";
import type { LoadResult } from "../workers/load-worker.js";

/**
 * Event fan-out. For each N and each run, interleaved: the bare node:http SSE server, then Ferry (then,
 * with Redis and PostgreSQL, Ferry with the write on instance A and the subscribers on instance B).
 * Each measurement: GC, RSS, open N streams from the receiver process, then M writes one at a time:
 * the driver records the time before each write and waits until all N streams have the event; the
 * receivers record each arrival; latency = arrival − write time. Then (other requests, see below) GC
 * and RSS again, with the N streams idle: RSS per subscriber = the difference ÷ N.
 * At the largest N, Ferry's runs also time other API requests (reads at a fixed rate) while updates fan
 * out to the N streams, against the same load and writes with no stream open.
 */

export interface FanoutRun {
  p50: number;
  p99: number;
  max: number;
  samples: number;
  missing: number;
  openFailed: number;
  firstError?: string;
  openMs: number;
  rssPerSubBytes: number;
  /** Median time until the write request itself was answered (Ferry: the whole PATCH; bare: the publish). */
  writeMs: number;
}

export interface FanoutSide {
  p50: Spread;
  p99: Spread;
  max: Spread;
  rssPerSubBytes: Spread;
  writeMs: Spread;
  missing: number;
  openFailed: number;
  firstError?: string;
  runs: FanoutRun[];
}

export interface FanoutFigure {
  n: number;
  m: number;
  bare: FanoutSide;
  ferry: FanoutSide;
  p99Ratio: Spread;
  rssRatio: Spread;
  /** Write on instance A, subscribers on instance B, through Redis. */
  crossInstance?: FanoutSide & { p99Ratio: Spread };
  /** p99 of other API requests while fanning out to N ÷ without any stream. */
  otherRequests?: { ratePerS: number; without: Spread; with: Spread; ratio: Spread };
}

export interface FanoutOptions {
  world: World;
  ferry: ServerChild;
  ferryB?: ServerChild;
  bareSse: ServerChild;
  receivers: Worker;
  load: Worker;
  ns: number[];
  crossNs: number[];
  reps: number;
  m: number;
  /** Keys existing in staging "/" (at least m). */
  keys: string[];
  otherDurationS: number;
  /** A live secret name in dev "/" for the other-requests load. */
  readName: string;
  log: (s: string) => void;
  /**
   * At the start of every measurement and before the other requests without streams (bare and Ferry
   * alike): a PostgreSQL CHECKPOINT (see ScratchDb.checkpoint).
   */
  settle?: () => Promise<void>;
}

/**
 * The rate of the "other requests". Each p99 is taken from one run's requests, so at 100 req/s for 2 s it
 * was the second-slowest of 200 and one stall on either side decided the ratio (single pairs ranged
 * 0.4–9.3 on PGlite). At 200 req/s, still a small fraction of either backend's capacity, it is the
 * fourth-slowest of 400: in two runs each, pairs ranged 0.78–1.29 on PGlite and 0.88–1.75 on
 * PostgreSQL + Redis.
 */
export const OTHER_REQUESTS_PER_S = 200;

type Target = { port: number; path: string; headers: Record<string, string>; body: string };
type Write = (key: string, i: number) => Promise<void>;

async function rssAfterGc(s: ServerChild): Promise<number> {
  if (s.inspectPort) await collectGarbage(s.inspectPort);
  await sleep(300);
  return s.rss();
}

async function measure(
  o: FanoutOptions,
  n: number,
  server: ServerChild,
  target: Target,
  write: Write,
  rest?: () => Promise<void>,
): Promise<FanoutRun> {
  await o.settle?.();
  await o.receivers.call({ cmd: "reset" });
  const before = await rssAfterGc(server);
  const opened = await o.receivers.call<{ open: number; failed: number; firstError?: string; ms: number }>(
    { cmd: "open", ...target, n, concurrency: 128 },
    600_000,
  );
  await sleep(500);
  const sent = new Map<string, number>();
  const writeMs: number[] = [];
  let missing = 0;
  try {
    for (let i = 0; i < o.m; i++) {
      const key = o.keys[i] as string;
      const t0 = nowMs();
      sent.set(key, t0);
      await write(key, i);
      writeMs.push(nowMs() - t0);
      const got = await o.receivers.call<{ received: number }>({
        cmd: "waitFor",
        key,
        count: opened.open,
        timeoutMs: 20_000,
      });
      missing += Math.max(0, opened.open - got.received);
    }
    const arrivals = await o.receivers.call<Record<string, number[]>>({
      cmd: "arrivals",
      keys: [...sent.keys()],
    });
    const lat: number[] = [];
    for (const [key, t0] of sent) for (const t of arrivals[key] ?? []) lat.push(t - t0);
    if (rest) await rest();
    // RSS is read last, with the streams idle again: the full GC it forces shrinks the heap to its live
    // size, and V8 then ran its next major GC (10–13 ms pauses with 10,000 streams open) about a second
    // later, in the middle of the latency measurements when the reading came before them.
    const after = await rssAfterGc(server);
    const s = latencySummary(lat);
    return {
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      samples: s.n,
      missing,
      openFailed: opened.failed,
      firstError: opened.firstError,
      openMs: opened.ms,
      rssPerSubBytes: opened.open > 0 ? (after - before) / opened.open : Number.NaN,
      writeMs: latencySummary(writeMs).p50,
    };
  } finally {
    await o.receivers.call({ cmd: "close" });
    await sleep(300);
  }
}

function side(runs: FanoutRun[]): FanoutSide {
  return {
    p50: spread(runs.map((r) => r.p50)),
    p99: spread(runs.map((r) => r.p99)),
    max: spread(runs.map((r) => r.max)),
    rssPerSubBytes: spread(runs.map((r) => r.rssPerSubBytes)),
    writeMs: spread(runs.map((r) => r.writeMs)),
    missing: runs.reduce((a, r) => a + r.missing, 0),
    openFailed: runs.reduce((a, r) => a + r.openFailed, 0),
    firstError: runs.find((r) => r.firstError)?.firstError,
    runs,
  };
}

export async function fanoutSuite(o: FanoutOptions): Promise<FanoutFigure[]> {
  const w = o.world;
  const subscribeBody = JSON.stringify({
    projectId: w.projectId,
    register: [{ event: "secret:update", conditions: { environmentSlug: "staging", secretPath: "/" } }],
  });
  const ferryTarget = (s: ServerChild): Target => ({
    port: s.port,
    path: "/api/v1/events/subscribe/project-events",
    headers: { Authorization: `Bearer ${w.token}` },
    body: subscribeBody,
  });
  const bareTarget: Target = { port: o.bareSse.port, path: "/subscribe", headers: {}, body: "{}" };
  let seq = 0;
  const ferryWrite: Write = (key) => updateSecret(w, "staging", key, `v${++seq}`);
  const bareWrite: Write = async (key) => {
    await api(o.bareSse.url, "POST", "/publish", { environment: "staging", secretPath: "/", key });
  };

  // Other requests: reads at a fixed rate from the load process while a writer updates every 200 ms.
  const otherRequests = async (): Promise<number> => {
    let writing = true;
    const writer = (async () => {
      let i = 0;
      while (writing) {
        await ferryWrite(o.keys[i++ % o.keys.length] as string, i);
        await sleep(200);
      }
    })();
    const query = `workspaceId=${w.projectId}&environment=dev&secretPath=%2F`;
    const r = await o.load.call<LoadResult>({
      cmd: "run",
      job: {
        url: w.base,
        method: "GET",
        headers: { authorization: `Bearer ${w.token}` },
        connections: 4,
        overallRate: OTHER_REQUESTS_PER_S,
        durationS: o.otherDurationS,
        cycle: true,
        paths: [`/api/v3/secrets/raw/${encodeURIComponent(o.readName)}?${query}`],
      },
    });
    writing = false;
    await writer;
    return r.p99;
  };

  const out: FanoutFigure[] = [];
  const maxN = Math.max(...o.ns);
  for (const n of o.ns) {
    const bare: FanoutRun[] = [];
    const ferry: FanoutRun[] = [];
    const cross: FanoutRun[] = [];
    const without: number[] = [];
    const withFanout: number[] = [];
    for (let r = 0; r < o.reps; r++) {
      bare.push(await measure(o, n, o.bareSse, bareTarget, bareWrite));
      if (n === maxN) {
        await o.settle?.();
        without.push(await otherRequests());
      }
      const rest =
        n === maxN
          ? async () => {
              withFanout.push(await otherRequests());
            }
          : undefined;
      ferry.push(await measure(o, n, o.ferry, ferryTarget(o.ferry), ferryWrite, rest));
      if (o.ferryB && o.crossNs.includes(n))
        cross.push(await measure(o, n, o.ferryB, ferryTarget(o.ferryB), ferryWrite));
      const f = ferry.at(-1);
      const b = bare.at(-1);
      o.log(
        `  fan-out N=${n} run ${r + 1}: bare p99 ${b?.p99.toFixed(1)} ms, ferry p99 ${f?.p99.toFixed(1)} ms` +
          ` (opened in ${((b?.openMs ?? 0) / 1000).toFixed(1)} / ${((f?.openMs ?? 0) / 1000).toFixed(1)} s)` +
          (f?.openFailed ? ` (ferry: ${f.openFailed} streams failed to open: ${f.firstError})` : "") +
          (cross.length ? `, cross-instance p99 ${cross.at(-1)?.p99.toFixed(1)} ms` : ""),
      );
    }
    const fig: FanoutFigure = {
      n,
      m: o.m,
      bare: side(bare),
      ferry: side(ferry),
      p99Ratio: pairRatio(
        ferry.map((x) => x.p99),
        bare.map((x) => x.p99),
      ),
      rssRatio: pairRatio(
        ferry.map((x) => x.rssPerSubBytes),
        bare.map((x) => x.rssPerSubBytes),
      ),
    };
    if (cross.length) {
      fig.crossInstance = {
        ...side(cross),
        p99Ratio: pairRatio(
          cross.map((x) => x.p99),
          bare.map((x) => x.p99),
        ),
      };
    }
    if (without.length) {
      fig.otherRequests = {
        ratePerS: OTHER_REQUESTS_PER_S,
        without: spread(without),
        with: spread(withFanout),
        ratio: pairRatio(withFanout, without),
      };
    }
    out.push(fig);
  }
  return out;
}
