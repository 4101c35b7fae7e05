import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import Fastify from "fastify";
import pg from "pg";

/**
 * Baseline for the secret API: a bare Fastify server doing ONE indexed statement per request on a table
 * shaped like Ferry's `secrets` (folder id + key, unique, a ~60-byte bytea value), with no auth, no
 * permission check, no encryption and no audit. It runs on the same database kind as Ferry in the same
 * benchmark: its own file-backed PGlite (BENCH_PGLITE_DIR), or its own table on the same PostgreSQL
 * server (BENCH_DATABASE_URL) through a pool of the same size as Ferry's.
 *
 *   GET    /bare/secrets/:name   SELECT … WHERE folder_id = $1 AND key = $2
 *   DELETE /bare/secrets/:name   DELETE … WHERE folder_id = $1 AND key = $2 RETURNING …
 *   POST   /bare/seed            {prefix, count}: (re)fills the table with `${prefix}${i}` rows
 */

type Query = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

const TABLE = "bench_baseline_secrets";
const FOLDER = "00000000-0000-4000-8000-000000000001";

async function openDb(): Promise<{ query: Query; close: () => Promise<void> }> {
  const url = process.env.BENCH_DATABASE_URL;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    return { query: (t, p) => pool.query(t, p), close: () => pool.end() };
  }
  const dir = join(process.env.BENCH_PGLITE_DIR ?? "./data/bench-baseline", "pglite");
  mkdirSync(dir, { recursive: true });
  const db = new PGlite(dir);
  await db.waitReady;
  return {
    query: (t, p) => db.query(t, p) as Promise<{ rows: Record<string, unknown>[] }>,
    close: () => db.close(),
  };
}

async function main() {
  const db = await openDb();
  await db.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    folder_id uuid NOT NULL,
    key text NOT NULL,
    version int NOT NULL DEFAULT 1,
    encrypted_value bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`);
  await db.query(`CREATE UNIQUE INDEX IF NOT EXISTS ${TABLE}_key_uq ON ${TABLE} (folder_id, key)`);

  const app = Fastify({ logger: false });
  const row = (r: Record<string, unknown> | undefined) =>
    r && { id: r.id, key: r.key, version: r.version, value: (r.encrypted_value as Uint8Array).length };

  app.get<{ Params: { name: string } }>("/bare/secrets/:name", async (req, reply) => {
    const { rows } = await db.query(
      `SELECT id, key, version, encrypted_value FROM ${TABLE} WHERE folder_id = $1 AND key = $2`,
      [FOLDER, req.params.name],
    );
    return rows[0] ? { secret: row(rows[0]) } : reply.code(404).send({ message: "not found" });
  });

  app.delete<{ Params: { name: string } }>("/bare/secrets/:name", async (req, reply) => {
    const { rows } = await db.query(
      `DELETE FROM ${TABLE} WHERE folder_id = $1 AND key = $2 RETURNING id, key, version, encrypted_value`,
      [FOLDER, req.params.name],
    );
    return rows[0] ? { secret: row(rows[0]) } : reply.code(404).send({ message: "not found" });
  });

  app.post<{ Body: { prefix: string; count: number } }>("/bare/seed", async (req) => {
    const { prefix, count } = req.body;
    await db.query(`TRUNCATE ${TABLE}`);
    await db.query(
      `INSERT INTO ${TABLE} (folder_id, key, encrypted_value)
       SELECT $1, $2 || i, decode(md5(i::text) || md5((i + 1)::text) || md5((i + 2)::text) || md5((i + 3)::text), 'hex')
       FROM generate_series(0, $3::int - 1) AS i`,
      [FOLDER, prefix, count],
    );
    await db.query(`ANALYZE ${TABLE}`);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${TABLE}`);
    return { rows: rows[0]?.n };
  });

  app.get("/status", async () => ({ ok: true }));

  const stop = () => {
    app
      .close()
      .then(() => db.close())
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 0) });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
