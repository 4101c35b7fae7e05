import type { World } from "../lib/ferry.js";
import { api } from "../lib/ferry.js";
import type { ServerChild, Worker } from "../lib/procs.js";
import { pairRatio, type Spread, spread } from "../lib/stats.js";
import type { LoadJob, LoadResult } from "../workers/load-worker.js";

/**
 * Secret API: `GET /api/v3/secrets/raw/{name}` and `DELETE /api/v4/secrets/{name}` through the whole
 * stack (token check, permission, decryption, audit, change notification) against the bare baseline's
 * one indexed SELECT / DELETE … RETURNING, interleaved run by run: bare, Ferry, bare, Ferry…
 *
 * Reads cycle over live names. Deletes consume names: Ferry's live list shrinks as it goes, and before
 * every bare delete run the baseline table is refilled to exactly Ferry's current size.
 */

export interface Side {
  rps: Spread;
  p50: Spread;
  p99: Spread;
  /** p99 with each connection's first request included (it also waited for the accept). */
  p99WithConnect: Spread;
  errors: number;
  runs: LoadResult[];
}

export interface ApiFigure {
  op: "get" | "delete";
  connections: number;
  ferry: Side;
  bare: Side;
  /** Ferry req/s ÷ bare req/s, run by run. */
  ratio: Spread;
  /** Ferry p99 ÷ bare p99, run by run. */
  p99Ratio: Spread;
  tableSize: number;
}

export interface ApiOptions {
  world: World;
  ferry: ServerChild;
  bare: ServerChild;
  load: Worker;
  /** Live secret names in dev "/", all of the same shape as the bare table's. */
  names: string[];
  prefix: string;
  reps: number;
  durationS: number;
  connections: number[];
  log: (s: string) => void;
  /**
   * Creates `count` more live names (same shape, same folder) and returns them. Deletes consume names,
   * and a run bounded by its names instead of its duration measured little more than connection
   * set-up: before the delete phase the list is topped up to DELETE_NAMES_PER_S per run-second.
   */
  seedNames?: (count: number) => Promise<string[]>;
  /** With --profile: wraps the last Ferry run of each phase (op × connections), so seeding stays out. */
  profiled?: <T>(name: string, fn: () => Promise<T>) => Promise<T>;
  /** Before every run (bare and Ferry alike): a PostgreSQL CHECKPOINT (see ScratchDb.checkpoint). */
  settle?: () => Promise<void>;
}

/**
 * Names seeded per second of measured delete run, shared out evenly among the runs still to come. It is
 * above Ferry's c=10 delete rate but below its c=50 rate, so Ferry's c=50 runs use up their share early
 * (3.2–3.4 s of 5 on PostgreSQL, ~4.3 s on PGlite, 2026-11-23); their rate is still taken from the start
 * to the last response.
 */
const DELETE_NAMES_PER_S = 4_000;

/** `push(...items)` passes every item as an argument: a full run's 200,000 names overflow the stack. */
function append<T>(to: T[], items: readonly T[]): void {
  for (const x of items) to.push(x);
}

function side(runs: LoadResult[]): Side {
  return {
    rps: spread(runs.map((r) => r.rps)),
    p50: spread(runs.map((r) => r.p50)),
    p99: spread(runs.map((r) => r.p99)),
    p99WithConnect: spread(runs.map((r) => r.p99WithConnect)),
    errors: runs.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
    runs,
  };
}

