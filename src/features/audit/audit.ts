import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import type { DbHandle, Executor } from "../../db/client.js";
import { auditLogs } from "../../db/schema/index.js";
import type { Actor } from "../auth/actor.js";

/**
 * The audit log. Never holds a secret value: only ids, names and keys.
 *
 * - Mutations: `record(entry, tx)` inserts in the caller's transaction, so a change without its record
 *   cannot exist. Hot paths fold the insert into their own statement with `auditInsertSql` (a CTE),
 *   which costs no extra round trip.
 * - Reads and logins: `recordLater(entry)` queues in memory (stamped with the time of the read) and a
 *   writer flushes every second (or every FLUSH_ROWS entries) in one INSERT … SELECT FROM
 *   json_to_recordset($1): one parameter whatever the batch size, so building and sending a batch stays
 *   off the request path's CPU budget. A crash can lose at most the last second of read/login records.
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

/**
 * A batch is ONE json parameter (an array of records), expanded by json_to_recordset: the statement
 * text does not grow with the batch. (Array parameters, one per column, were escaped element by element
 * by node-postgres: on the bench's cached read that was the largest allocation after the request
 * logger.) Each record is serialised when it is queued, so a flush only joins strings: serialising a
 * 1,000-record batch at once held the event loop for ~3 ms, and queued strings cost the garbage
 * collector less than queued objects.
 */
const FLUSH_SQL = `INSERT INTO audit_logs (org_id, project_id, actor_type, actor_id, actor_name, event_type, resource, ip, user_agent, outcome, created_at)
  SELECT org_id, project_id, actor_type, actor_id, actor_name, event_type, coalesce(resource, '{}'), ip, user_agent, outcome, created_at
  FROM json_to_recordset($1::json)
    AS t(org_id uuid, project_id uuid, actor_type text, actor_id text, actor_name text, event_type text, resource jsonb, ip text, user_agent text, outcome text, created_at timestamptz)`;

/**
 * A read record as one JSON object keyed by its column names (the json_to_recordset layout), stamped
 * when read. PostgreSQL text cannot hold NUL, so a NUL that slipped into a name or header is dropped
 * here rather than failing the whole batch (over and over, on each retry).
 */
function queued(e: AuditEntry): string {
  const r = toRow(e);
  const record = {
    org_id: r.orgId,
    project_id: r.projectId,
    actor_type: r.actorType,
    actor_id: r.actorId,
    actor_name: r.actorName,
    event_type: r.eventType,
    resource: r.resource,
    ip: r.ip,
    user_agent: r.userAgent,
    outcome: r.outcome,
    created_at: new Date(),
  };
  const json = JSON.stringify(record);
  if (!json.includes("\\u0000")) return json;
  return JSON.stringify(record, (_k, v: unknown) => (typeof v === "string" ? v.replaceAll("\0", "") : v));
}

/**
 * Queued records that trigger a flush before the timer.
 * - Embedded PGlite: the INSERT runs on the event loop, so the batch size is the longest stall a flush
 *   causes: 500-row batches made the read p99 at 10 connections 16 ms (p50 3 ms); 100-row batches,
 *   10 ms, at the same throughput.
 * - PostgreSQL: the INSERT runs in the server, and each flush is a statement and a commit competing with
 *   the requests for the same cores: on the bench's cached read at 10 connections (~6,000 reads/s),
 *   100-row batches held Ferry at ~0.60 of the bare SELECT's rate, 1,000-row batches at 0.65–0.69.
 * Either way the timer still writes whatever is queued every second.
 */
export const FLUSH_ROWS = { pglite: 100, postgres: 1_000 } as const;

export function createAuditLog(
  dbh: Pick<DbHandle, "query">,
  log: Logger,
  flushMs = 1000,
  flushRows: number = FLUSH_ROWS.pglite,
): AuditLog {
  let queue: string[] = [];
  let flushing: Promise<void> | null = null;

  const flush = async (): Promise<void> => {
    if (flushing) await flushing;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    flushing = dbh
      .query(FLUSH_SQL, [`[${batch.join(",")}]`])
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
      queue.push(queued(e));
      if (queue.length >= flushRows) void flush();
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
