import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encryptionKeys } from "../../src/db/schema/index.js";
import { open, seal } from "../../src/lib/crypto/envelope.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { dumpAllTables } from "../helpers/db-dump.js";
import { bootstrap, call, makeIdentity, makeProject, ok, type World } from "../helpers/fixtures.js";

describe("encryption at rest", () => {
  let t: TestApp;
  let w: World;
  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
  });
  afterAll(async () => t.close());

  it("stores no plaintext client secret, password, token or encrypted value in any table", async () => {
    const i = await makeIdentity(t.app, w, "dumped");
    const p = await makeProject(t.app, w.adminToken, "Dumped");
    // Material encrypted through the service layer's keyring, stored in a real table column.
    const plaintext = "PLAINTEXT-CANARY-4c1b9e";
    const sealed = await t.services.keyring.encrypt(p.id, plaintext, {
      table: "audit_logs",
      column: "resource",
      id: "x",
    });
    await t.services.audit.record(
      { eventType: "canary", actor: null, orgId: w.orgId, resource: { sealed: sealed.toString("base64") } },
      t.services.db,
    );
    const dump = await dumpAllTables(t.services.dbh);
    expect(dump).toContain(i.id); // the dump really covers the identity tables
    for (const s of [i.clientSecret, w.userPassword, w.adminToken, i.token, plaintext]) {
      expect(dump).not.toContain(s);
    }
    // Client secrets and passwords are slow hashes.
    expect(dump).toMatch(/scrypt\$14\$8\$1\$/);
  });

  it("wraps one data key per project under the root key", async () => {
    const p = await makeProject(t.app, w.adminToken, "Keyed");
    const [row] = await t.services.db.select().from(encryptionKeys).where(eq(encryptionKeys.ownerId, p.id));
    expect(row?.encryptedKey.length).toBe(1 + 12 + 16 + 32);
    const dk = open(t.services.config.ENCRYPTION_KEY, row?.encryptedKey ?? Buffer.alloc(0), {
      table: "encryption_keys",
      column: "encrypted_key",
      id: p.id,
    });
    expect(dk).toHaveLength(32);
  });

  it("binds ciphertext to its row and column: a swapped ciphertext fails to decrypt", async () => {
    const key = Buffer.alloc(32, 9);
    const a = seal(key, "value-a", { table: "secrets", column: "encrypted_value", id: "row-a" });
    expect(open(key, a, { table: "secrets", column: "encrypted_value", id: "row-a" }).toString()).toBe(
      "value-a",
    );
    expect(() => open(key, a, { table: "secrets", column: "encrypted_value", id: "row-b" })).toThrowError(
      /authentication/,
    );
    expect(() => open(key, a, { table: "secrets", column: "encrypted_comment", id: "row-a" })).toThrowError(
      /authentication/,
    );
    const tampered = Buffer.from(a);
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] ?? 0) ^ 1;
    expect(() => open(key, tampered, { table: "secrets", column: "encrypted_value", id: "row-a" })).toThrow();
    // Random IVs: the same plaintext never produces the same ciphertext.
    expect(
      seal(key, "same", { table: "t", column: "c", id: "1" }).equals(
        seal(key, "same", { table: "t", column: "c", id: "1" }),
      ),
    ).toBe(false);
  });

  it("keeps hashes out of API responses", async () => {
    const i = await makeIdentity(t.app, w, "no-hash");
    const list = await ok(
      call(t.app, "GET", `/api/v1/auth/universal-auth/identities/${i.id}/client-secrets`, {
        token: w.adminToken,
      }),
    );
    expect(JSON.stringify(list)).not.toMatch(/scrypt|Hash/);
  });
});
