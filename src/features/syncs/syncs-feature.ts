import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { DbHandle } from "../../db/client.js";
import { secretSyncs } from "../../db/schema/index.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { createConnectionsService } from "../app-connections/connections-service.js";
import type { AuditLog } from "../audit/audit.js";
import type { ChangeBus } from "../events/change-bus.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import type { SecretsService } from "../secrets/secrets-service.js";
import { createJobQueue, type JobQueue, SYNC_QUEUE } from "./jobs/queue.js";
import { createStaleStatusSweep } from "./stale-sweep.js";
import { createSyncLocks } from "./sync-locks.js";
import { createSyncRunner } from "./sync-runner.js";
import { createSyncWorker } from "./sync-worker.js";
import { createSyncsRepo } from "./syncs-repo.js";
import { createSyncsService } from "./syncs-service.js";

/** A presumed-dead run is retried after this long (its sync lock prevents any overlap meanwhile). */
const JOB_EXPIRE_SECONDS = 15 * 60;
const WORKERS = 4;

/**
 * Wires app connections and secret syncs for app.ts. The queue's workers start lazily: at boot only
 * when syncs exist (so jobs left by a crashed process resume), otherwise on the first enqueue, so apps
 * without syncs never pay for pg-boss.
 */
export async function createSyncsFeature(deps: {
  config: Config;
  log: Logger;
  dbh: DbHandle;
  keyring: Keyring;
  audit: AuditLog;
  permissions: PermissionsService;
  changes: ChangeBus;
  secrets: SecretsService;
}) {
  const { config, dbh } = deps;
  const log = deps.log.child({ feature: "secret-syncs" });
  const db = dbh.db;
  const connections = createConnectionsService({ db, keyring: deps.keyring, audit: deps.audit, config, log });
  const repo = createSyncsRepo(db);
  const raw = createJobQueue({ dbh, log, expireSeconds: JOB_EXPIRE_SECONDS, concurrency: WORKERS });
  const locks = createSyncLocks(dbh, config.SYNC_CONCURRENCY_PER_CONNECTION);
  const staleSweep = createStaleStatusSweep({ dbh, log, queue: SYNC_QUEUE });
  staleSweep.start();
  const runner = createSyncRunner({
    db,
    keyring: deps.keyring,
    config,
    log,
    connections,
    secrets: deps.secrets,
  });

  let working: Promise<void> | undefined;
  const ensureWorking = () => {
    working ??= raw.start((job, id) => worker.handle(job, id));
    return working;
  };
  const queue: JobQueue = {
    async enqueue(job, o) {
      await ensureWorking();
      return raw.enqueue(job, o);
    },
    start: raw.start,
    stop: raw.stop,
  };
  const worker = createSyncWorker({ repo, queue, locks, runner, log });
  const syncs = createSyncsService({
    db,
    repo,
    queue,
    locks,
    runner,
    connections,
    permissions: deps.permissions,
    audit: deps.audit,
    changes: deps.changes,
    log,
  });
  const unsubscribe = syncs.onChange();
  const [anySync] = await db.select({ id: secretSyncs.id }).from(secretSyncs).limit(1);
  if (anySync) await ensureWorking();

  return {
    connections,
    syncs,
    staleSweep,
    async close() {
      staleSweep.stop();
      await unsubscribe();
      worker.stop();
      if (working) await working.catch(() => undefined);
      await raw.stop();
    },
  };
}
