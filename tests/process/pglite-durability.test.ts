import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { post, startServer } from "../helpers/server-process.js";

/**
 * Embedded mode must not lose committed writes when the process is killed without warning: every write
 * acknowledged before a SIGKILL is there after a restart on the same DATA_DIR.
 */
describe("PGlite durability across SIGKILL", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-kill-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("keeps every acknowledged write", { timeout: 300_000 }, async () => {
    const env = { DATA_DIR: dataDir };
    const first = await startServer(env);
    const boot = await post(first.url, "/api/v1/admin/bootstrap", {
      email: "k@example.com",
      password: "pw",
      organization: "K",
    });
    expect(boot.status).toBe(200);
    const token = boot.json.identity.credentials.token as string;
    const created: string[] = [];
    for (let i = 0; i < 15; i++) {
      const r = await post(first.url, "/api/v2/workspace", { projectName: `p${i}` }, token);
      expect(r.status).toBe(200);
      created.push(r.json.project.id as string);
    }
    first.child.kill("SIGKILL");
    await first.exited;

    // Same DATA_DIR: the generated development keys and the database files are reused.
    const second = await startServer(env);
    try {
      const r = await fetch(`${second.url}/api/v1/projects`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(r.status).toBe(200);
      const ids = ((await r.json()) as { projects: { id: string }[] }).projects.map((p) => p.id);
      expect(ids.sort()).toEqual([...created].sort());
      const again = await post(second.url, "/api/v1/admin/bootstrap", {
        email: "x@example.com",
        password: "pw",
        organization: "X",
      });
      expect(again.status).toBe(400);
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
  });
});
