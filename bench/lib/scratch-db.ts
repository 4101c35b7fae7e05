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
  /**
   * `CHECKPOINT` on the server, before each timed run. PostgreSQL starts a checkpoint every
   * `checkpoint_timeout` (5 min by default) and spreads its writes over most of that; one that starts
   * inside a 2–5 s run lands on one side of a pair only. A run after an explicit checkpoint is also
   * 5 min away from the next timed one. Needs superuser or `pg_checkpoint`; without them, or when it
   * fails otherwise, it warns once and does nothing from then on.
   */
  checkpoint(): Promise<void>;
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
  let checkpointer: pg.Client | undefined;
  let failed = false;
  return {
    name,
    url: url.toString(),
    async checkpoint() {
      if (failed) return;
      try {
        if (!checkpointer) {
          const c = new pg.Client({ connectionString: serverUrl });
          await c.connect();
          checkpointer = c;
        }
        await checkpointer.query("CHECKPOINT");
      } catch (err) {
        failed = true;
        process.stderr.write(`bench: CHECKPOINT failed (${(err as Error).message}); runs go on without it\n`);
      }
    },
    async drop() {
      await checkpointer?.end();
      checkpointer = undefined;
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
