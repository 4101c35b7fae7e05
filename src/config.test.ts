import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

const HEX = "ab".repeat(32);
const SECRET = "s".repeat(40);

describe("loadConfig", () => {
  it("applies defaults", () => {
    const c = loadConfig({ ENCRYPTION_KEY: HEX, AUTH_SECRET: SECRET });
    expect(c).toMatchObject({
      PORT: 8080,
      HOST: "0.0.0.0",
      DATA_DIR: "./data",
      NODE_ENV: "development",
      generated: [],
    });
    expect(c.ENCRYPTION_KEY).toHaveLength(32);
  });

  it("accepts Infisical's names as aliases, the canonical name winning", () => {
    const c = loadConfig({
      DB_CONNECTION_URI: "postgres://u@h/db",
      ROOT_ENCRYPTION_KEY: HEX,
      AUTH_SECRET: SECRET,
    });
    expect(c.DATABASE_URL).toBe("postgres://u@h/db");
    expect(c.ENCRYPTION_KEY.toString("hex")).toBe(HEX);
    const both = loadConfig({
      DATABASE_URL: "postgres://a@h/x",
      DB_CONNECTION_URI: "postgres://b@h/y",
      ENCRYPTION_KEY: HEX,
      AUTH_SECRET: SECRET,
    });
    expect(both.DATABASE_URL).toBe("postgres://a@h/x");
  });

  it("takes the encryption key as hex or base64", () => {
    const b64 = Buffer.alloc(32, 7).toString("base64");
    expect(
      loadConfig({ ENCRYPTION_KEY: b64, AUTH_SECRET: SECRET }).ENCRYPTION_KEY.equals(Buffer.alloc(32, 7)),
    ).toBe(true);
  });

  it.each([
    [{ PORT: "eighty" }, /^Invalid configuration: PORT /],
    [{ ENCRYPTION_KEY: "short" }, /^Invalid configuration: ENCRYPTION_KEY must be 32 bytes/],
    [{ DATABASE_URL: "mysql://x" }, /^Invalid configuration: DATABASE_URL must be a postgres/],
    [{ LOG_LEVEL: "loud" }, /^Invalid configuration: LOG_LEVEL /],
    [{ AUTH_SECRET: "tiny" }, /^Invalid configuration: AUTH_SECRET must be at least 32 characters/],
  ])("fails on invalid values with one line: %o", (env, msg) => {
    const run = () => loadConfig({ ENCRYPTION_KEY: HEX, AUTH_SECRET: SECRET, ...env });
    expect(run).toThrowError(ConfigError);
    expect(run).toThrowError(msg);
    try {
      run();
    } catch (e) {
      expect((e as Error).message).not.toContain("\n");
    }
  });

  it("refuses to start in production without keys, naming them", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrowError(
      "Refusing to start in production: ENCRYPTION_KEY and AUTH_SECRET must be set",
    );
    expect(() => loadConfig({ NODE_ENV: "production", ENCRYPTION_KEY: HEX })).toThrowError(
      /AUTH_SECRET must be set/,
    );
  });

  it("generates development keys once into DATA_DIR with mode 0600", () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-cfg-"));
    const a = loadConfig({ DATA_DIR: dir });
    expect(a.generated).toEqual(["ENCRYPTION_KEY", "AUTH_SECRET"]);
    const b = loadConfig({ DATA_DIR: dir });
    expect(b.ENCRYPTION_KEY.equals(a.ENCRYPTION_KEY)).toBe(true);
    expect(b.AUTH_SECRET).toBe(a.AUTH_SECRET);
    for (const f of ["encryption-key.dev", "auth-secret.dev"]) {
      expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, f), "utf8").trim().length).toBeGreaterThan(30);
    }
  });
});
