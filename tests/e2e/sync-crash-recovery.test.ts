import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { FakeAws } from "../fakes/aws-parameter-store.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";

/**
 * Durability: the server is SIGKILLed in the middle of a 2,000-secret sync. After a restart on the same
 * PGlite data directory the job is picked up again, the sync ends `succeeded` and the destination
 * matches the source.
 */
const N = 2000;
const dataDir = mkdtempSync(join(tmpdir(), "ferry-sync-crash-"));
let fake: FakeAws | undefined;
let server: ServerProcess | undefined;

afterAll(async () => {
  server?.child.kill("SIGKILL");
  await fake?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: response JSON is read loosely in tests and asserted on.
type Json = Record<string, any>;

async function api(
  base: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<Json> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await r.json()) as Json;
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

it("a sync interrupted by SIGKILL resumes after restart and converges", async () => {
  fake = await new FakeAws().start();
  const env = {
    DATA_DIR: dataDir,
    ALLOW_INTERNAL_DESTINATIONS: "true",
    AWS_ENDPOINT_URL_SSM: fake.url,
    AWS_ENDPOINT_URL_STS: fake.url,
    LOG_LEVEL: "warn",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
  };
  server = await startServer(env);
  const boot = await api(server.url, "POST", "/api/v1/admin/bootstrap", undefined, {
    email: "admin@example.com",
    password: "correct horse battery staple",
    organization: "Acme",
  });
  const token = boot.identity.credentials.token as string;
  const project = (await api(server.url, "POST", "/api/v2/workspace", token, { projectName: "Crash" }))
    .project;
  const source = Object.fromEntries(
    Array.from({ length: N }, (_, i) => [`KEY_${String(i).padStart(4, "0")}`, `value-${i}`]),
  );
  const entries = Object.entries(source);
  for (let i = 0; i < entries.length; i += 500) {
    await api(server.url, "POST", "/api/v4/secrets/batch", token, {
      projectId: project.id,
      environment: "dev",
      secretPath: "/",
      secrets: entries.slice(i, i + 500).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
    });
  }
  const conn = (
    await api(server.url, "POST", "/api/v1/app-connections/aws", token, {
      name: "aws",
      method: "access-key",
      credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    })
  ).appConnection;
  const sync = (
    await api(server.url, "POST", "/api/v1/secret-syncs/aws-parameter-store", token, {
      name: "big",
      projectId: project.id,
      connectionId: conn.id,
      environment: "dev",
      secretPath: "/",
      syncOptions: { initialSyncBehavior: "overwrite-destination" },
      destinationConfig: { region: "us-east-1", path: "/crash/" },
    })
  ).secretSync;

  // Kill the server once the run is well under way but far from done.
  const f = fake;
  await until("the sync to be mid-run", 120_000, async () => (f.writes.length >= 200 ? true : undefined));
  server.child.kill("SIGKILL");
  await server.exited;
  const writtenBeforeKill = Object.keys(f.read("/crash/")).length;
  expect(writtenBeforeKill).toBeLessThan(N);

  server = await startServer(env);
  const s = server;
  const done = await until("the sync to finish after restart", 240_000, async () => {
    const v = (await api(s.url, "GET", `/api/v1/secret-syncs/aws-parameter-store/${sync.id}`, token))
      .secretSync;
    return v.syncStatus === "succeeded" || v.syncStatus === "failed" ? v : undefined;
  });
  expect(done.syncStatus).toBe("succeeded");
  expect(f.read("/crash/")).toEqual(source);
}, 300_000);
