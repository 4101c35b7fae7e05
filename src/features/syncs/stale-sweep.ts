import type { Logger } from "pino";
import type { DbHandle } from "../../db/client.js";

/**
 * No status stays `pending` or `running` forever. pg-boss hands an expired job back for retry, but once
 * its retry limit is spent (or the job is deleted) nothing would update the sync row. This sweep finds
 * statuses that claim work in progress while no live job (created, retry or active) exists for that
 * sync and action, and marks them `failed` with a readable message. A status must be seen stuck on two
 * consecutive sweeps before it is failed, so the short window between setting `pending` and inserting
 * the job is never mistaken for a lost job.
 */
const ACTIONS = ["sync", "import", "remove"] as const;
export const LOST_JOB_MESSAGE =
  "The job for this run was lost (its worker stopped and its retries ran out). Trigger the run again.";

export function createStaleStatusSweep(deps: {
  dbh: DbHandle;
  log: Logger;
  queue: string;
  intervalMs?: number;
}) {
  const { dbh, log } = deps;
  let suspects = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  async function sweep(): Promise<number> {
    let rows: { id: string; action: string }[];
    try {
      ({ rows } = await dbh.query<{ id: string; action: string }>(
        `SELECT s.id, a.action FROM secret_syncs s
         CROSS JOIN LATERAL (VALUES ('sync', s.sync_status), ('import', s.import_status), ('remove', s.remove_status)) AS a(action, status)
         WHERE a.status IN ('pending', 'running')
           AND NOT EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = $1 AND j.singleton_key = a.action || ':' || s.id
                           AND j.state IN ('created', 'retry', 'active'))`,
        [deps.queue],
      ));
    } catch (err) {
      // The queue's schema does not exist until the first job: nothing can be stuck yet.
      if ((err as { code?: string }).code === "42P01") return 0;
      throw err;
    }
    const seen = new Set(rows.map((r) => `${r.action}:${r.id}`));
    const confirmed = rows.filter((r) => suspects.has(`${r.action}:${r.id}`));
    suspects = seen;
    for (const r of confirmed) {
      const action = ACTIONS.find((a) => a === r.action);
      if (!action) continue;
      await dbh.query(
        `UPDATE secret_syncs SET ${action}_status = 'failed', last_${action}_message = $2
         WHERE id = $1 AND ${action}_status IN ('pending', 'running')`,
        [r.id, LOST_JOB_MESSAGE],
      );
      log.warn({ syncId: r.id, action }, "sync status had no live job; marked failed");
    }
    return confirmed.length;
  }

  return {
    sweep,
    start() {
      timer ??= setInterval(() => {
        sweep().catch((err: unknown) => log.warn({ err }, "stale sync status sweep failed"));
      }, deps.intervalMs ?? 60_000);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
