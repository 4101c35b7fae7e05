import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  closeAgent,
  runSecrets,
  seedSecrets,
  setupWorld,
  startFerry,
  startNodeFlags,
  tempDir,
  type World,
} from "./lib/ferry.js";
import { startCpuProfile } from "./lib/inspector.js";
import { BENCH_DIR, type ServerChild, startServer, startWorker, type Worker } from "./lib/procs.js";
import { formatProfile, summarizeProfile } from "./lib/profile.js";
import { machine, markdown, type Results, targets } from "./lib/report.js";
import { createScratchDatabase, type ScratchDb } from "./lib/scratch-db.js";
import { fanoutSuite } from "./suites/fanout.js";
import { secretApiSuite } from "./suites/secret-api.js";
import { type Fakes, startFakes, syncSuite } from "./suites/sync.js";

/**
 * `npm run bench [-- --quick] [--only api,fanout,sync] [--profile] [--no-save] [--secrets N] [--n N1,N2]`
 *
 * Measures Ferry (a real `src/main.ts` child) against bare baselines started beside it in the same run,
 * on embedded PGlite, or on PostgreSQL/Redis when DATABASE_URL/REDIS_URL are set (a scratch database is
 * created on that server and dropped afterwards). Load and subscribers come from separate processes on
 * 127.0.0.1. Prints a markdown table on stdout (progress goes to stderr) and writes JSON with the
 * machine's details to bench/results/<date>-<db>.json.
 */

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    profile: { type: "boolean", default: false },
    "no-save": { type: "boolean", default: false },
    // Development knobs: a smaller source table, other subscriber counts.
    secrets: { type: "string" },
    n: { type: "string" },
  },
});

