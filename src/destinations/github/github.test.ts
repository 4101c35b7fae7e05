import { generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { testIo } from "../../../tests/contract/targets.js";
import { FakeGitHub, type FakeGitHubOptions } from "../../../tests/fakes/github.js";
import type { DestinationCtx, DestinationEnv } from "../types.js";
import { github, githubApiBaseUrl, githubConfigSchema } from "./index.js";

let fake: FakeGitHub | undefined;
afterEach(async () => {
  await fake?.close();
});

async function setup(
  config: unknown,
  opts: FakeGitHubOptions = {},
  creds?: Record<string, unknown>,
  env: DestinationEnv = {},
) {
  fake = await new FakeGitHub(opts).start();
  const ctx: DestinationCtx = {
    ...testIo({ GITHUB_API_URL: fake.url, ...env }),
    config: githubConfigSchema.parse(config),
    syncOptions: {},
    credentials: creds ?? { method: "pat", personalAccessToken: fake.token, instanceType: "cloud" },
  };
  return { fake, ctx };
}

describe("github", () => {
  it("seals values (the fake opens them) and sends organization visibility", async () => {
    const { fake, ctx } = await setup({
      scope: "organization",
      org: "acme",
      visibility: "selected",
      selectedRepositoryIds: [7],
    });
    await github.apply(ctx, { upsert: { API_KEY: "plain-text-value" }, delete: [] });
    const put = fake.writes[0];
    expect(put?.path).toBe("/orgs/acme/actions/secrets/API_KEY");
    expect(put?.body).toMatchObject({
      key_id: fake.keyId,
      visibility: "selected",
      selected_repository_ids: [7],
    });
    expect(JSON.stringify(put?.body)).not.toContain("plain-text-value");
    expect(fake.read("org:acme")).toEqual({ API_KEY: "plain-text-value" });
    expect(fake.calls[0]?.headers["x-github-api-version"]).toBe("2022-11-28");
  });

  it("writes environment secrets under the environment path", async () => {
    const { fake, ctx } = await setup({
      scope: "repository-environment",
      owner: "acme",
      repo: "web",
      env: "production",
    });
    await github.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.read("env:acme/web/production")).toEqual({ A: "1" });
    expect((await github.list?.(ctx))?.get("A")).toBeNull();
  });

  it("attributes a rejected write to its key", async () => {
    const { ctx } = await setup({ scope: "repository", owner: "acme", repo: "web" });
    await expect(
      github.apply(ctx, { upsert: { GITHUB_TOKEN: "x-value" }, delete: [] }),
    ).rejects.toMatchObject({
      code: "REJECTED",
      retryable: false,
      secretKey: "GITHUB_TOKEN",
    });
  });

  it("authenticates as a GitHub App installation with an RS256 JWT (PKCS#1 key, escaped newlines)", async () => {
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString().replace(/\n/g, "\\n");
    const app = { appId: "12345", publicKey, installations: ["42"] };
    const creds = { method: "github-app", installationId: "42", instanceType: "cloud" };
    const { fake, ctx } = await setup({ scope: "repository", owner: "acme", repo: "web" }, { app }, creds, {
      GITHUB_APP_ID: "12345",
      GITHUB_APP_PRIVATE_KEY: pem,
    });
    await github.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.calls[0]?.path).toBe("/app/installations/42/access_tokens");
    expect(fake.read("repo:acme/web")).toEqual({ A: "1" });
    await expect(github.connection.validate(creds as never, ctx)).resolves.toBeUndefined();
    await expect(
      github.connection.validate({ ...creds, installationId: "99" } as never, ctx),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/Unable to validate GitHub App installation/),
    });
  });

  it("refuses GitHub App connections when the server has no app configured", async () => {
    const { ctx } = await setup(
      { scope: "repository", owner: "a", repo: "b" },
      {},
      { method: "github-app", installationId: "1", instanceType: "cloud" },
    );
    await expect(github.apply(ctx, { upsert: { A: "1" }, delete: [] })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      retryable: false,
    });
  });

  it("picks the Enterprise host over the server override over github.com", () => {
    const server = {
      method: "pat",
      personalAccessToken: "t",
      instanceType: "server",
      host: "ghe.example.com",
    } as const;
    expect(githubApiBaseUrl(server, { GITHUB_API_URL: "http://x" })).toBe("https://ghe.example.com/api/v3");
    expect(githubApiBaseUrl({ ...server, instanceType: "cloud" }, { GITHUB_API_URL: "http://x/" })).toBe(
      "http://x",
    );
    expect(githubApiBaseUrl({ ...server, instanceType: "cloud" }, {})).toBe("https://api.github.com");
  });

  it("validates config and credentials with Infisical's messages, and upper-cases keys", () => {
    const msg = (v: unknown) => githubConfigSchema.safeParse(v).error?.issues[0]?.message;
    expect(msg({ scope: "organization", org: "a", visibility: "selected" })).toBe(
      "Select at least 1 repository",
    );
    expect(msg({ scope: "organization", org: "a", visibility: "all", selectedRepositoryIds: [1] })).toBe(
      'Selected repositories is only supported for visibility "Selected"',
    );
    expect(msg({ scope: "repository", owner: "", repo: "r" })).toBe("Repository owner name required");
    expect(
      github.connection.methods.pat.safeParse({ personalAccessToken: "t", instanceType: "server" }).error
        ?.issues[0]?.message,
    ).toBe("Host is required for server instance type");
    expect(github.normalizeKey?.("db_url")).toBe("DB_URL");
  });
});
