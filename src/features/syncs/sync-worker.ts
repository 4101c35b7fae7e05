import type { Logger } from "pino";
import { type DestinationError, isDestinationError, scrub } from "../../destinations/errors.js";
import { AppError } from "../../lib/errors.js";
import type { JobQueue, SyncJob } from "./jobs/queue.js";
import { truncateMessage } from "./sync-engine.js";
import type { SyncLocks } from "./sync-locks.js";
import type { SyncRunner } from "./sync-runner.js";
import type { SyncsRepo, SyncWithJoins } from "./syncs-repo.js";

/**
 * The job handler: load → lock → `running` → run → `succeeded` | retry with backoff | `failed`.
 *
 * - Retryable DestinationErrors (429, 5xx, timeouts, network) are re-enqueued as a new job after
 *   max(retryAfterMs, BASE·2^(attempt−1)), up to MAX_ATTEMPTS; the row stays `running` in between, as
 *   in Infisical. Anything else is final at once: a 401 costs exactly one attempt.
 * - A sync that is already running (here or on another instance) or whose connection is at its cap is
 *   re-enqueued after a short jittered delay, at most LOCK_WAITS times.
 * - A job whose sync was deleted is dropped silently (no retry storm after deletes).
 * - On shutdown the in-flight run is aborted and the job is handed back to pg-boss (thrown), so the
 *   next start retries it instead of recording a failure nobody caused.
 */
export const MAX_ATTEMPTS = 5;
const BASE_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
const LOCK_WAITS = 120;
export const BUSY_MESSAGE =
  "Failed to run job. This typically happens when a sync is already in progress. Please try again.";

type Job = SyncJob & { lockWaits?: number };

export function createSyncWorker(deps: {
  repo: SyncsRepo;
  queue: JobQueue;
  locks: SyncLocks;
  runner: SyncRunner;
  log: Logger;
}) {
  const { repo, queue, locks, runner, log } = deps;
  const stopping = new AbortController();

  function messageOf(err: unknown, sensitive: string[]): string {
    if (isDestinationError(err)) {
      const msg = scrub(err.message, sensitive);
      return truncateMessage(
        err.secretKey ? JSON.stringify({ secretKey: err.secretKey, message: msg }) : msg,
      );
    }
    if (err instanceof AppError) return truncateMessage(scrub(err.message, sensitive));
    log.error({ err }, "secret sync failed unexpectedly");
    return "An unknown error occurred.";
  }

  async function runOnce(sync: SyncWithJoins, job: Job, sink: string[]) {
    switch (job.action) {
      case "sync":
        return runner.sync(sync, job, stopping.signal, sink);
      case "import":
        return runner.import(sync, job, stopping.signal, sink);
      case "remove":
        return runner.remove(sync, stopping.signal, sink);
      default: {
        const never: never = job.action;
        throw new Error(`unknown action ${String(never)}`);
      }
    }
  }

  async function handle(job: Job, jobId: string): Promise<void> {
    const found = await repo.findById(job.syncId);
    if (!found) return;
    const lease = await locks.acquire(found.id, found.connectionId);
    if (lease === "sync-busy" || lease === "connection-busy") {
      const waits = (job.lockWaits ?? 0) + 1;
      if (waits > LOCK_WAITS) {
        await repo.setStatus([found.id], job.action, { status: "failed", jobId, message: BUSY_MESSAGE });
        return;
      }
      await queue.enqueue({ ...job, lockWaits: waits } as SyncJob, {
        delayMs: 1_000 + Math.random() * 2_000,
      });
      return;
    }
    // Re-read under the lock: the previous run may have changed the ownership state meanwhile.
    const sync = await repo.findById(job.syncId);
    if (!sync) {
      await lease.release();
      return;
    }
    const sensitive: string[] = [];
    try {
      await repo.setStatus([sync.id], job.action, { status: "running", jobId });
      const result = await runOnce(sync, job, sensitive);
      const now = new Date();
      if (job.action === "remove" && job.deleteSyncOnComplete) {
        await repo.remove(sync.id);
        return;
      }
      await repo.update(sync.id, {
        ...(result.ownedKeys ? { ownedKeys: result.ownedKeys } : {}),
        ...(result.keyFingerprints ? { keyFingerprints: result.keyFingerprints } : {}),
      });
      await repo.setStatus([sync.id], job.action, { status: "succeeded", jobId, message: null, at: now });
      log.info({ syncId: sync.id, action: job.action, attempt: job.attempt }, "secret sync job succeeded");
    } catch (err) {
      if (stopping.signal.aborted) throw err; // shutdown: pg-boss hands the job back on the next start
      const retryable = isDestinationError(err) && err.retryable;
      if (retryable && job.attempt < MAX_ATTEMPTS) {
        const backoff = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (job.attempt - 1));
        const delayMs = Math.max(backoff, (err as DestinationError).retryAfterMs ?? 0);
        log.warn(
          { syncId: sync.id, attempt: job.attempt, delayMs, code: (err as DestinationError).code },
          "secret sync retrying",
        );
        await queue.enqueue({ ...job, attempt: job.attempt + 1, lockWaits: 0 } as SyncJob, { delayMs });
        return;
      }
      const message = messageOf(err, sensitive);
      await repo.setStatus([sync.id], job.action, { status: "failed", jobId, message });
      log.warn({ syncId: sync.id, action: job.action, attempt: job.attempt }, "secret sync job failed");
    } finally {
      await lease.release();
    }
  }

  return {
    handle,
    /** Aborts in-flight runs (call before stopping the queue). */
    stop() {
      stopping.abort();
    },
  };
}

export type SyncWorker = ReturnType<typeof createSyncWorker>;
