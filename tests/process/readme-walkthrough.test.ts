import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configSchema } from "../../src/config.js";
import { startServer } from "../helpers/server-process.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("README", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-readme-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("has exactly the two quick-start commands", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });

  it("documents every configuration variable", () => {
    for (const name of Object.keys(configSchema.shape)) expect(readme).toContain(`\`${name}\``);
  });

  it("walk-through works when pasted into bash against a live server", { timeout: 300_000 }, async () => {
    const block = /<!-- walkthrough:start -->\s*```bash\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(
      readme,
    )?.[1];
    expect(block).toBeTruthy();
    const server = await startServer({ DATA_DIR: dataDir });
    try {
      const run = spawnSync("bash", ["-c", `set -euo pipefail\n${block}`], {
        env: { ...process.env, BASE: server.url },
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const lines = run.stdout.trim().split("\n");
      expect(lines[0]).toMatch(/^project [0-9a-f-]{36}$/);
      expect(lines).toContain("viewer");
      expect(lines).toContain("Demo");
      const denial = JSON.parse(lines[lines.length - 1] ?? "{}");
      expect(denial).toMatchObject({
        statusCode: 403,
        error: "PermissionDenied",
        message: "You are not allowed to create on identity",
      });
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });
});
