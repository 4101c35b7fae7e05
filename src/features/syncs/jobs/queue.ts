import PgBoss from "pg-boss";
import type { Logger } from "pino";
import type { DbHandle } from "../../../db/client.js";
import type { SyncAction } from "../syncs-repo.js";

/**
 * The durable job queue: pg-boss 10 on the app's own database (PostgreSQL, or PGlite through pg-boss's
 * `db.executeSql` option). What we rely on it for:
 * - durability: jobs are rows, so they survive restarts;
 * - dead workers: a job left `active` past `expireInSeconds` is moved back to `retry` by pg-boss's
 *   maintenance and picked up again (on PGlite we also re-queue `active` jobs at boot, see `start`);
 * - coalescing: the queue's `short` policy keeps at most one QUEUED job per singleton key, so a burst
 *   of change notifications for one sync becomes one run (the debounce is the job's start delay).
 * Retries of destination failures are NOT pg-boss retries: the worker re-enqueues with its own backoff,
 * because only it knows `retryable`/`retryAfterMs`. pg-boss retries cover crashes only.
 */
export type SyncJob = {
  syncId: string;
  action: SyncAction;
  /** 1-based attempt number for destination-failure retries. */
  attempt: number;
  /** import: prioritize-source | prioritize-destination. */
  importBehavior?: string;
  /** remove: delete the sync row once removal succeeded (DELETE ?removeSecrets=true). */
  deleteSyncOnComplete?: boolean;
  /** Actor ({type,id,orgId,name}) whose permissions imports write with; absent for auto-syncs. */
  actor?: { type: "identity" | "user"; id: string; orgId: string; name: string };
};

export interface JobQueue {
  /** Returns the job id, or null when an identical job is already queued (coalesced). */
  enqueue(job: SyncJob, opts?: { delayMs?: number }): Promise<string | null>;
  start(handler: (job: SyncJob, jobId: string) => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

export const SYNC_QUEUE = "secret-sync";
const QUEUE = SYNC_QUEUE;

/** Keeps `p` in `set` until it settles, so a shutdown can wait for whatever is still running. */
async function tracked<T>(set: Set<Promise<unknown>>, p: Promise<T>): Promise<T> {
  set.add(p);
  try {
    return await p;
  } finally {
    set.delete(p);
  }
}

/**
 * pg-boss talks through `executeSql(text, values)`. PGlite's `query` runs one statement over the
 * extended protocol, so pg-boss's parameterless multi-statement scripts (schema creation, migrations)
 * must go through `exec` instead.
 *
 * Statements in flight are tracked so that `stop()` can wait for them: pg-boss completes or fails a job
 * without awaiting the statement (a floating promise), so one that reached a closed database would be
 * an unhandled rejection. Once the queue has stopped, a late statement (from a handler that outlived
 * the drain) is skipped and logged instead.
 */
function bossDb(dbh: DbHandle, log: Logger) {
  const inFlight = new Set<Promise<unknown>>();
  let closed = false;
  return {
    inFlight,
    close() {
      closed = true;
    },
    async executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> {
      if (closed) {
        log.warn({ statement: text.slice(0, 60) }, "job queue stopped; a late pg-boss statement was skipped");
        return { rows: [] };
      }
      return tracked(
        inFlight,
        (async () => {
          if (dbh.kind === "pglite" && (!values || values.length === 0) && /;\s*\S/.test(text)) {
            await dbh.exec(text);
            return { rows: [] };
          }
          return dbh.query(text, values ?? []);
        })(),
      );
    },
  };
}

/**
 * How long `stop()` waits for job handlers still running after pg-boss's own graceful stop (10 s). Runs
 * honour the shutdown signal, so this mostly covers a job fetched just as the workers stopped; the two
 * together stay inside main.ts's 20 s shutdown limit.
 */
const HANDLER_DRAIN_MS = 5_000;

export function createJobQueue(opts: {
  dbh: DbHandle;
  log: Logger;
  /** A run not finished after this long is presumed dead and retried (its sync lock stops overlap). */
  expireSeconds: number;
  concurrency: number;
  /** pg-boss's graceful stop: how long it waits for running jobs before failing them (min 1 s). */
  stopTimeoutMs?: number;
}): JobQueue {
  const { dbh, log } = opts;
  const db = bossDb(dbh, log);
  /** Job handlers running now: `stop()` waits for them before the database can close. */
  const running = new Set<Promise<unknown>>();
  const boss = new PgBoss({
    db,
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(opts.expireSeconds / 2))),
  });
  boss.on("error", (err) => log.warn({ err: err.message }, "job queue error"));
  let started: Promise<void> | undefined;
  let stopped = false;
  let workerIds: string[] = [];

  async function ready() {
    started ??= (async () => {
      await boss.start();
      await boss.createQueue(QUEUE, {
        name: QUEUE,
        policy: "short",
        retryLimit: 5,
        retryDelay: 1,
        retryBackoff: true,
        expireInSeconds: opts.expireSeconds,
      });
    })();
    await started;
  }

  return {
    async enqueue(job, o = {}) {
      if (stopped) throw new Error("the job queue has stopped");
      await ready();
      const key = `${job.action}:${job.syncId}`;
      return boss.send(QUEUE, job, {
        singletonKey: key,
        ...(o.delayMs ? { startAfter: new Date(Date.now() + o.delayMs) } : {}),
      });
    },
    async start(handler) {
      await ready();
      if (dbh.kind === "pglite") {
        // PGlite is single-process: nobody else can be running these, so jobs still `active` at boot
        // belong to a process that died. Hand them back now instead of waiting for expiry.
        await dbh.query(
          "UPDATE pgboss.job SET state = 'retry', start_after = now() WHERE name = $1 AND state = 'active'",
          [QUEUE],
        );
      }
      for (let i = 0; i < opts.concurrency; i++) {
        workerIds.push(
          await boss.work<SyncJob>(QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
            await tracked(
              running,
              (async () => {
                for (const j of jobs) await handler(j.data, j.id);
              })(),
            );
          }),
        );
      }
    },
    async stop() {
      stopped = true;
      if (!started) return;
      await started.catch(() => undefined);
      workerIds = [];
      await boss.stop({ graceful: true, wait: true, close: false, timeout: opts.stopTimeoutMs ?? 10_000 });
      // pg-boss stops waiting for running jobs after its timeout (and marks them failed), and a fetch
      // already in flight when its workers stopped still hands its job to a handler. Wait for those
      // handlers and for the statements they lead to (pg-boss does not await a job's completion),
      // until nothing is left or the drain time is up.
      const deadline = Date.now() + HANDLER_DRAIN_MS;
      for (;;) {
        await new Promise<void>((ok) => setImmediate(ok));
        const pending = [...running, ...db.inFlight];
        if (pending.length === 0) break;
        const left = deadline - Date.now();
        if (left <= 0) {
          log.warn({ running: running.size }, "job handlers still running after the queue stopped");
          break;
        }
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled(pending),
          new Promise<void>((ok) => {
            timer = setTimeout(ok, left);
          }),
        ]);
        clearTimeout(timer);
      }
      db.close();
    },
  };
}
