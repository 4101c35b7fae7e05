import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { post, startServer } from "../helpers/server-process.js";

describe("process lifecycle", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-life-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("starts with no configuration, warns about generated keys, and shuts down gracefully on SIGTERM", {
    timeout: 300_000,
  }, async () => {
    const s = await startServer({ DATA_DIR: dataDir });
    expect(s.output()).toContain("ENCRYPTION_KEY is not set");
    const boot = await post(s.url, "/api/v1/admin/bootstrap", {
      email: "l@example.com",
      password: "pw",
      organization: "L",
    });
    const token = boot.json.identity.credentials.token as string;
    // Start requests, then SIGTERM while they are in flight: they complete, then the process exits 0.
    const inflight = Array.from({ length: 5 }, (_, i) =>
      post(s.url, "/api/v2/workspace", { projectName: `f${i}` }, token),
    );
    await new Promise((r) => setTimeout(r, 5));
    s.child.kill("SIGTERM");
    const results = await Promise.allSettled(inflight);
    const codes = results.map((r) => (r.status === "fulfilled" ? r.value.status : "refused"));
    // Requests already accepted finish with 200; ones that arrive after close are refused (connection
    // refused, or Fastify's 503 on a kept-alive socket). Nothing else.
    expect(codes.filter((c) => c !== 200 && c !== 503 && c !== "refused")).toEqual([]);
    expect(codes).toContain(200);
    const code = await s.exited;
    expect(code, s.output().slice(-2000)).toBe(0);
    expect(s.output()).toContain("shutting down");
  });

  it("refuses to start in production without keys, with a one-line reason", { timeout: 60_000 }, async () => {
    await expect(startServer({ NODE_ENV: "production", DATA_DIR: dataDir }, 8_000)).rejects.toThrow(
      /Refusing to start in production: ENCRYPTION_KEY and AUTH_SECRET must be set/,
    );
  });
});
