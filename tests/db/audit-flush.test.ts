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

  it("takes its batch size from the caller (PostgreSQL writes bigger batches)", async () => {
    const small = createAuditLog(dbh, log, 3_600_000, 5);
    const n = async () =>
      Number(
        (
          await dbh.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM audit_logs WHERE event_type = 'small'",
          )
        ).rows[0]?.n,
      );
    for (let i = 0; i < 4; i++) small.recordLater({ eventType: "small", actor: null });
    await new Promise((ok) => setTimeout(ok, 50));
    expect(await n()).toBe(0);
    small.recordLater({ eventType: "small", actor: null });
    await expect.poll(n, { timeout: 5_000 }).toBe(5);
    await small.close();
  });

  it("writes every field as queued, stamped with the time of the read; a NUL cannot fail the batch", async () => {
    const actor = {
      type: "identity" as const,
      id: "3f4b2a9c-0d1e-4f5a-8b6c-7d8e9f0a1b2c",
      name: "reader",
      orgId: "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
      ip: "10.0.0.7",
      userAgent: "InfisicalCLI/0.40",
    };
    const readAt = Date.now();
    audit.recordLater({
      eventType: "get-secrets",
      actor,
      projectId: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
      resource: { environment: "dev", secretPath: "/a", numberOfSecrets: 3, nested: { ok: true } },
    });
    audit.recordLater({
      eventType: "get-secret",
      actor: null,
      resource: { secretName: "A\\u0000B", other: "x\u0000y" },
      outcome: "failure",
    });
    await new Promise((ok) => setTimeout(ok, 20));
    await audit.flush();
    const rows = (
      await dbh.query<Record<string, unknown>>(
        `SELECT org_id, project_id, actor_type, actor_id, actor_name, event_type, resource, ip, user_agent, outcome,
           extract(epoch FROM created_at) * 1000 AS at
         FROM audit_logs WHERE event_type IN ('get-secrets') OR resource ? 'other' ORDER BY event_type DESC`,
      )
    ).rows;
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      org_id: actor.orgId,
      project_id: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
      actor_type: "identity",
      actor_id: actor.id,
      actor_name: "reader",
      event_type: "get-secrets",
      resource: { environment: "dev", secretPath: "/a", numberOfSecrets: 3, nested: { ok: true } },
      ip: "10.0.0.7",
      user_agent: "InfisicalCLI/0.40",
      outcome: "success",
    });
    // Stamped when queued, not when flushed (20 ms later).
    expect(Math.abs(Number(rows[0]?.at) - readAt)).toBeLessThan(15);
    // The literal text "\u0000" is kept; the NUL character itself is dropped.
    expect(rows[1]).toMatchObject({
      org_id: null,
      actor_type: "anonymous",
      outcome: "failure",
      resource: { secretName: "A\\u0000B", other: "xy" },
    });
  });
});
