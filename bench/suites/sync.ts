import { FakeAws } from "../../tests/fakes/aws-parameter-store.js";
import type { RecordedCall } from "../../tests/fakes/fake-destination.js";
import { FakeVault } from "../../tests/fakes/hashicorp-vault.js";
import { api, updateSecret, type World } from "../lib/ferry.js";
import { nowMs, sleep } from "../lib/procs.js";
import { type Spread, spread } from "../lib/stats.js";

/**
 * Sync throughput: every source secret (dev "/") to the HashiCorp Vault and AWS Parameter Store fakes
 * (the protocol-faithful fakes of tests/fakes, started in the driver process). Per run: create a sync
 * to a fresh destination location (auto-sync on, so creating it runs the first full sync), time it and
 * count the destination calls; then change ONE source secret and count the calls of the incremental sync
 * it triggers; then delete the syncs (without removing secrets) so later runs and suites never wake them.
 * Each count is compared with the least the destination API allows:
 * - SSM: GetParametersByPath returns at most 10 per page, so listing E existing parameters costs
 *   max(1, ceil(E/10)) calls, and each changed key one PutParameter;
 * - Vault: the whole sync is one KV secret: one read and one write.
 */

export interface CallCount {
  total: number;
  reads: number;
  writes: number;
  byAction: Record<string, number>;
}

export interface SyncRun {
  fullS: number;
  full: CallCount;
  incrementalS: number;
  incremental: CallCount;
  status: string;
}

export interface SyncFigure {
  destination: "hashicorp-vault" | "aws-parameter-store";
  secrets: number;
  fullTimeS: Spread;
  fullCalls: Spread;
  fullWrites: Spread;
  fullMinimum: number;
  fullRatio: Spread;
  incrementalCalls: Spread;
  incrementalWrites: Spread;
  incrementalMinimum: number;
  runs: SyncRun[];
}

export interface Fakes {
  vault: FakeVault;
  aws: FakeAws;
  close(): Promise<void>;
}

/** Started before Ferry: Ferry's AWS endpoint override must point at the SSM fake. */
export async function startFakes(): Promise<Fakes> {
  const vault = await new FakeVault().start();
  const aws = await new FakeAws().start();
  return { vault, aws, close: async () => void (await Promise.all([vault.close(), aws.close()])) };
}

function count(calls: readonly RecordedCall[]): CallCount {
  const byAction: Record<string, number> = {};
  for (const c of calls) {
    const a = c.action ?? `${c.method} ${c.path.replace(/\/bench\/r\d+.*/, "/bench/…")}`;
    byAction[a] = (byAction[a] ?? 0) + 1;
  }
  const writes = calls.filter((c) => c.write).length;
  return { total: calls.length, reads: calls.length - writes, writes, byAction };
}

type J = {
  secretSync: {
    id: string;
    syncStatus: string | null;
    lastSyncJobId: string | null;
    lastSyncMessage: string | null;
  };
};

/**
 * Polls the sync until `done` holds for its status. The poll interval grows with the wait (25 ms up to
 * 200 ms, at most 1/20 of the time waited so far): every poll is a request and a query on the server
 * being measured, and on embedded PGlite 40 polls a second took ~15% of the event loop from the sync.
 */
async function pollSync(
  w: World,
  dest: string,
  id: string,
  timeoutMs: number,
  done: (s: J["secretSync"]) => boolean,
) {
  const start = Date.now();
  for (;;) {
    const s = (await api<J>(w.base, "GET", `/api/v1/secret-syncs/${dest}/${id}`, undefined, w.token))
      .secretSync;
    if (done(s)) return s;
    if (Date.now() - start > timeoutMs)
      throw new Error(`${dest} sync ${id} did not finish (status ${s.syncStatus})`);
    await sleep(Math.min(200, Math.max(25, (Date.now() - start) / 20)));
  }
}

const finished = (s: J["secretSync"]) => s.syncStatus === "succeeded" || s.syncStatus === "failed";

/** Waits until no run of the sync is queued or running, so the next job id is the change's. */
async function waitForIdle(w: World, dest: string, id: string, timeoutMs: number) {
  // Change notifications are collected for a moment before they queue a run: let them land.
  await sleep(300);
  return pollSync(w, dest, id, timeoutMs, finished);
}

/** Waits for a run after `afterJob` to finish. */
function waitForRun(w: World, dest: string, id: string, afterJob: string | null, timeoutMs: number) {
  return pollSync(w, dest, id, timeoutMs, (s) => finished(s) && s.lastSyncJobId !== afterJob);
}

export interface SyncOptions {
  world: World;
  fakes: Fakes;
  secrets: number;
  /** A live source secret to change for the incremental sync. */
  changeName: string;
  reps: number;
  log: (s: string) => void;
}

