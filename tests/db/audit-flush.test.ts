import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DbHandle } from "../../src/db/client.js";
import { type AuditLog, createAuditLog } from "../../src/features/audit/audit.js";

/**
 * Read records are queued and written in batches. On embedded PGlite a batch's INSERT runs on the event
 * loop, so a full queue is written at once, in batches of 100, instead of waiting for the timer.
 */
const log = pino({ level: "silent" });

describe("audit log batches", () => {
  let dbh: DbHandle;
  let audit: AuditLog;
  const count = async () =>
    Number(
      (
        await dbh.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM audit_logs WHERE event_type = 'get-secret'",
        )
      ).rows[0]?.n,
    );
  const read = (i: number) =>
    audit.recordLater({
      eventType: "get-secret",
      actor: null,
      resource: { secretName: `S${i}` },
    });

  beforeAll(async () => {
    dbh = await createDb({ memory: true, log });
    audit = createAuditLog(dbh, log, 3_600_000); // the timer never fires during the test
  });
  afterAll(async () => {
    await audit.close();
    await dbh.close();
  });

  it("writes a full batch of 100 at once, and leaves a partial one for the timer or close()", async () => {
    for (let i = 0; i < 99; i++) read(i);
    await new Promise((ok) => setTimeout(ok, 50));
    expect(await count()).toBe(0);
    read(99);
    await expect.poll(count, { timeout: 5_000 }).toBe(100);
    for (let i = 100; i < 130; i++) read(i);
    await new Promise((ok) => setTimeout(ok, 50));
    expect(await count()).toBe(100);
    await audit.flush();
    expect(await count()).toBe(130);
  });
});
