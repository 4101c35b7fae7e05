import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A throwaway database on the PostgreSQL server named by DATABASE_URL: Ferry migrates into it and the
 * baseline keeps its table there, so the benchmark never touches the database the URL names (a
 * bootstrapped Ferry could not be bootstrapped again anyway). Dropped when the run ends.
 */
export interface ScratchDb {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function createScratchDatabase(serverUrl: string): Promise<ScratchDb> {
  const name = `ferry_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end();
    throw new Error(
      `cannot create a scratch database on ${new URL(serverUrl).host} (${(err as Error).message}); ` +
        "the benchmark needs a role with CREATEDB",
    );
  }
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
