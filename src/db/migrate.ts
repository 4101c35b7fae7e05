import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import type { DbHandle } from "./client.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
/** Arbitrary constant: the advisory lock id that serialises migrations across instances. */
const LOCK_ID = 727_001;

/**
 * Applies db/migrations/*.sql in name order, each in its own transaction, recording applied names.
 * On PostgreSQL the whole run holds a session advisory lock on a dedicated connection, so instances that
 * start together apply each migration exactly once. PGlite is single-process, so it needs no lock.
 */
export async function runMigrations(handle: DbHandle, log: Logger): Promise<void> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const apply = async (q: (text: string, params?: unknown[]) => Promise<{ rows: unknown[] }>) => {
    await q(
      "CREATE TABLE IF NOT EXISTS ferry_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set(
      ((await q("SELECT name FROM ferry_migrations")).rows as { name: string }[]).map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const text = readFileSync(join(MIGRATIONS_DIR, file), "utf8");
      await q("BEGIN");
      try {
        await q(text);
        await q("INSERT INTO ferry_migrations (name) VALUES ($1)", [file]);
        await q("COMMIT");
      } catch (err) {
        await q("ROLLBACK");
        throw new Error(`Migration ${file} failed: ${(err as Error).message}`);
      }
      log.info({ migration: file }, "migration applied");
    }
  };

  if (!handle.pool) {
    // PGlite is one process: no lock needed. Its query() takes one statement, so a multi-statement
    // migration file goes through exec().
    await apply(async (text, params) => {
      if (params || text.startsWith("SELECT")) return handle.query(text, params);
      await handle.exec(text);
      return { rows: [] };
    });
    return;
  }
  const pool = handle.pool;
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_ID]);
    await apply((text, params) => client.query(text, params as unknown[]));
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [LOCK_ID]).catch(() => undefined);
    client.release();
  }
}
