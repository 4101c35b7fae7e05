import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import type { Db, Executor } from "../../db/client.js";
import { auditLogs } from "../../db/schema/index.js";
import type { Actor } from "../auth/actor.js";

/**
 * The audit log. Never holds a secret value: only ids, names and keys.
 *
 * - Mutations: `record(entry, tx)` inserts in the caller's transaction, so a change without its record
 *   cannot exist. Hot paths fold the insert into their own statement with `auditInsertSql` (a CTE),
 *   which costs no extra round trip.
 * - Reads and logins: `recordLater(entry)` queues in memory and a writer flushes every second (or every
 *   500 entries) in one multi-row INSERT. A crash can lose at most the last second of read/login records.
 */
export type AuditEntry = {
  eventType: string;
  actor: Pick<Actor, "type" | "id" | "name" | "orgId" | "ip" | "userAgent"> | null;
  orgId?: string | null;
  projectId?: string | null;
  resource?: Record<string, unknown>;
  outcome?: "success" | "failure";
};

export type AuditRow = typeof auditLogs.$inferInsert;

export function toRow(e: AuditEntry): AuditRow {
  return {
    orgId: e.orgId ?? e.actor?.orgId ?? null,
    projectId: e.projectId ?? null,
    actorType: e.actor?.type ?? "anonymous",
    actorId: e.actor?.id ?? null,
    actorName: e.actor?.name ?? null,
    eventType: e.eventType,
    resource: e.resource ?? {},
    ip: e.actor?.ip ?? null,
    userAgent: e.actor?.userAgent ?? null,
    outcome: e.outcome ?? "success",
  };
}

/**
 * A CTE-ready INSERT for folding the record into a data-changing statement, e.g.
 * `WITH d AS (DELETE … RETURNING …), a AS (${auditInsertSql(entry)}) SELECT * FROM d`.
 */
export function auditInsertSql(e: AuditEntry) {
  const r = toRow(e);
  return sql`INSERT INTO audit_logs (org_id, project_id, actor_type, actor_id, actor_name, event_type, resource, ip, user_agent, outcome)
    VALUES (${r.orgId}, ${r.projectId}, ${r.actorType}, ${r.actorId}, ${r.actorName}, ${r.eventType}, ${JSON.stringify(r.resource)}::jsonb, ${r.ip}, ${r.userAgent}, ${r.outcome})`;
}

export interface AuditLog {
  record(e: AuditEntry, tx: Executor): Promise<void>;
  recordLater(e: AuditEntry): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createAuditLog(db: Db, log: Logger, flushMs = 1000): AuditLog {
  let queue: AuditRow[] = [];
  let flushing: Promise<void> | null = null;

  const flush = async (): Promise<void> => {
    if (flushing) await flushing;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    flushing = db
      .insert(auditLogs)
      .values(batch)
      .then(() => undefined)
      .catch((err: Error) => {
        log.error({ err: err.message, lost: batch.length }, "audit flush failed; records re-queued");
        queue = batch.concat(queue).slice(-50_000);
      })
      .finally(() => {
        flushing = null;
      });
    await flushing;
  };

  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();

  return {
    async record(e, tx) {
      await tx.insert(auditLogs).values(toRow(e));
    },
    recordLater(e) {
      queue.push(toRow(e));
      if (queue.length >= 500) void flush();
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
