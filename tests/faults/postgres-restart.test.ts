import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testEnv } from "../helpers/build-test-app.js";
import {
  faultTestsEnabled,
  type PrivatePostgres,
  pgBinDir,
  startPrivatePostgres,
} from "../helpers/private-services.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { bootstrapOver, isEnvelope, must, type Reply, request, sleep, until } from "./fault-http.js";

/**
 * PostgreSQL restarts under load. A server (child process) on a PRIVATE PostgreSQL takes a steady stream
 * of writes and reads; the database is stopped, left down for a while, and started again.
 * - During the outage every request is answered, quickly, with the error envelope (no hang: each request
 *   carries a timeout and none may hit it; the process never dies).
 * - The service recovers on its own, without a restart.
 * - Every write acknowledged with 200 is there afterwards, with its value.
 */
const REQUEST_TIMEOUT_MS = 15_000;
const WORKERS = 4;

describe.runIf(faultTestsEnabled && Boolean(pgBinDir()))("PostgreSQL restarted under load", () => {
  let pg: PrivatePostgres | undefined;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
  }, 60_000);
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await pg?.destroy();
  });

  it("fails fast with an envelope, recovers without a restart, and loses no acknowledged write", async () => {
    const db = pg as PrivatePostgres;
    const dbUrl = await db.createDatabase("restart");
    server = await startServer({
      ...testEnv({ LOG_LEVEL: "warn" }),
      NODE_ENV: "development",
      DATABASE_URL: dbUrl,
    });
    const base = server.url;
    const token = await bootstrapOver(base);
    const project = (
      await must(base, "POST", "/api/v2/workspace", { token, body: { projectName: "Restart" } })
    ).project;

    const acked = new Map<string, string>();
    const replies: (Reply & { phase: string })[] = [];
    let phase = "before";
    let stop = false;
    let n = 0;
    const worker = async (w: number) => {
      while (!stop) {
        const i = n++;
        const key = `K_${w}_${i}`;
        const value = `value-${w}-${i}`;
        const write = await request(base, "POST", `/api/v3/secrets/raw/${key}`, {
          token,
          timeoutMs: REQUEST_TIMEOUT_MS,
          body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: value },
        });
        replies.push({ ...write, phase });
        if (write.status === 200) acked.set(key, value);
        const read = await request(
          base,
          "GET",
          `/api/v3/secrets/raw?workspaceId=${project.id}&environment=dev&secretPath=/`,
          { token, timeoutMs: REQUEST_TIMEOUT_MS },
        );
        replies.push({ ...read, phase });
        // Back off a little while failing, as a client would; keeps the failure log readable.
        if (write.status !== 200) await sleep(50);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));

    await until("writes before the outage", 30_000, async () => (acked.size >= 20 ? true : undefined));
    phase = "outage";
    await db.stop("fast");
    await sleep(3_000);
    await db.start();
    phase = "after";
    // Recovery: a fresh write succeeds without restarting the server.
    const ackedAtRestart = acked.size;
    await until("writes to succeed again", 60_000, async () =>
      acked.size >= ackedAtRestart + 20 ? true : undefined,
    );
    stop = true;
    await load;

    // Nothing hung, the process is alive, and there was a real outage that clients saw.
    expect(replies.filter((r) => r.timedOut)).toEqual([]);
    expect(server.child.exitCode).toBeNull();
    const failed = replies.filter((r) => r.status !== 200);
    expect(failed.length).toBeGreaterThan(0);
    // Every failure is an HTTP answer in the envelope: 503 (database unavailable) or 500.
    for (const f of failed) {
      expect([500, 503], JSON.stringify(f)).toContain(f.status);
      expect(isEnvelope(f.json, f.status), JSON.stringify(f.json)).toBe(true);
    }
    // Connection failures are reported as such (503 ServiceUnavailable, retryable), never as a 500.
    expect(failed.filter((f) => f.status === 503).length, JSON.stringify(failed.slice(0, 5))).toBeGreaterThan(
      0,
    );
    expect(failed.filter((f) => f.status === 500)).toEqual([]);
    // Failing fast: bounded well below the client timeout (the pool's connection timeout is 5 s).
    expect(Math.max(...failed.map((f) => f.ms))).toBeLessThan(REQUEST_TIMEOUT_MS);

    // No acknowledged write was lost.
    const list = await must(
      base,
      "GET",
      `/api/v3/secrets/raw?workspaceId=${project.id}&environment=dev&secretPath=/`,
      { token },
    );
    const stored = new Map<string, string>(
      (list.secrets as { secretKey: string; secretValue: string }[]).map((s) => [s.secretKey, s.secretValue]),
    );
    const lost = [...acked].filter(([k, v]) => stored.get(k) !== v);
    expect(lost).toEqual([]);
    expect(acked.size).toBeGreaterThan(40);
  }, 150_000);
});
