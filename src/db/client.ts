import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SQL } from "drizzle-orm";
import { drizzle as drizzlePg, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import pg from "pg";
import type { Logger } from "pino";
import { runMigrations } from "./migrate.js";
import { pgliteSimple } from "./pglite-simple.js";
import * as schema from "./schema/index.js";

/**
 * One Drizzle instance over either embedded PGlite (DATABASE_URL unset) or PostgreSQL through a `pg`
 * pool. Nothing outside this file knows which one is in use, except the raw `exec`/`query` helpers that
 * pg-boss and the migrator need. The drizzle-orm/pglite and node-postgres databases share the same query
 * builder API; we type both as NodePgDatabase (their `execute` results both carry `rows`).
 */
export type Db = NodePgDatabase<typeof schema>;
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type Executor = Db | Tx;

export interface DbHandle {
  db: Db;
  kind: "pglite" | "postgres";
  /** Raw parameterised query, for pg-boss and the migrator. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Several statements without parameters. */
  exec(text: string): Promise<void>;
  /**
   * One statement without parameters over the simple query protocol, returning its rows. On PGlite this
   * is one call into the engine instead of the five or six messages of the extended protocol that
   * `query()` sends, or the two of `exec()` (see pglite-simple.ts; it decodes only the column types the
   * hot statements return). The prepared hot paths use it for `EXECUTE name(<literals>)`.
   */
  simple<T = Record<string, unknown>>(text: string): Promise<T[]>;
  close(): Promise<void>;
  /** The pg pool (PostgreSQL only), for work that needs one session such as advisory locks. */
  pool?: pg.Pool;
}

export type DbOptions = { url?: string; dataDir?: string; memory?: boolean; log: Logger; poolSize?: number };

export async function createDb(opts: DbOptions): Promise<DbHandle> {
  const handle = opts.url
    ? createPostgres(opts.url, opts.poolSize ?? 10, opts.log)
    : await createPglite(opts);
  await runMigrations(handle, opts.log);
  return handle;
}

function createPostgres(url: string, max: number, log: Logger): DbHandle {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 });
  // An idle client that loses its server (e.g. PostgreSQL restarts) emits here; without a listener the
  // process would crash. The pool drops the client and reconnects on the next checkout.
  pool.on("error", (err) => log.warn({ err: err.message }, "postgres idle client error"));
  // A CHECKED-OUT client has no pool listener: if the server goes away while it sits between queries
  // (inside a transaction, or holding a sync's advisory locks) its 'error' event would be unhandled and
  // crash the process. This listener keeps it an ordinary failure: the next query on that client
  // rejects, and the pool discards it on release because it is no longer queryable.
  pool.on("connect", (client) =>
    client.on("error", (err) => log.warn({ err: err.message }, "postgres connection lost")),
  );
  const db = drizzlePg(pool, { schema });
  return {
    db,
    kind: "postgres",
    pool,
    query: async (text, params) => pool.query(text, params as unknown[]) as never,
    exec: async (text) => {
      await pool.query(text);
    },
    simple: async (text) => (await pool.query(text)).rows,
    close: () => pool.end(),
  };
}

async function createPglite(opts: DbOptions): Promise<DbHandle> {
  let dataDir: string | undefined;
  if (!opts.memory) {
    dataDir = join(opts.dataDir ?? "./data", "pglite");
    mkdirSync(dataDir, { recursive: true });
  }
  const client = new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return {
    db,
    kind: "pglite",
    query: async (text, params) => client.query(text, params as unknown[]) as never,
    exec: async (text) => {
      await client.exec(text);
    },
    simple: (text) => pgliteSimple(client, text),
    close: () => client.close(),
  };
}

/** Rows of `ex.execute(sql)` on either driver (both results carry `rows`). */
export async function rowsOf<T>(q: SQL, ex: Executor): Promise<T[]> {
  return ((await ex.execute(q)) as unknown as { rows: T[] }).rows;
}

// Node socket errors and PostgreSQL SQLSTATEs meaning "the database is not reachable right now"
// (class 08 connection exceptions; 57P01-03 shutdown/starting up), as opposed to a bad query.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01",
  "57P02",
  "57P03",
]);
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Client was closed|Cannot use a pool after calling end/i;

/**
 * True when an error (or any error in its `cause` chain: Drizzle wraps driver errors) means PostgreSQL
 * could not be reached. The error handler answers these with 503 instead of a generic 500, so clients
 * know to retry.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (UNREACHABLE_CODES.has(code) || code.startsWith("08"))) return true;
    if (typeof message === "string" && UNREACHABLE_MESSAGE.test(message)) return true;
    e = cause;
  }
  return false;
}
