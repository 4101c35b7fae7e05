import type { AddressInfo } from "node:net";
import { InfisicalSDK } from "@infisical/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import {
  bootstrap,
  call,
  type Json,
  makeIdentity,
  makeProject,
  ok,
  type World,
} from "../helpers/fixtures.js";

/**
 * Issue 3 "Must show": the official Node SDK (@infisical/sdk 5.0.2) against a real listening server,
 * unchanged: universal-auth login, environment create, folders, and secret CRUD at the root and in a
 * sub-folder, including recursive listing.
 */
describe("@infisical/sdk 5.0.2 against a listening Ferry", () => {
  let t: TestApp;
  let w: World;
  let sdk: InfisicalSDK;
  let projectId: string;

  beforeAll(async () => {
    t = await buildTestApp();
    w = await bootstrap(t.app);
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    const ident = await makeIdentity(t.app, w, "sdk-client", "member");
    const project = await makeProject(t.app, w.adminToken, "SDK");
    projectId = project.id as string;
    await ok(
      call(t.app, "POST", `/api/v2/workspace/${projectId}/identity-memberships/${ident.id}`, {
        token: w.adminToken,
        body: { role: "admin" },
      }),
    );
    sdk = new InfisicalSDK({ siteUrl: `http://127.0.0.1:${port}` });
    await sdk.auth().universalAuth.login({ clientId: ident.clientId, clientSecret: ident.clientSecret });
  });
  afterAll(async () => t.close());

  it("creates an environment and folders, and lists them", async () => {
    const env = await sdk.environments().create({ name: "QA", slug: "qa", projectId });
    expect(env).toMatchObject({ name: "QA", slug: "qa", projectId });
    const folder = await sdk.folders().create({ name: "api", path: "/", projectId, environment: "qa" });
    expect(folder).toMatchObject({ name: "api", id: expect.any(String) });
    await sdk.folders().create({ name: "nested", path: "/api", projectId, environment: "qa" });
    const folders = await sdk.folders().listFolders({ projectId, environment: "qa", path: "/" });
    expect(folders.map((f) => f.name)).toEqual(["api"]);
    const nested = await sdk.folders().listFolders({ projectId, environment: "qa", path: "/api" });
    expect(nested.map((f) => f.name)).toEqual(["nested"]);
  });

  it("secret create / get / list / recursive list / update / delete at the root and in a sub-folder", async () => {
    const base = { projectId, environment: "qa" };
    for (const secretPath of ["/", "/api"]) {
      const created = await sdk.secrets().createSecret("DATABASE_URL", {
        ...base,
        secretPath,
        secretValue: `postgres://${secretPath}`,
        secretComment: "primary db",
      });
      expect(created.secret).toMatchObject({ secretKey: "DATABASE_URL", version: 1, type: "shared" });

      const got = await sdk.secrets().getSecret({ ...base, secretPath, secretName: "DATABASE_URL" });
      expect(got).toMatchObject({ secretKey: "DATABASE_URL", secretValue: `postgres://${secretPath}` });

      const listed = await sdk.secrets().listSecrets({ ...base, secretPath });
      expect(listed.secrets.map((s) => s.secretKey)).toEqual(["DATABASE_URL"]);

      const updated = await sdk.secrets().updateSecret("DATABASE_URL", {
        ...base,
        secretPath,
        secretValue: "changed",
      });
      expect(updated.secret).toMatchObject({ secretValue: "changed", version: 2 });
    }

    await sdk.secrets().createSecret("REF", { ...base, secretValue: `\${DATABASE_URL}!` });
    const all = await sdk.secrets().listSecrets({ ...base, secretPath: "/", recursive: true });
    const seen = all.secrets.map((s) => `${(s as Json).secretPath}:${s.secretKey}=${s.secretValue}`).sort();
    expect(seen).toEqual(["/:DATABASE_URL=changed", "/:REF=changed!", "/api:DATABASE_URL=changed"]);

    const withImports = await sdk.secrets().listSecretsWithImports({ ...base, secretPath: "/api" });
    expect(withImports.map((s) => s.secretKey)).toEqual(["DATABASE_URL"]);

    for (const secretPath of ["/", "/api"]) {
      const deleted = await sdk.secrets().deleteSecret("DATABASE_URL", { ...base, secretPath });
      expect(deleted.secret).toMatchObject({ secretKey: "DATABASE_URL", secretValue: "changed" });
    }
    const rest = await sdk.secrets().listSecrets({ ...base, secretPath: "/", recursive: true });
    expect(rest.secrets.map((s) => s.secretKey)).toEqual(["REF"]);
  });

  it("surfaces errors as the SDK's request errors with our message", async () => {
    await expect(
      sdk.secrets().getSecret({ projectId, environment: "qa", secretName: "MISSING" }),
    ).rejects.toThrow(/Secret with name 'MISSING' not found/);
  });
});