export async function syncSuite(o: SyncOptions): Promise<SyncFigure[]> {
  const w = o.world;
  const { vault, aws } = o.fakes;
  // App connections belong to the organisation: its admin creates them, the project's identity uses them.
  const vaultConn = await api<{ appConnection: { id: string } }>(
    w.base,
    "POST",
    "/api/v1/app-connections/hashicorp-vault",
    {
      name: "bench-vault",
      method: "access-token",
      credentials: { instanceUrl: vault.url, accessToken: vault.token },
    },
    w.adminToken,
  );
  const awsConn = await api<{ appConnection: { id: string } }>(
    w.base,
    "POST",
    "/api/v1/app-connections/aws",
    {
      name: "bench-aws",
      method: "access-key",
      credentials: { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey },
    },
    w.adminToken,
  );
  const dests = [
    {
      slug: "hashicorp-vault" as const,
      fake: vault,
      connectionId: vaultConn.appConnection.id,
      config: (r: number) => ({ mount: "secret", path: `bench/r${r}` }),
    },
    {
      slug: "aws-parameter-store" as const,
      fake: aws,
      connectionId: awsConn.appConnection.id,
      config: (r: number) => ({ region: aws.region, path: `/bench/r${r}/` }),
    },
  ];
  const runs: Record<string, SyncRun[]> = { "hashicorp-vault": [], "aws-parameter-store": [] };
  for (let r = 0; r < o.reps; r++) {
    const made: {
      slug: string;
      id: string;
      job: string | null;
      fake: FakeVault | FakeAws;
      fullS: number;
      full: CallCount;
      status: string;
    }[] = [];
    for (const d of dests) {
      d.fake.clearCalls();
      const t0 = nowMs();
      const created = await api<J>(
        w.base,
        "POST",
        `/api/v1/secret-syncs/${d.slug}`,
        {
          name: `bench-${d.slug}-${r}`,
          projectId: w.projectId,
          connectionId: d.connectionId,
          environment: "dev",
          secretPath: "/",
          isAutoSyncEnabled: true,
          syncOptions: { initialSyncBehavior: "overwrite-destination" },
          destinationConfig: d.config(r),
        },
        w.token,
      );
      const s = await waitForRun(w, d.slug, created.secretSync.id, null, 600_000);
      const fullS = (nowMs() - t0) / 1000;
      if (s.syncStatus !== "succeeded") o.log(`  ${d.slug} full sync failed: ${s.lastSyncMessage}`);
      made.push({
        slug: d.slug,
        id: s.id,
        job: s.lastSyncJobId,
        fake: d.fake,
        fullS,
        full: count(d.fake.calls),
        status: s.syncStatus ?? "",
      });
    }
    // A run already queued (the seed's last change notifications can land just after the sync is
    // created) must finish first, and the run to wait for is the one after the newest job.
    for (const m of made) m.job = (await waitForIdle(w, m.slug, m.id, 120_000)).lastSyncJobId;
    // One change wakes both syncs; each fake only sees its own sync's calls.
    for (const m of made) m.fake.clearCalls();
    const t1 = nowMs();
    await updateSecret(w, "dev", o.changeName, `changed-${r}-${Date.now()}`);
    for (const m of made) {
      const s = await waitForRun(w, m.slug, m.id, m.job, 120_000);
      const incrementalS = (nowMs() - t1) / 1000;
      runs[m.slug]?.push({
        fullS: m.fullS,
        full: m.full,
        incrementalS,
        incremental: count(m.fake.calls),
        status: `${m.status}/${s.syncStatus}`,
      });
      await api(
        w.base,
        "DELETE",
        `/api/v1/secret-syncs/${m.slug}/${m.id}?removeSecrets=false`,
        undefined,
        w.token,
      );
      o.log(
        `  ${m.slug} run ${r + 1}: full ${m.fullS.toFixed(2)} s, ${m.full.total} calls; incremental ${count(m.fake.calls).total} calls`,
      );
    }
  }
  const n = o.secrets;
  return dests.map((d) => {
    const rs = runs[d.slug] ?? [];
    // Fresh destination: one (empty) listing page + one write per key (SSM), or one read + one write (Vault).
    const fullMinimum = d.slug === "aws-parameter-store" ? 1 + n : 2;
    const incrementalMinimum = d.slug === "aws-parameter-store" ? Math.max(1, Math.ceil(n / 10)) + 1 : 2;
    return {
      destination: d.slug,
      secrets: n,
      fullTimeS: spread(rs.map((x) => x.fullS)),
      fullCalls: spread(rs.map((x) => x.full.total)),
      fullWrites: spread(rs.map((x) => x.full.writes)),
      fullMinimum,
      fullRatio: spread(rs.map((x) => x.full.total / fullMinimum)),
      incrementalCalls: spread(rs.map((x) => x.incremental.total)),
      incrementalWrites: spread(rs.map((x) => x.incremental.writes)),
      incrementalMinimum,
      runs: rs,
    };
  });
}
