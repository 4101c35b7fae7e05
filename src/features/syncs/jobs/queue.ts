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

/**
 * pg-boss talks through `executeSql(text, values)`. PGlite's `query` runs one statement over the
 * extended protocol, so pg-boss's parameterless multi-statement scripts (schema creation, migrations)
 * must go through `exec` instead.
 */
function bossDb(dbh: DbHandle) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (dbh.kind === "pglite" && (!values || values.length === 0) && /;\s*\S/.test(text)) {
        await dbh.exec(text);
        return { rows: [] };
      }
      return dbh.query(text, values ?? []);
    },
  };
}

export function createJobQueue(opts: {
  dbh: DbHandle;
  log: Logger;
  /** A run not finished after this long is presumed dead and retried (its sync lock stops overlap). */
  expireSeconds: number;
  concurrency: number;
}): JobQueue {
  const { dbh, log } = opts;
  const boss = new PgBoss({
    db: bossDb(dbh),
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(opts.expireSeconds / 2))),
  });
  boss.on("error", (err) => log.warn({ err: err.message }, "job queue error"));
  let started: Promise<void> | undefined;
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
            for (const j of jobs) await handler(j.data, j.id);
          }),
        );
      }
    },
    async stop() {
      if (!started) return;
      await started.catch(() => undefined);
      workerIds = [];
      await boss.stop({ graceful: true, wait: true, close: false, timeout: 10_000 });
    },
  };
}
