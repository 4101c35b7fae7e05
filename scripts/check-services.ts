import { Redis } from "ioredis";
import pg from "pg";

/**
 * CI guard: exits non-zero, with a one-line reason, unless TEST_DATABASE_URL and TEST_REDIS_URL point at
 * reachable services. CI must fail rather than silently skip the PostgreSQL and Redis tests.
 */
async function main() {
  const dbUrl = process.env.TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!dbUrl || !redisUrl) throw new Error("TEST_DATABASE_URL and TEST_REDIS_URL must both be set");
  const c = new pg.Client({ connectionString: dbUrl, connectionTimeoutMillis: 5000 });
  await c.connect();
  const { rows } = await c.query("SELECT version() AS v");
  await c.end();
  const r = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  await r.connect();
  const pong = await r.ping();
  r.disconnect();
  console.log(`postgres: ${String(rows[0]?.v).split(",")[0]}; redis: ${pong}`);
}

main().catch((err: unknown) => {
  console.error(`service check failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
