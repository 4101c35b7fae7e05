import { createPrivateKey } from "node:crypto";
import { Octokit } from "@octokit/rest";
import { SignJWT } from "jose";
import sodium from "libsodium-wrappers";
import { errorFromResponse } from "../../lib/http-client.js";
import { DestinationError, isDestinationError } from "../errors.js";
import type { CredentialsOf, DestinationEnv, IoCtx } from "../types.js";
import type { GitHubConfig, githubMethods } from "./config.js";

export type GitHubCredentials = CredentialsOf<typeof githubMethods>;

const CLOUD_API = "https://api.github.com";

/** Enterprise host wins; then the server-wide override (tests, proxies); then github.com. */
export function githubApiBaseUrl(creds: GitHubCredentials, env: DestinationEnv): string {
  if (creds.instanceType === "server" && creds.host) return `https://${creds.host}/api/v3`;
  return (env.GITHUB_API_URL ?? CLOUD_API).replace(/\/+$/, "");
}

/** Maps an Octokit failure (or our own fetch's DestinationError it wraps) to a DestinationError. */
export function githubError(
  err: unknown,
  what: string,
  sensitive: string[],
  secretKey?: string,
): DestinationError {
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  if (isDestinationError(err)) return secretKey ? err.withSecretKey(secretKey) : err;
  if (isDestinationError(cause)) return secretKey ? cause.withSecretKey(secretKey) : cause;
  const e = err as { status?: number; response?: { headers?: Record<string, unknown>; data?: unknown } };
  if (typeof e.status === "number" && e.response) {
    const headers = new Headers();
    for (const [k, v] of Object.entries(e.response.headers ?? {}))
      if (v !== undefined) headers.set(k, String(v));
    return errorFromResponse(
      { status: e.status, headers, body: e.response.data },
      { what, sensitive, secretKey },
    );
  }
  return new DestinationError({ code: "NETWORK", message: `${what} failed`, retryable: true, cause: err });
}

function octokitFor(baseUrl: string, auth: string, io: Pick<IoCtx, "http" | "signal" | "log">): Octokit {
  // Octokit logs failed requests to the console by default; route them to our logger at debug level
  // (failures are reported through the DestinationError we throw).
  const debug = (msg: string) => io.log.debug({ source: "octokit" }, msg);
  const log = { debug, info: debug, warn: debug, error: debug };
  const octokit = new Octokit({ auth, baseUrl, log, request: { fetch: io.http.fetch, signal: io.signal } });
  octokit.hook.before("request", (options) => {
    options.headers["x-github-api-version"] = "2022-11-28";
  });
  return octokit;
}

/** RS256 app JWT → installation access token (valid one hour; we mint one per run). */
async function installationToken(
  creds: GitHubCredentials & { method: "github-app" },
  io: IoCtx,
  baseUrl: string,
) {
  const appId = io.env.GITHUB_APP_ID;
  const pem = io.env.GITHUB_APP_PRIVATE_KEY;
  if (!appId || !pem) {
    throw new DestinationError({
      code: "INVALID_CONFIG",
      message: "GitHub App connections need GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY on the server",
      retryable: false,
    });
  }
  // Keys pasted into a one-line env var arrive with literal "\n" (Infisical issue #3702).
  const key = createPrivateKey(pem.includes("\\n") ? pem.replace(/\\n/g, "\n") : pem);
  const now = Math.floor(Date.now() / 1000);
  // iat 60 s in the past absorbs clock drift, as GitHub recommends; exp stays under the 10-minute cap.
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: "RS256" })
    .setIssuedAt(now - 60)
    .setExpirationTime(now + 540)
    .setIssuer(appId)
    .sign(key);
  try {
    const res = await octokitFor(baseUrl, jwt, io).rest.apps.createInstallationAccessToken({
      installation_id: Number(creds.installationId),
    });
    return res.data.token;
  } catch (err) {
    throw githubError(err, "GitHub App installation token", [jwt]);
  }
}

/** An authenticated Octokit plus the token (so callers can scrub it from messages). */
export async function openGitHub(
  creds: GitHubCredentials,
  io: IoCtx,
): Promise<{ octokit: Octokit; token: string }> {
  const baseUrl = githubApiBaseUrl(creds, io.env);
  const token =
    creds.method === "pat" ? creds.personalAccessToken : await installationToken(creds, io, baseUrl);
  return { octokit: octokitFor(baseUrl, token, io), token };
}

/** libsodium sealed box against the scope's public key, base64 (original variant) as GitHub expects. */
export async function sealSecret(value: string, publicKeyB64: string): Promise<string> {
  await sodium.ready;
  const publicKey = sodium.from_base64(publicKeyB64, sodium.base64_variants.ORIGINAL);
  const sealed = sodium.crypto_box_seal(sodium.from_string(value), publicKey);
  return sodium.to_base64(sealed, sodium.base64_variants.ORIGINAL);
}

/** The four calls a sync needs, bound to the configured scope (org, repo or repo environment). */
export function scopeApi(octokit: Octokit, c: GitHubConfig) {
  const a = octokit.rest.actions;
  if (c.scope === "organization") {
    return {
      list: () => octokit.paginate(a.listOrgSecrets, { org: c.org, per_page: 100 }),
      publicKey: async () => (await a.getOrgPublicKey({ org: c.org })).data,
      put: (name: string, encrypted_value: string, key_id: string) =>
        a.createOrUpdateOrgSecret({
          org: c.org,
          secret_name: name,
          encrypted_value,
          key_id,
          visibility: c.visibility,
          ...(c.visibility === "selected" ? { selected_repository_ids: c.selectedRepositoryIds ?? [] } : {}),
        }),
      remove: (name: string) => a.deleteOrgSecret({ org: c.org, secret_name: name }),
    };
  }
  if (c.scope === "repository") {
    const r = { owner: c.owner, repo: c.repo };
    return {
      list: () => octokit.paginate(a.listRepoSecrets, { ...r, per_page: 100 }),
      publicKey: async () => (await a.getRepoPublicKey(r)).data,
      put: (name: string, encrypted_value: string, key_id: string) =>
        a.createOrUpdateRepoSecret({ ...r, secret_name: name, encrypted_value, key_id }),
      remove: (name: string) => a.deleteRepoSecret({ ...r, secret_name: name }),
    };
  }
  const e = { owner: c.owner, repo: c.repo, environment_name: c.env };
  return {
    list: () => octokit.paginate(a.listEnvironmentSecrets, { ...e, per_page: 100 }),
    publicKey: async () => (await a.getEnvironmentPublicKey(e)).data,
    put: (name: string, encrypted_value: string, key_id: string) =>
      a.createOrUpdateEnvironmentSecret({ ...e, secret_name: name, encrypted_value, key_id }),
    remove: (name: string) => a.deleteEnvironmentSecret({ ...e, secret_name: name }),
  };
}
