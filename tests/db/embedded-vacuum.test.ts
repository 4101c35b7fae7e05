import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DbHandle } from "../../src/db/client.js";
import { startEmbeddedVacuum, vacuumDueTables } from "../../src/db/embedded-vacuum.js";

/**
 * PGlite has no autovacuum launcher (a single-user backend), so Ferry's embedded mode runs PostgreSQL's
 * autovacuum rules itself. These tests use an in-memory PGlite whatever the suite's database: the loop
 * exists only for the embedded database.
 */
const log = pino({ level: "silent" });

type Stats = { n_dead_tup: number; vacuum_count: number; analyze_count: number };

describe("embedded autovacuum (PGlite)", () => {
  let dbh: DbHandle;

  /** PostgreSQL publishes a backend's table statistics at most once a second unless told to now. */
  async function stats(table: string): Promise<Stats> {
    await dbh.query("SELECT pg_stat_force_next_flush()");
    await dbh.query("SELECT 1");
    const r = await dbh.query<Stats>(
      "SELECT n_dead_tup::int, vacuum_count::int, analyze_count::int FROM pg_stat_user_tables WHERE relname = $1",
      [table],
    );
    return r.rows[0] as Stats;
  }

  /** A table with `dead` deleted rows out of `total`. */
  async function churn(table: string, total: number, dead: number) {
    await dbh.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, v text);
      INSERT INTO ${table} SELECT i, md5(i::text) FROM generate_series(1, ${total}) i;
      DELETE FROM ${table} WHERE id <= ${dead};`);
  }

  beforeAll(async () => {
    dbh = await createDb({ memory: true, log });
    // Whatever the migrations left due is done first, so that each test sees only its own tables.
    await stats("secrets");
    await vacuumDueTables(dbh, log);
  });
  afterAll(async () => {
    await dbh.close();
  });

  it("confirms the premise: PGlite never vacuums on its own", async () => {
    await churn("never_vacuumed", 1000, 900);
    await new Promise((ok) => setTimeout(ok, 1100));
    const s = await stats("never_vacuumed");
    expect(s.n_dead_tup).toBe(900);
    expect(s.vacuum_count).toBe(0);
    await dbh.exec("DROP TABLE never_vacuumed");
  });

  it("vacuums a table whose dead rows pass the threshold, and only once", async () => {
    await churn("churned", 2000, 1500);
    expect((await stats("churned")).n_dead_tup).toBe(1500);

    const done = await vacuumDueTables(dbh, log);
    // Two statements, so that PGlite holds the event loop for each step alone.
    expect(done.filter((d) => d.table === "public.churned")).toEqual([
      { table: "public.churned", action: "vacuum" },
      { table: "public.churned", action: "analyze" },
    ]);
    const after = await stats("churned");
    expect(after).toMatchObject({ n_dead_tup: 0, vacuum_count: 1, analyze_count: 1 });

    // Nothing is due any more: a second round leaves the table alone.
    expect(await vacuumDueTables(dbh, log)).not.toContainEqual(
      expect.objectContaining({ table: "public.churned" }),
    );
    expect((await stats("churned")).vacuum_count).toBe(1);
  });

  it("leaves a table below the thresholds alone (a few dead rows in a big table)", async () => {
    await churn("mostly_live", 5000, 10);
    await stats("mostly_live"); // published before the VACUUM, or they would count as new after it
    await dbh.exec("VACUUM (ANALYZE) mostly_live"); // as if a round had run after the load
    await dbh.exec("DELETE FROM mostly_live WHERE id <= 40"); // 30 more dead rows: under 50 + 20% × 4,990
    expect((await stats("mostly_live")).n_dead_tup).toBe(30);
    const done = await vacuumDueTables(dbh, log);
    expect(done.map((d) => d.table)).not.toContain("public.mostly_live");
    expect((await stats("mostly_live")).vacuum_count).toBe(1);
  });

  it("analyses without vacuuming when rows changed since the last ANALYZE but no dead rows are left", async () => {
    await dbh.exec(`CREATE TABLE grown (id int PRIMARY KEY);
      INSERT INTO grown SELECT generate_series(1, 500);`);
    await stats("grown");
    await dbh.exec("VACUUM (ANALYZE) grown");
    await dbh.exec("UPDATE grown SET id = id + 0 WHERE id <= 200"); // 200 changed rows → 200 dead too
    await stats("grown");
    await dbh.exec("VACUUM grown"); // clears the dead rows, not the changes since the last ANALYZE
    await stats("grown");
    const done = await vacuumDueTables(dbh, log);
    expect(done.filter((d) => d.table === "public.grown")).toEqual([
      { table: "public.grown", action: "analyze" },
    ]);
    expect(await stats("grown")).toMatchObject({ n_dead_tup: 0, vacuum_count: 2, analyze_count: 2 });
  });

  it("runs rounds on its own timer and stops cleanly", async () => {
    await churn("timed", 1000, 800);
    await stats("timed");
    const loop = startEmbeddedVacuum(dbh, log, 20);
    try {
      const deadline = Date.now() + 10_000;
      while ((await stats("timed")).vacuum_count === 0 && Date.now() < deadline) {
        await new Promise((ok) => setTimeout(ok, 20));
      }
      expect(await stats("timed")).toMatchObject({ n_dead_tup: 0, vacuum_count: 1 });
    } finally {
      await loop.stop();
    }
    // Stopped: new dead rows stay.
    await dbh.exec("DELETE FROM timed");
    await new Promise((ok) => setTimeout(ok, 100));
    expect((await stats("timed")).vacuum_count).toBe(1);
  });

  it("keeps ANALYZE to the columns that queries use (migration 0005), so it holds PGlite briefly", async () => {
    await dbh.exec(`INSERT INTO audit_logs (org_id, project_id, actor_type, actor_id, event_type, resource, user_agent)
      SELECT gen_random_uuid(), gen_random_uuid(), 'identity', 'a' || i, 'get-secret', jsonb_build_object('n', i), 'ua'
      FROM generate_series(1, 200) i`);
    await dbh.exec("ANALYZE audit_logs");
    const analysed = await dbh.query<{ attname: string }>(
      "SELECT attname FROM pg_stats WHERE schemaname = 'public' AND tablename = 'audit_logs'",
    );
    const names = analysed.rows.map((r) => r.attname);
    expect(names).toEqual(expect.arrayContaining(["org_id", "project_id", "event_type", "created_at"]));
    for (const skipped of ["resource", "user_agent", "ip", "actor_name"])
      expect(names).not.toContain(skipped);

    const targets = await dbh.query<{ attname: string; target: number | null }>(
      `SELECT attname, attstattarget::int AS target FROM pg_attribute
       WHERE attrelid = 'secrets'::regclass AND attnum > 0 AND NOT attisdropped`,
    );
    const target = Object.fromEntries(targets.rows.map((r) => [r.attname, r.target]));
    for (const sealed of ["encrypted_value", "encrypted_comment", "encrypted_reminder_note", "metadata"]) {
      expect(target[sealed]).toBe(0);
    }
    // The lookup columns keep the server's default (-1, or NULL from PostgreSQL 17).
    for (const lookup of ["folder_id", "key", "type", "user_id"]) expect(target[lookup] ?? -1).toBe(-1);
  });

  it("does not start on PostgreSQL, which has its own autovacuum, nor with interval 0", async () => {
    await churn("untouched", 1000, 800);
    await stats("untouched");
    const asPostgres = { ...dbh, kind: "postgres" } as DbHandle;
    const loops = [startEmbeddedVacuum(asPostgres, log, 10), startEmbeddedVacuum(dbh, log, 0)];
    await new Promise((ok) => setTimeout(ok, 200));
    for (const l of loops) await l.stop();
    expect((await stats("untouched")).vacuum_count).toBe(0);
  });
});
