import { pino } from "pino";
import type { DestinationSlug } from "../../src/destinations/registry.js";
import type { DestinationCtx, DestinationEnv, IoCtx } from "../../src/destinations/types.js";
import { createHttpClient } from "../../src/lib/http-client.js";
import { FakeAws } from "../fakes/aws-parameter-store.js";
import type { FakeDestination } from "../fakes/fake-destination.js";
import { FakeGitHub } from "../fakes/github.js";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { FakeTriggerDev } from "../fakes/trigger-dev.js";

/**
 * How the contract suite reaches each registry entry: its fake, the location the ctx points at, and
 * good/bad credentials. Adding a destination means adding an entry here (a test fails otherwise).
 */

export interface CtxOptions {
  allowInternal?: boolean;
  timeoutMs?: number;
  credentials?: Record<string, unknown>;
}

export interface ContractHarness {
  fake: FakeDestination;
  /** The fake's seed/read scope that the ctx points at. */
  scope: string;
  ctx(opts?: CtxOptions): DestinationCtx;
  io(opts?: CtxOptions): IoCtx;
  goodCredentials: Record<string, unknown> & { method: string };
  /** Wrong credentials and the secret inside them, which must never surface in a message. */
  badCredentials: { credentials: Record<string, unknown> & { method: string }; secret: string };
  /** Strings that must never appear in an error message (tokens, keys). */
  secrets: string[];
}

export interface ContractTarget {
  start(): Promise<ContractHarness>;
  /** Items per list page of the vendor API (the paging case seeds more than two pages). */
  pageSize: number;
  /** The destination URL is user-supplied, so the SSRF guard must refuse a loopback fake. */
  guarded: boolean;
  /** The fake passes a Retry-After header through on 429 (AWS has none; the adapter suggests a delay). */
  honoursRetryAfter: boolean;
}

const log = pino({ level: "silent" });

function harness(
  fake: FakeDestination,
  scope: string,
  parts: {
    config: unknown;
    syncOptions?: unknown;
    env?: DestinationEnv;
    good: Record<string, unknown> & { method: string };
    bad: { credentials: Record<string, unknown> & { method: string }; secret: string };
    secrets: string[];
  },
): ContractHarness {
  const io = (o: CtxOptions = {}): IoCtx => ({
    http: createHttpClient({ allowInternal: o.allowInternal ?? true, timeoutMs: o.timeoutMs ?? 5000 }),
    log,
    signal: new AbortController().signal,
    env: parts.env ?? {},
    orgId: "org-ferry-test",
  });
  return {
    fake,
    scope,
    io,
    ctx: (o = {}) => ({
      ...io(o),
      config: parts.config,
      syncOptions: parts.syncOptions ?? {},
      credentials: o.credentials ?? parts.good,
    }),
    goodCredentials: parts.good,
    badCredentials: parts.bad,
    secrets: parts.secrets,
  };
}

export const contractTargets: Record<DestinationSlug, ContractTarget> = {
  "hashicorp-vault": {
    pageSize: 50,
    guarded: true,
    honoursRetryAfter: true,
    async start() {
      const fake = await new FakeVault().start();
      return harness(fake, "secret/ferry/app", {
        config: { mount: "secret", path: "ferry/app" },
        good: { method: "access-token", instanceUrl: fake.url, accessToken: fake.token },
        bad: {
          credentials: { method: "access-token", instanceUrl: fake.url, accessToken: "hvs.WRONGtoken123" },
          secret: "hvs.WRONGtoken123",
        },
        secrets: [fake.token],
      });
    },
  },
  "trigger-dev": {
    pageSize: 50,
    guarded: true,
    honoursRetryAfter: true,
    async start() {
      const fake = await new FakeTriggerDev().start();
      return harness(fake, "proj_ferry/dev", {
        config: { projectRef: "proj_ferry", environment: "dev" },
        good: { method: "api-key", apiKey: fake.apiKey, instanceUrl: fake.url },
        bad: {
          credentials: { method: "api-key", apiKey: "tr_dev_WRONGkey999", instanceUrl: fake.url },
          secret: "tr_dev_WRONGkey999",
        },
        secrets: [fake.apiKey],
      });
    },
  },
  github: {
    pageSize: 100,
    guarded: true,
    honoursRetryAfter: true,
    async start() {
      const fake = await new FakeGitHub().start();
      return harness(fake, "repo:acme/web", {
        config: { scope: "repository", owner: "acme", repo: "web" },
        env: { GITHUB_API_URL: fake.url },
        good: { method: "pat", personalAccessToken: fake.token, instanceType: "cloud" },
        bad: {
          credentials: { method: "pat", personalAccessToken: "ghp_WRONGtoken4567", instanceType: "cloud" },
          secret: "ghp_WRONGtoken4567",
        },
        secrets: [fake.token],
      });
    },
  },
  "aws-parameter-store": {
    pageSize: 10,
    guarded: false, // the endpoint is operator configuration, not user input
    honoursRetryAfter: false,
    async start() {
      const fake = await new FakeAws().start();
      return harness(fake, "/ferry/app/", {
        config: { region: "us-east-1", path: "/ferry/app/" },
        env: { AWS_ENDPOINT_URL_SSM: fake.url, AWS_ENDPOINT_URL_STS: fake.url },
        good: { method: "access-key", accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
        bad: {
          credentials: {
            method: "access-key",
            accessKeyId: "AKIAWRONGKEY0000001",
            secretAccessKey: "wrong/secret/key",
          },
          secret: "wrong/secret/key",
        },
        secrets: [fake.secretAccessKey],
      });
    },
  },
};

/** A bare IoCtx for destination-specific tests (internal addresses allowed: the fakes are on loopback). */
export function testIo(env: DestinationEnv = {}, opts: { timeoutMs?: number; orgId?: string } = {}): IoCtx {
  return {
    http: createHttpClient({ allowInternal: true, timeoutMs: opts.timeoutMs ?? 5000 }),
    log,
    signal: new AbortController().signal,
    env,
    orgId: opts.orgId ?? "org-ferry-test",
  };
}
