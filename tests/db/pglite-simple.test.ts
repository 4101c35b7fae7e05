import { sql } from "drizzle-orm";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DbHandle } from "../../src/db/client.js";

/**
 * On PGlite, `simple()` (the hot statements' path) sends one Query message straight to the engine
 * instead of going through `exec()`. It must still decode rows as the PostgreSQL path does, surface
 * PostgreSQL's errors with their SQLSTATE, and never run inside another caller's open transaction
 * (PGlite is one session: a statement slipped in between a transaction's queries would belong to it).
 */
const log = pino({ level: "silent" });

describe("PGlite simple(): one Query message", () => {
  let dbh: DbHandle;
  beforeAll(async () => {
    dbh = await createDb({ memory: true, log });
    await dbh.exec("CREATE TABLE simple_probe (id int PRIMARY KEY, note text)");
  });
  afterAll(async () => {
    await dbh.close();
  });

  it("decodes text, uuid, bool, integers, json and NULL as the hot statements need them", async () => {
    const rows =
      await dbh.simple(`SELECT 'a''b'::text AS t, '6f1e1a52-0a4c-4c2e-9d3e-1d2c3b4a5f60'::uuid AS u,
      true AS yes, false AS no, 42::int4 AS i, 7::int2 AS s, json_build_array(1, 'x', null) AS j,
      '{"k": [1]}'::jsonb AS jb, NULL::text AS nothing, 'é ✓'::text AS utf8`);
    expect(rows).toEqual([
      {
        t: "a'b",
        u: "6f1e1a52-0a4c-4c2e-9d3e-1d2c3b4a5f60",
        yes: true,
        no: false,
        i: 42,
        s: 7,
        j: [1, "x", null],
        jb: { k: [1] },
        nothing: null,
        utf8: "é ✓",
      },
    ]);
    expect(await dbh.simple("SELECT 1::int4 AS n WHERE false")).toEqual([]);
    expect(await dbh.simple("SELECT generate_series(1, 3)::int4 AS n")).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
  });

  it("refuses a column type it does not decode instead of returning another shape than PostgreSQL's", async () => {
    await expect(dbh.simple("SELECT now() AS at")).rejects.toThrow(/type 1184 is not decoded/);
  });

  it("throws PostgreSQL's error with its SQLSTATE, and the session stays usable", async () => {
    await expect(dbh.simple("SELECT 'not-a-uuid'::uuid AS u")).rejects.toMatchObject({
      code: "22P02",
      message: expect.stringContaining("invalid input syntax for type uuid"),
    });
    await expect(
      dbh.simple("INSERT INTO simple_probe VALUES (1, 'x'), (1, 'y') RETURNING id"),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await dbh.simple("SELECT count(*)::int4 AS n FROM simple_probe")).toEqual([{ n: 0 }]);
  });

  it("waits for an open transaction instead of running inside it", async () => {
    let release = () => {};
    const held = new Promise<void>((ok) => {
      release = ok;
    });
    let inserted = () => {};
    const insertedP = new Promise<void>((ok) => {
      inserted = ok;
    });
    const tx = dbh.db
      .transaction(async (t) => {
        await t.execute(sql`INSERT INTO simple_probe VALUES (10, 'uncommitted')`);
        inserted();
        await held;
        t.rollback();
      })
      .catch(() => undefined); // the rollback rejects; that is the point
    await insertedP;
    let answered = false;
    const read = dbh.simple<{ n: number }>("SELECT count(*)::int4 AS n FROM simple_probe").then((r) => {
      answered = true;
      return r;
    });
    await new Promise((ok) => setTimeout(ok, 50));
    expect(answered).toBe(false); // still waiting for the transaction
    release();
    await tx;
    expect(await read).toEqual([{ n: 0 }]); // never saw the rolled-back row
  });
});
