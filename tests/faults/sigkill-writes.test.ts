import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testEnv } from "../helpers/build-test-app.js";
import {
  faultTestsEnabled,
  type PrivatePostgres,
  pgBinDir,
  startPrivatePostgres,
} from "../helpers/private-services.js";
import { type ServerProcess, startServer } from "../helpers/server-process.js";
import { bootstrapOver, must, request, sleep, until } from "./fault-http.js";

/**
 * SIGKILL in the middle of a write loop (folder create → batch create → batch update of the previous
 * batch), on embedded PGlite and on PostgreSQL. After a restart:
 * - every acknowledged write is present;
 * - a batch (create or update) is all there or not at all, including the one in flight at the kill;
 * - each secret's value and version agree with the acknowledged history (plus at most the in-flight op);
 * - folder/secret invariants hold in the database (no orphans, paths consistent, one root per env).
 */
const BATCH = 5;

type Op = { kind: "folder" | "create" | "update"; batch: number; value?: string; acked: boolean };

async function writeLoop(base: string, token: string, projectId: string, ops: Op[], stop: () => boolean) {
  const scope = { projectId, environment: "dev" };
  const keys = (b: number) => Array.from({ length: BATCH }, (_, k) => `S${b}_${k}`);
  for (let b = 0; !stop(); b++) {
    const steps: [Op, () => ReturnType<typeof request>][] = [
      [
        { kind: "folder", batch: b, acked: false },
        () =>
          request(base, "POST", "/api/v2/folders", { token, body: { ...scope, name: `b${b}`, path: "/" } }),
      ],
      [
        { kind: "create", batch: b, value: `v${b}`, acked: false },
        () =>
          request(base, "POST", "/api/v4/secrets/batch", {
            token,
            body: {
              ...scope,
              secretPath: `/b${b}`,
              secrets: keys(b).map((k) => ({ secretKey: k, secretValue: `v${b}` })),
            },
          }),
      ],
    ];
    if (b > 0)
      steps.push([
        { kind: "update", batch: b - 1, value: `u${b}`, acked: false },
        () =>
          request(base, "PATCH", "/api/v4/secrets/batch", {
            token,
            body: {
              ...scope,
              secretPath: `/b${b - 1}`,
              secrets: keys(b - 1).map((k) => ({ secretKey: k, secretValue: `u${b}` })),
            },
          }),
      ]);
    for (const [op, send] of steps) {
      ops.push(op);
      const r = await send();
      if (r.status === 0) return; // the server is gone: this op is "in flight"
      if (r.status !== 200) throw new Error(`${op.kind} ${op.batch}: ${r.status} ${JSON.stringify(r.json)}`);
      op.acked = true;
    }
  }
}

/** Folder and secret invariants, as SQL that must return no rows. */
const INVARIANTS: Record<string, string> = {
  "secret without folder":
    "SELECT s.id FROM secrets s LEFT JOIN folders f ON f.id = s.folder_id WHERE f.id IS NULL",
  "folder without parent": `SELECT c.id FROM folders c LEFT JOIN folders p ON p.id = c.parent_id
    WHERE c.parent_id IS NOT NULL AND (p.id IS NULL OR p.env_id <> c.env_id)`,
  "folder path not parent path + name": `SELECT c.id FROM folders c JOIN folders p ON p.id = c.parent_id
    WHERE c.path <> (CASE WHEN p.path = '/' THEN '' ELSE p.path END) || '/' || c.name`,
  "environment without exactly one root": `SELECT e.id FROM environments e
    LEFT JOIN folders f ON f.env_id = e.id AND f.parent_id IS NULL GROUP BY e.id HAVING count(f.id) <> 1`,
  "bad secret version": "SELECT id FROM secrets WHERE version < 1",
};

