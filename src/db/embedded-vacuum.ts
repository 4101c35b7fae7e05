import type { Logger } from "pino";
import type { DbHandle } from "./client.js";

/**
 * Autovacuum for the embedded database. PGlite runs PostgreSQL as one single-user backend, which has
 * no autovacuum launcher: `SHOW autovacuum` says "on", yet no table is ever vacuumed or analysed.
 * Without this loop, the dead rows left by deletes and updates (secrets, sync statuses, pg-boss's job
 * tables) would pile up for ever, the planner would never see fresh statistics, and transaction ids
 * would never be frozen, so a busy instance would one day refuse writes to prevent wraparound.
 *
 * Each round applies PostgreSQL's own autovacuum rules, read from the server's own settings, and as
 * autovacuum does, decides the two steps separately:
 * - `VACUUM` when dead rows exceed `autovacuum_vacuum_threshold` + `_scale_factor` × rows, when rows
 *   inserted since the last vacuum exceed the `_insert_` threshold and scale factor (this freezes
 *   insert-only tables such as the audit log), or when the table's `relfrozenxid` is older than
 *   `autovacuum_freeze_max_age`;
 * - `ANALYZE` when rows changed since the last analyse exceed the `_analyze_` threshold and scale factor.
 *
 * PGlite runs on the event loop, so each step holds every request for as long as it runs. Steps are
 * therefore separate statements, one table at a time, with a turn of the event loop before each, and
 * only when due. (Migration 0005 keeps ANALYZE short by skipping statistics no query uses.)
 * PostgreSQL (DATABASE_URL) has its own autovacuum: there this loop never starts.
 */

export type VacuumAction = { table: string; action: "vacuum" | "analyze" };
type DueTable = { table: string; vacuum: boolean; analyze: boolean };

const setting = (name: string) => `current_setting('${name}')::float8`;
const rows = "greatest(c.reltuples, 0)";
const VACUUM_DUE = `(s.n_dead_tup > ${setting("autovacuum_vacuum_threshold")} + ${setting("autovacuum_vacuum_scale_factor")} * ${rows}
    OR s.n_ins_since_vacuum > ${setting("autovacuum_vacuum_insert_threshold")} + ${setting("autovacuum_vacuum_insert_scale_factor")} * ${rows}
    OR age(c.relfrozenxid) > ${setting("autovacuum_freeze_max_age")})`;
const ANALYZE_DUE = `s.n_mod_since_analyze > ${setting("autovacuum_analyze_threshold")} + ${setting("autovacuum_analyze_scale_factor")} * ${rows}`;

/** Ordinary tables (partitions included, partitioned parents not: they hold no rows) that are due. */
const DUE_TABLES = `SELECT format('%I.%I', s.schemaname, s.relname) AS "table", ${VACUUM_DUE} AS vacuum,
    ${ANALYZE_DUE} AS analyze
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE c.relkind = 'r' AND (${VACUUM_DUE} OR ${ANALYZE_DUE})
  ORDER BY 2 DESC, s.n_dead_tup DESC`;

const nextTurn = () => new Promise<void>((ok) => setImmediate(ok));

/**
 * One round: the due steps of every due table, one statement at a time. A step that fails (its table
 * dropped meanwhile, say) is logged and skipped; the round goes on. `shouldStop` is checked before each.
 */
export async function vacuumDueTables(
  dbh: DbHandle,
  log: Logger,
  shouldStop: () => boolean = () => false,
): Promise<VacuumAction[]> {
  const due = await dbh.query<DueTable>(DUE_TABLES);
  const steps: VacuumAction[] = due.rows.flatMap((t) => [
    ...(t.vacuum ? [{ table: t.table, action: "vacuum" as const }] : []),
    ...(t.analyze ? [{ table: t.table, action: "analyze" as const }] : []),
  ]);
  const done: VacuumAction[] = [];
  for (const step of steps) {
    if (shouldStop()) break;
    await nextTurn();
    const started = performance.now();
    try {
      await dbh.exec(`${step.action === "vacuum" ? "VACUUM" : "ANALYZE"} ${step.table}`);
      done.push(step);
      log.debug({ ...step, ms: Math.round(performance.now() - started) }, "embedded autovacuum");
    } catch (err) {
      log.warn({ err, ...step }, "embedded autovacuum step failed");
    }
  }
  return done;
}

export interface EmbeddedVacuum {
  /** Stops the loop; resolves once a round in progress has finished its current table. */
  stop(): Promise<void>;
}

/** Starts the loop on PGlite (a round every `intervalMs`; 0 turns it off). On PostgreSQL: a no-op. */
export function startEmbeddedVacuum(dbh: DbHandle, log: Logger, intervalMs: number): EmbeddedVacuum {
  if (dbh.kind !== "pglite" || intervalMs <= 0) return { stop: async () => {} };
  let stopped = false;
  let round: Promise<unknown> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      round = vacuumDueTables(dbh, log, () => stopped)
        .catch((err: unknown) => log.warn({ err }, "embedded autovacuum round failed"))
        .finally(() => {
          round = undefined;
          if (!stopped) schedule();
        });
    }, intervalMs);
    // Never the reason the process stays alive.
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