// --quick keeps every interleaved figure at 3 runs but runs the 10,000-secret syncs once: their call
// counts are deterministic, and one full SSM sync (10,000 PutParameter calls) takes tens of seconds.
const PROFILES = {
  quick: {
    reps: 3,
    durationS: 1.2,
    conns: [10, 50],
    secrets: 10_000,
    ns: [1_000, 10_000],
    m: 6,
    otherS: 2,
    crossNs: [1_000],
    syncReps: 1,
  },
  full: {
    reps: 5,
    durationS: 5,
    conns: [10, 50],
    secrets: 10_000,
    ns: [1_000, 10_000],
    m: 25,
    otherS: 5,
    crossNs: [1_000, 10_000],
    syncReps: 3,
  },
};
const P = { ...(args.quick ? PROFILES.quick : PROFILES.full) };
if (args.secrets) P.secrets = Number(args.secrets);
if (args.n) P.ns = args.n.split(",").map(Number);
const only = new Set((args.only ?? "sync,api,fanout").split(",").map((s) => s.trim()));
const t0 = Date.now();
/** Progress on stderr, each line stamped with the seconds since the start (where the time goes). */
const log = (s: string) =>
  process.stderr.write(
    `${s.includes("\n") ? s : `[${((Date.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${s}`}\n`,
  );
const PREFIX = "BENCH_";

async function main() {
  const dbUrl = process.env.DATABASE_URL || undefined;
  const redisUrl = process.env.REDIS_URL || undefined;
  const m = machine(
    dbUrl ? "postgres" : "pglite",
    Boolean(redisUrl),
    args.quick ? "quick" : "full",
    startNodeFlags(),
  );
  log(
    `ferry bench (${m.mode}): ${m.cpuModel}, ${m.cores} cores, db ${m.db}${redisUrl ? " + redis" : ""}, load ${m.loadAverageAtStart.join(" ")}`,
  );
  const skipped: string[] = [];
  const fdLimit = Number(m.fdLimit);
  const ns = P.ns.filter((n) => {
    // Each side (server and receivers) holds N sockets plus its own files.
    const ok = !Number.isFinite(fdLimit) || fdLimit >= n + 1_000;
    if (!ok)
      skipped.push(
        `fan-out N=${n}: open-file limit (ulimit -n) is ${fdLimit}, needs ≥ ${n + 1_000}; raise it with ulimit -n`,
      );
    return ok;
  });

  const cleanups: (() => Promise<void>)[] = [];
  // One cleanup, however many ask for it: a signal and the failure it causes both wait for the same one.
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      for (const c of cleanups.splice(0).reverse())
        await c().catch((e: unknown) => log(`cleanup: ${String(e)}`));
    })();
    return cleaning;
  };
  // Interrupted (Ctrl-C, or a timeout's SIGTERM): stop the children and drop the scratch database.
  process.once("SIGINT", () => {
    void cleanup().then(() => process.exit(130));
  });
  process.once("SIGTERM", () => {
    void cleanup().then(() => process.exit(143));
  });

  const results: Omit<Results, "targets"> = { machine: m, skipped };
  try {
    let scratch: ScratchDb | undefined;
    if (dbUrl) {
      scratch = await createScratchDatabase(dbUrl);
      cleanups.push(() => (scratch as ScratchDb).drop());
      log(`scratch database ${scratch.name}`);
    }
    const profDir = args.profile ? tempDir("ferry-bench-prof-") : undefined;
    const profiles: unknown[] = [];
    results.profiles = profiles;
    /** With --profile, Ferry's CPU profile over exactly this suite (the measured phase, not boot). */
    const profiled = async <T>(name: string, ferry: ServerChild, fn: () => Promise<T>): Promise<T> => {
      if (!profDir || !ferry.inspectPort) return fn();
      const stop = await startCpuProfile(ferry.inspectPort);
      try {
        return await fn();
      } finally {
        const file = join(profDir, `${name}-ferry.cpuprofile`);
        writeFileSync(file, JSON.stringify(await stop()));
        const summary = summarizeProfile(file);
        profiles.push(summary);
        log(formatProfile(summary));
      }
    };
    /** On PostgreSQL, a CHECKPOINT before each timed run, so that PostgreSQL's own never lands in one. */
    const settle = scratch ? () => (scratch as ScratchDb).checkpoint() : undefined;
    const secrets = await runSecrets();
    const fakes: Fakes = await startFakes();
    cleanups.push(() => fakes.close());
    const ferryDir = tempDir("ferry-bench-");
    cleanups.push(async () => rmSync(ferryDir, { recursive: true, force: true }));
    const extra = {
      AWS_ENDPOINT_URL: fakes.aws.url,
      AWS_ENDPOINT_URL_SSM: fakes.aws.url,
      AWS_ENDPOINT_URL_STS: fakes.aws.url,
    };
    const ferryEnv = { databaseUrl: scratch?.url, redisUrl, dataDir: join(ferryDir, "a"), extra };
    log("starting Ferry and the baselines…");
    // Each server that did start is stopped at the end even if another failed to: with Promise.all, a
    // failed start (a bad flag, a port taken) left the others running after the benchmark exited.
    const starting = await Promise.allSettled([
      startFerry("ferry", ferryEnv, secrets),
      startServer({
        name: "bare-api",
        script: join(BENCH_DIR, "servers/bare-api.ts"),
        readyPath: "/status",
        env: { BENCH_DATABASE_URL: scratch?.url, BENCH_PGLITE_DIR: join(ferryDir, "bare") },
      }),
      startServer({
        name: "bare-sse",
        script: join(BENCH_DIR, "servers/bare-sse.ts"),
        readyPath: "/status",
        env: {},
        inspect: true,
      }),
    ]);
    const servers = starting.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    cleanups.push(async () => void (await Promise.all(servers.map((s) => s.stop()))));
    for (const r of starting) if (r.status === "rejected") throw r.reason;
    const [ferry, bare, bareSse] = servers as [ServerChild, ServerChild, ServerChild];
    const load: Worker = startWorker(join(BENCH_DIR, "workers/load-worker.ts"));
    const receivers: Worker = startWorker(join(BENCH_DIR, "workers/sse-receivers.ts"));
    cleanups.push(async () => void (await Promise.all([load.stop(), receivers.stop()])));
    log(`  up after ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const world: World = await setupWorld(ferry.url);
    // Which features are registered in src/app.ts yet (404 = not there; any other answer = there).
    const probe = async (method: string, path: string) =>
      (await fetch(ferry.url + path, {
        method,
        headers: { authorization: `Bearer ${world.token}`, "content-type": "application/json" },
        body: method === "POST" ? "{}" : undefined,
      }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      })) !== 404;
    const hasSecrets = await probe("GET", `/api/v4/secrets?projectId=${world.projectId}&environment=dev`);
    const hasSyncs = await probe("GET", "/api/v1/secret-syncs/options");
    const hasEvents = await probe("POST", "/api/v1/events/subscribe/project-events");
    const names = Array.from({ length: P.secrets }, (_, i) => `${PREFIX}${i}`);
    const fanKeys = Array.from({ length: P.m }, (_, i) => `FAN_${i}`);
    if (!hasSecrets) {
      skipped.push("everything: the secrets routes are not registered in src/app.ts yet");
      only.clear();
    } else {
      const t = Date.now();
      await seedSecrets(world, "dev", "/", names, (n) => `value-of-${n}-${"x".repeat(16)}`, 1_000);
      await seedSecrets(world, "staging", "/", fanKeys, () => "v0");
      log(`  seeded ${names.length} secrets in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }

    if (only.has("sync")) {
      if (!hasSyncs) skipped.push("sync: the secret-sync routes are not registered yet");
      else {
        log("sync throughput…");
        results.sync = await profiled("sync", ferry, () =>
          syncSuite({
            world,
            fakes,
            secrets: names.length,
            changeName: names[0] as string,
            reps: P.syncReps,
            log,
          }),
        );
      }
    }
    if (only.has("api")) {
      log("secret API…");
      results.api = await secretApiSuite({
        world,
        ferry,
        bare,
        load,
        names,
        prefix: PREFIX,
        reps: P.reps,
        durationS: P.durationS,
        connections: P.conns,
        log,
        seedNames: async (count) => {
          const more = Array.from({ length: count }, (_, i) => `${PREFIX}${names.length + i}`);
          const t = Date.now();
          await seedSecrets(world, "dev", "/", more, (n) => `value-of-${n}-${"x".repeat(16)}`, 1_000);
          log(
            `  seeded ${count} more secrets for the delete runs in ${((Date.now() - t) / 1000).toFixed(1)} s`,
          );
          return more;
        },
        profiled: (name, fn) => profiled(name, ferry, fn),
        settle,
      });
    }
    if (only.has("fanout")) {
      if (!hasEvents) skipped.push("fan-out: the events route is not registered yet");
      else {
        let ferryB: ServerChild | undefined;
        if (redisUrl && scratch) {
          ferryB = await startFerry("ferry-b", { ...ferryEnv, dataDir: join(ferryDir, "b") }, secrets);
          servers.push(ferryB);
        } else if (redisUrl)
          skipped.push(
            "cross-instance fan-out: needs DATABASE_URL too (two instances cannot share one PGlite)",
          );
        else skipped.push("cross-instance fan-out: set REDIS_URL (and DATABASE_URL) to measure it");
        log("event fan-out…");
        results.fanout = await profiled("fanout", ferry, () =>
          fanoutSuite({
            world,
            ferry,
            ferryB,
            bareSse,
            receivers,
            load,
            ns,
            crossNs: P.crossNs,
            reps: P.reps,
            m: P.m,
            keys: fanKeys,
            otherDurationS: P.otherS,
            readName: names[names.length - 1] as string,
            log,
            settle,
          }),
        );
      }
    }
    await closeAgent();
    if (profDir) log(`CPU profiles (open in Chrome DevTools or speedscope): ${profDir}`);
  } finally {
    await cleanup();
  }

  const full: Results = { ...results, targets: targets(results) };
  const md = markdown(full);
  process.stdout.write(`${md}\n`);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (!args["no-save"]) {
    const dir = join(BENCH_DIR, "results");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${m.date.slice(0, 10)}-${m.db}${m.redis ? "-redis" : ""}.json`);
    writeFileSync(file, `${JSON.stringify({ ...full, markdown: md }, null, 2)}\n`);
    log(`results: ${file}`);
  }
}

main().catch((err: unknown) => {
  log(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
