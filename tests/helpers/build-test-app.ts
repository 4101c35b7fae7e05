import { randomBytes } from "node:crypto";
import pg from "pg";
import pino, { type Logger } from "pino";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

/**
 * buildApp() for tests. Storage is an in-memory PGlite, or, when TEST_DATABASE_URL is set (CI does),
 * a fresh PostgreSQL database created for this app and dropped on close. Redis is used only when
 * `env.REDIS_URL` is passed explicitly.
 */
export type TestApp = Awaited<ReturnType<typeof buildApp>> & { dbUrl?: string };

export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const base = process.env.TEST_DATABASE_URL;
  if (!base) return undefined;
  const name = `ferry_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export function testEnv(env: Record<string, string> = {}) {
  return {
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    AUTH_SECRET: randomBytes(32).toString("hex"),
    ALLOW_INTERNAL_DESTINATIONS: "true",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    ...env,
  };
}

export async function buildTestApp(
  opts: { env?: Record<string, string>; logger?: Logger; dbUrl?: string } = {},
): Promise<TestApp> {
  const created = opts.dbUrl ? undefined : await createTestDatabase();
  const dbUrl = opts.dbUrl ?? created?.url;
  const config = loadConfig(testEnv({ ...(dbUrl ? { DATABASE_URL: dbUrl } : {}), ...opts.env }));
  const built = await buildApp(config, { memoryDb: true, logger: opts.logger ?? pino({ level: "silent" }) });
  await built.app.ready();
  const close = async () => {
    await built.close();
    await created?.drop();
  };
  return { ...built, close, dbUrl };
}