export async function secretApiSuite(o: ApiOptions): Promise<ApiFigure[]> {
  const { world: w } = o;
  const live = [...o.names];
  const out: ApiFigure[] = [];
  const reseedBare = async (count: number) => {
    await api(o.bare.url, "POST", "/bare/seed", { prefix: o.prefix, count });
  };
  const bareNames = (count: number) => Array.from({ length: count }, (_, i) => `${o.prefix}${i}`);
  const run = async (job: Omit<LoadJob, "durationS">, durationS = o.durationS) => {
    await o.settle?.();
    return o.load.call<LoadResult>({ cmd: "run", job: { ...job, durationS } });
  };
  const ferryRun = (phase: string, r: number, job: Omit<LoadJob, "durationS">) =>
    o.profiled && r === o.reps - 1 ? o.profiled(`api-${phase}`, () => run(job)) : run(job);
  // Unmeasured first runs: JIT, connection pools and database caches warm up on both sides alike.
  const warmS = Math.max(0.5, o.durationS / 2);
  /**
   * Reads cycle over live names, so their warm-up costs no names: it runs until the JIT has settled.
   * With the delete's warm-up length (0.6 s in --quick), Ferry's first measured read run was the slowest
   * of the phase in every run on record (its server CPU per read still falling from ~170 to ~110 µs).
   */
  const readWarmS = Math.max(2, warmS);
  const query = `workspaceId=${w.projectId}&environment=dev&secretPath=%2F`;
  const auth = { authorization: `Bearer ${w.token}` };

  // Reads first, on the full table.
  await reseedBare(live.length);
  const bareGet = bareNames(live.length).map((n) => `/bare/secrets/${n}`);
  const ferryGet = live.map((n) => `/api/v3/secrets/raw/${encodeURIComponent(n)}?${query}`);
  await run({ url: o.bare.url, method: "GET", connections: 10, cycle: true, paths: bareGet }, readWarmS);
  await run(
    { url: w.base, method: "GET", headers: auth, connections: 10, cycle: true, paths: ferryGet },
    readWarmS,
  );
  for (const c of o.connections) {
    const ferry: LoadResult[] = [];
    const bare: LoadResult[] = [];
    for (let r = 0; r < o.reps; r++) {
      bare.push(
        await run({
          url: o.bare.url,
          method: "GET",
          connections: c,
          cycle: true,
          paths: bareGet,
        }),
      );
      ferry.push(
        await ferryRun(`get-c${c}`, r, {
          url: w.base,
          method: "GET",
          headers: auth,
          connections: c,
          cycle: true,
          paths: ferryGet,
        }),
      );
      o.log(
        `  get c=${c} run ${r + 1}: bare ${bare.at(-1)?.rps.toFixed(0)} req/s, ferry ${ferry.at(-1)?.rps.toFixed(0)} req/s`,
      );
    }
    out.push(figure("get", c, ferry, bare, live.length));
  }

  // Deletes: every Ferry run gets an equal share of the names left (after a warm-up share).
  const deleteRuns = o.connections.length * o.reps;
  const warmNames = Math.ceil(warmS * DELETE_NAMES_PER_S);
  const needed = Math.ceil(deleteRuns * o.durationS * DELETE_NAMES_PER_S) + warmNames;
  if (o.seedNames && live.length < needed) append(live, await o.seedNames(needed - live.length));
  const delBody = JSON.stringify({ projectId: w.projectId, environment: "dev", secretPath: "/" });
  const delHeaders = { ...auth, "content-type": "application/json" };
  const ferryDel = (names: string[]) => names.map((n) => `/api/v4/secrets/${encodeURIComponent(n)}`);
  await reseedBare(live.length);
  await run(
    {
      url: o.bare.url,
      method: "DELETE",
      connections: 10,
      cycle: false,
      paths: bareNames(live.length).map((n) => `/bare/secrets/${n}`),
    },
    warmS,
  );
  // The bare warm-up deletes for warmS from a full table (thousands of rows); Ferry's must be as long
  // for the JIT too: with 300 names every first measured Ferry run still ran partly unoptimised code.
  const warmBatch = live.splice(live.length - Math.min(warmNames, Math.floor(live.length / 8)));
  const warm = await run(
    {
      url: w.base,
      method: "DELETE",
      headers: delHeaders,
      body: delBody,
      connections: 10,
      cycle: false,
      paths: ferryDel(warmBatch),
    },
    warmS,
  );
  append(live, warmBatch.slice(warm.issued));
  let runsLeft = deleteRuns;
  for (const c of o.connections) {
    const ferry: LoadResult[] = [];
    const bare: LoadResult[] = [];
    const size = live.length;
    for (let r = 0; r < o.reps; r++) {
      await reseedBare(live.length);
      bare.push(
        await run({
          url: o.bare.url,
          method: "DELETE",
          connections: c,
          cycle: false,
          paths: bareNames(live.length).map((n) => `/bare/secrets/${n}`),
        }),
      );
      const share = Math.floor(live.length / runsLeft);
      runsLeft--;
      const batch = live.splice(live.length - share, share);
      const res = await ferryRun(`delete-c${c}`, r, {
        url: w.base,
        method: "DELETE",
        headers: delHeaders,
        body: delBody,
        connections: c,
        cycle: false,
        paths: ferryDel(batch),
      });
      ferry.push(res);
      // Names handed out but never answered may or may not be gone: they are not reused either way.
      append(live, batch.slice(res.issued));
      o.log(
        `  delete c=${c} run ${r + 1}: bare ${bare.at(-1)?.rps.toFixed(0)} req/s, ferry ${res.rps.toFixed(0)} req/s`,
      );
    }
    out.push(figure("delete", c, ferry, bare, size));
  }
  return out;
}

function figure(
  op: "get" | "delete",
  c: number,
  ferry: LoadResult[],
  bare: LoadResult[],
  size: number,
): ApiFigure {
  return {
    op,
    connections: c,
    ferry: side(ferry),
    bare: side(bare),
    ratio: pairRatio(
      ferry.map((r) => r.rps),
      bare.map((r) => r.rps),
    ),
    p99Ratio: pairRatio(
      ferry.map((r) => r.p99),
      bare.map((r) => r.p99),
    ),
    tableSize: size,
  };
}
