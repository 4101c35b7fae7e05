import type { DbHandle } from "../../db/client.js";
import { AppError } from "../../lib/errors.js";

/**
 * Named prepared statements for the benchmarked secret paths (get by name, single delete). Planning
 * their joins costs more than executing them, so each is planned once per connection:
 * - PostgreSQL: node-postgres prepares a `{ name, text }` query once per pooled connection;
 * - PGlite (one session): `PREPARE name(types) AS …` once, then `EXECUTE name(<literals>)` over the
 *   simple protocol (one call into the engine). PGlite's query() cannot bind parameters to EXECUTE, so
 *   values are sent as quoted literals. Quoting is only safe with standard_conforming_strings on
 *   (checked once; otherwise plain parameterised queries are used) and for strings without NUL bytes
 *   (refused with a 400 before they reach SQL).
 */
export type Statement = { name: string; text: string; types: string[] };

export function literal(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  const s = typeof v === "string" ? v : JSON.stringify(v);
  if (s.includes("\u0000")) throw new AppError("BAD_REQUEST", "Request contains a NUL character");
  return `'${s.replaceAll("'", "''")}'`;
}

export function createPrepared(dbh: DbHandle) {
  const prepared = new Map<string, Promise<void>>();
  let literalsSafe: Promise<boolean> | undefined;

  const checkLiterals = () => {
    literalsSafe ??= dbh
      .query<{ standard_conforming_strings: string }>("SHOW standard_conforming_strings")
      .then((r) => r.rows[0]?.standard_conforming_strings === "on");
    return literalsSafe;
  };

  return async function run<T = Record<string, unknown>>(stmt: Statement, params: unknown[]): Promise<T[]> {
    const pool = dbh.pool;
    if (pool) {
      const res = await pool.query({ name: stmt.name, text: stmt.text, values: params as unknown[] });
      return res.rows as T[];
    }
    if (!(await checkLiterals())) return (await dbh.query<T>(stmt.text, params)).rows;
    const args = params.map(literal).join(", ");
    let ready = prepared.get(stmt.name);
    if (!ready) {
      ready = dbh.exec(`PREPARE ${stmt.name}(${stmt.types.join(", ")}) AS ${stmt.text}`);
      prepared.set(stmt.name, ready);
      ready.catch(() => prepared.delete(stmt.name));
    }
    await ready;
    return dbh.simple<T>(`EXECUTE ${stmt.name}(${args})`);
  };
}

export type Prepared = ReturnType<typeof createPrepared>;
