import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createTestDatabase, testEnv } from "../helpers/build-test-app.js";
import { bootstrap, makeProject } from "../helpers/fixtures.js";

/**
 * Rotation end to end on a persistent database (PGlite in a temp DATA_DIR, or PostgreSQL in CI):
 * data encrypted under key A stays readable with B+A during the rotation, the command re-wraps every
 * data key, and afterwards B alone reads everything while A alone no longer can.
 */
describe("root key rotation", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-rotate-"));
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const A = randomBytes(32).toString("hex");
  const B = randomBytes(32).toString("hex");
  const AUTH = randomBytes(32).toString("hex");
  const base = () => ({ DATA_DIR: dataDir, AUTH_SECRET: AUTH, ...(db ? { DATABASE_URL: db.url } : {}) });
  const open = (env: Record<string, string>) =>
    buildApp(loadConfig(testEnv({ ...base(), ...env })), { logger: pino({ level: "silent" }) });

  it("re-wraps every data key without losing data", { timeout: 120_000 }, async () => {
    const a = await open({ ENCRYPTION_KEY: A });
    await a.app.ready();
    const w = await bootstrap(a.app);
    const p = await makeProject(a.app, w.adminToken, "Rotated");
    const sealed = await a.services.keyring.encrypt(p.id, "before-rotation", {
      table: "t",
      column: "c",
      id: "1",
    });
    await a.close();

    // During the rotation: new key first, old key still accepted.
    const during = await open({ ENCRYPTION_KEY: B, ENCRYPTION_KEY_PREVIOUS: A });
    expect(await during.services.keyring.decrypt(p.id, sealed, { table: "t", column: "c", id: "1" })).toBe(
      "before-rotation",
    );
    await during.close();

    const run = spawnSync(process.execPath, ["--import", "tsx", "src/cli/rotate-root-key.ts"], {
      env: { ...process.env, ...base(), ENCRYPTION_KEY: B, ENCRYPTION_KEY_PREVIOUS: A },
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(/re-wrapped \d+ data keys/);

    const after = await open({ ENCRYPTION_KEY: B });
    expect(await after.services.keyring.decrypt(p.id, sealed, { table: "t", column: "c", id: "1" })).toBe(
      "before-rotation",
    );
    await after.close();

    const old = await open({ ENCRYPTION_KEY: A });
    await expect(
      old.services.keyring.decrypt(p.id, sealed, { table: "t", column: "c", id: "1" }),
    ).rejects.toThrow();
    await old.close();
  });
});