async function verify(base: string, token: string, projectId: string, ops: Op[]) {
  const inFlight = ops.find((o) => !o.acked);
  const batches = Math.max(...ops.map((o) => o.batch)) + 1;
  for (let b = 0; b < batches; b++) {
    const r = await request(
      base,
      "GET",
      `/api/v4/secrets?projectId=${projectId}&environment=dev&secretPath=/b${b}`,
      {
        token,
      },
    );
    const folderAcked = ops.some((o) => o.kind === "folder" && o.batch === b && o.acked);
    if (r.status === 404) {
      // Only the folder in flight at the kill may be missing.
      expect(folderAcked, `folder b${b} was acknowledged`).toBe(false);
      continue;
    }
    expect(r.status).toBe(200);
    const secrets = r.json.secrets as { secretKey: string; secretValue: string; version: number }[];
    const create = ops.find((o) => o.kind === "create" && o.batch === b);
    // All or nothing, and nothing at all unless the create was sent.
    expect([0, create ? BATCH : 0], `batch ${b} has ${secrets.length} secrets`).toContain(secrets.length);
    if (create?.acked) expect(secrets.length).toBe(BATCH);
    if (secrets.length === 0) continue;
    const updates = ops.filter((o) => o.kind === "update" && o.batch === b);
    const ackedUpdates = updates.filter((o) => o.acked);
    const expected = [
      { value: ackedUpdates.at(-1)?.value ?? (create?.value as string), version: 1 + ackedUpdates.length },
    ];
    if (inFlight && updates.includes(inFlight))
      expected.push({ value: inFlight.value as string, version: 2 + ackedUpdates.length });
    // Every secret of the batch carries the same (value, version): an update batch is atomic too.
    const seen = new Set(secrets.map((s) => JSON.stringify({ value: s.secretValue, version: s.version })));
    expect(seen.size, `batch ${b}: ${[...seen].join(" ")}`).toBe(1);
    expect(expected.map((e) => JSON.stringify(e))).toContain([...seen][0]);
  }
}

async function killMidLoop(env: Record<string, string>) {
  const first = await startServer(env);
  const token = await bootstrapOver(first.url);
  const project = (
    await must(first.url, "POST", "/api/v2/workspace", { token, body: { projectName: "Kill" } })
  ).project;
  const ops: Op[] = [];
  const loop = writeLoop(first.url, token, project.id, ops, () => first.child.exitCode !== null);
  await until("enough acknowledged writes", 60_000, async () =>
    ops.filter((o) => o.acked).length >= 30 ? true : undefined,
  );
  // Land the kill at an arbitrary point of a request, not between two.
  await sleep(Math.random() * 30);
  first.child.kill("SIGKILL");
  await first.exited;
  await loop;
  const second = await startServer(env);
  return { server: second, token, projectId: project.id as string, ops };
}

async function assertInvariants(query: (sql: string) => Promise<unknown[]>) {
  for (const [name, sql] of Object.entries(INVARIANTS)) expect(await query(sql), name).toEqual([]);
}

// CI runs the suite once per backend: the PGlite variant belongs to the pass without TEST_DATABASE_URL.
describe.runIf(!process.env.TEST_DATABASE_URL)("SIGKILL during writes: PGlite", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-kill-writes-"));
  let server: ServerProcess | undefined;
  afterAll(() => {
    server?.child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps every acknowledged write, no partial batch, invariants hold", async () => {
    const env = { ...testEnv({ LOG_LEVEL: "warn" }), NODE_ENV: "development", DATA_DIR: dataDir };
    const run = await killMidLoop(env);
    server = run.server;
    await verify(run.server.url, run.token, run.projectId, run.ops);
    // PGlite is single-process: stop the server cleanly, then open its files directly.
    run.server.child.kill("SIGTERM");
    await run.server.exited;
    const db = new PGlite(join(dataDir, "pglite"));
    try {
      await assertInvariants(async (sql) => (await db.query(sql)).rows);
    } finally {
      await db.close();
    }
  }, 180_000);
});

describe.runIf(faultTestsEnabled && Boolean(process.env.TEST_DATABASE_URL || pgBinDir()))(
  "SIGKILL during writes: PostgreSQL",
  () => {
    let server: ServerProcess | undefined;
    let privatePg: PrivatePostgres | undefined;
    let drop: (() => Promise<void>) | undefined;
    afterAll(async () => {
      server?.child.kill("SIGKILL");
      await drop?.();
      await privatePg?.destroy();
    });

    it("keeps every acknowledged write, no partial batch, invariants hold", async () => {
      // The shared test server when CI provides one (only this database is touched), else a private one.
      const created = await createTestDatabase();
      drop = created?.drop;
      if (!created) privatePg = await startPrivatePostgres();
      const url = created?.url ?? (await (privatePg as PrivatePostgres).createDatabase("kill"));
      const env = { ...testEnv({ LOG_LEVEL: "warn" }), NODE_ENV: "development", DATABASE_URL: url };
      const run = await killMidLoop(env);
      server = run.server;
      await verify(run.server.url, run.token, run.projectId, run.ops);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await assertInvariants(async (sql) => (await client.query(sql)).rows);
      } finally {
        await client.end();
      }
    }, 180_000);
  },
);
