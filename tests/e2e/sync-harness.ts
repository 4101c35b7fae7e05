import type { FastifyInstance } from "fastify";
import { FakeAws } from "../fakes/aws-parameter-store.js";
import type { FakeDestination } from "../fakes/fake-destination.js";
import { FakeGitHub } from "../fakes/github.js";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { FakeTriggerDev } from "../fakes/trigger-dev.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, type Json, ok, type World } from "../helpers/fixtures.js";

/**
 * Everything a sync test needs per destination: its fake, how to create a connection to it, a
 * destinationConfig, and the fake scope that config points at. `env` is what the app must be built with
 * (AWS and GitHub endpoints come from configuration only).
 */
export interface SyncTarget {
  slug: "hashicorp-vault" | "trigger-dev" | "github" | "aws-parameter-store";
  app: string;
  fake: FakeDestination;
  scope: string;
  connection: { method: string; credentials: Record<string, unknown> };
  badConnection: { method: string; credentials: Record<string, unknown> };
  destinationConfig: Record<string, unknown>;
  env: Record<string, string>;
}

export async function startTargets(): Promise<Record<SyncTarget["slug"], SyncTarget>> {
  const [vault, trigger, github, aws] = await Promise.all([
    new FakeVault().start(),
    new FakeTriggerDev().start(),
    new FakeGitHub().start(),
    new FakeAws().start(),
  ]);
  return {
    "hashicorp-vault": {
      slug: "hashicorp-vault",
      app: "hashicorp-vault",
      fake: vault,
      scope: "secret/ferry/app",
      connection: {
        method: "access-token",
        credentials: { instanceUrl: vault.url, accessToken: vault.token },
      },
      badConnection: {
        method: "access-token",
        credentials: { instanceUrl: vault.url, accessToken: "hvs.WRONG12345" },
      },
      destinationConfig: { mount: "secret", path: "ferry/app" },
      env: {},
    },
    "trigger-dev": {
      slug: "trigger-dev",
      app: "trigger-dev",
      fake: trigger,
      scope: "proj_ferry/dev",
      connection: { method: "api-key", credentials: { apiKey: trigger.apiKey, instanceUrl: trigger.url } },
      badConnection: {
        method: "api-key",
        credentials: { apiKey: "tr_dev_WRONG999", instanceUrl: trigger.url },
      },
      destinationConfig: { projectRef: "proj_ferry", environment: "dev" },
      env: {},
    },
    github: {
      slug: "github",
      app: "github",
      fake: github,
      scope: "repo:acme/web",
      connection: { method: "pat", credentials: { personalAccessToken: github.token } },
      badConnection: { method: "pat", credentials: { personalAccessToken: "ghp_WRONGtoken4567" } },
      destinationConfig: { scope: "repository", owner: "acme", repo: "web" },
      env: { GITHUB_API_URL: github.url },
    },
    "aws-parameter-store": {
      slug: "aws-parameter-store",
      app: "aws",
      fake: aws,
      scope: "/ferry/app/",
      connection: {
        method: "access-key",
        credentials: { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey },
      },
      badConnection: {
        method: "access-key",
        credentials: { accessKeyId: "AKIAWRONGKEY0000001", secretAccessKey: "wrong/secret/key" },
      },
      destinationConfig: { region: "us-east-1", path: "/ferry/app/" },
      env: { AWS_ENDPOINT_URL_SSM: aws.url, AWS_ENDPOINT_URL_STS: aws.url },
    },
  };
}

export const targetEnv = (targets: Record<string, SyncTarget>) =>
  Object.assign({}, ...Object.values(targets).map((t) => t.env)) as Record<string, string>;

export async function makeConnection(app: FastifyInstance, token: string, t: SyncTarget, name: string) {
  const j = await ok(
    call(app, "POST", `/api/v1/app-connections/${t.app}`, { token, body: { name, ...t.connection } }),
  );
  return j.appConnection as Json;
}

export async function putSecrets(
  app: FastifyInstance,
  token: string,
  where: { projectId: string; environment: string; secretPath: string },
  secrets: Record<string, string>,
) {
  await ok(
    call(app, "POST", "/api/v4/secrets/batch", {
      token,
      body: {
        ...where,
        secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      },
    }),
  );
}

/**
 * Polls the sync until `done(sync)` holds, with a bounded deadline (never a fixed sleep). Returns the
 * last view; throws with it when the deadline passes.
 */
export async function waitForSync(
  app: FastifyInstance,
  token: string,
  slug: string,
  id: string,
  done: (s: Json) => boolean,
  timeoutMs = 30_000,
): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  let last: Json = {};
  while (Date.now() < deadline) {
    const r = await call(app, "GET", `/api/v1/secret-syncs/${slug}/${id}`, { token });
    if (r.status === 404) return { gone: true };
    last = r.json.secretSync as Json;
    if (done(last)) return last;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`sync ${id} did not reach the expected state: ${JSON.stringify(last)}`);
}

/** Waits until a predicate on anything (e.g. a fake's state) holds, bounded. */
export async function eventually(
  check: () => boolean,
  timeoutMs = 30_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The usual sync test world: all four fakes, an app pointed at them, and a bootstrapped instance. */
export type SyncWorld = { t: TestApp; w: World; targets: Record<SyncTarget["slug"], SyncTarget> };

export async function startSyncWorld(): Promise<SyncWorld> {
  const targets = await startTargets();
  const t = await buildTestApp({ env: targetEnv(targets) });
  return { t, w: await bootstrap(t.app), targets };
}

export async function stopSyncWorld(s: Partial<SyncWorld>): Promise<void> {
  await s.t?.close();
  for (const target of Object.values(s.targets ?? {})) await target.fake.close();
}
