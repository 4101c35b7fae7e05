import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeVault } from "../fakes/hashicorp-vault.js";
import { FakeTriggerDev } from "../fakes/trigger-dev.js";
import { buildTestApp, type TestApp } from "../helpers/build-test-app.js";
import { dumpAllTables } from "../helpers/db-dump.js";
import { bootstrap, call, makeIdentity, ok, type World } from "../helpers/fixtures.js";
import { makeOtherOrg } from "../helpers/other-org.js";

let t: TestApp;
let w: World;
let vault: FakeVault;
let trigger: FakeTriggerDev;

beforeAll(async () => {
  vault = await new FakeVault().start();
  trigger = await new FakeTriggerDev().start();
  t = await buildTestApp();
  w = await bootstrap(t.app);
}, 60_000);

afterAll(async () => {
  await t?.close();
  await vault?.close();
  await trigger?.close();
});

const vaultBody = (name: string, token?: string) => ({
  name,
  method: "access-token",
  credentials: { instanceUrl: vault.url, accessToken: token ?? vault.token },
});

describe("happy", () => {
  it("lists the connection options of the four destinations", async () => {
    const j = await ok(call(t.app, "GET", "/api/v1/app-connections/options", { token: w.adminToken }));
    expect(j.appConnectionOptions.map((o: { app: string }) => o.app).sort()).toEqual(
      ["aws", "github", "hashicorp-vault", "trigger-dev"].sort(),
    );
  });

  it("creates, reads, renames and deletes a connection without ever returning credentials", async () => {
    const created = (
      await ok(
        call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
          token: w.adminToken,
          body: vaultBody("vault-a"),
        }),
      )
    ).appConnection;
    expect(created).toMatchObject({
      name: "vault-a",
      app: "hashicorp-vault",
      method: "access-token",
      orgId: w.orgId,
    });
    expect(created.credentials).toEqual({});
    const id = created.id as string;
    for (const url of [
      `/api/v1/app-connections/hashicorp-vault/${id}`,
      "/api/v1/app-connections/hashicorp-vault/connection-name/vault-a",
    ]) {
      const r = await call(t.app, "GET", url, { token: w.adminToken });
      expect(r.status).toBe(200);
      expect(r.json.appConnection.id).toBe(id);
      expect(r.body).not.toContain(vault.token);
    }
    const all = await call(t.app, "GET", "/api/v1/app-connections", { token: w.adminToken });
    expect(all.json.appConnections.map((c: { id: string }) => c.id)).toContain(id);
    expect(all.body).not.toContain(vault.token);

    // Encrypted at rest: the token is nowhere in the database.
    expect(await dumpAllTables(t.services.dbh)).not.toContain(vault.token);

    const renamed = await ok(
      call(t.app, "PATCH", `/api/v1/app-connections/hashicorp-vault/${id}`, {
        token: w.adminToken,
        body: { name: "vault-b" },
      }),
    );
    expect(renamed.appConnection.name).toBe("vault-b");
    await ok(call(t.app, "DELETE", `/api/v1/app-connections/hashicorp-vault/${id}`, { token: w.adminToken }));
    expect(
      (await call(t.app, "GET", `/api/v1/app-connections/hashicorp-vault/${id}`, { token: w.adminToken }))
        .status,
    ).toBe(404);
  });

  it("returns public credential fields only (Trigger.dev instanceUrl, never the API key)", async () => {
    const r = await call(t.app, "POST", "/api/v1/app-connections/trigger-dev", {
      token: w.adminToken,
      body: {
        name: "trig",
        method: "api-key",
        credentials: { apiKey: trigger.apiKey, instanceUrl: trigger.url },
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.appConnection.credentials).toEqual({ instanceUrl: trigger.url });
    expect(r.body).not.toContain(trigger.apiKey);
  });
});

describe("errors", () => {
  it("validates credentials with a real call: wrong token → 400, readable, token-free", async () => {
    const r = await call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token: w.adminToken,
      body: vaultBody("bad", "hvs.WRONGtoken12345"),
    });
    expect(r.status).toBe(400);
    expect(r.json.message).toMatch(/validate/i);
    expect(r.body).not.toContain("hvs.WRONGtoken12345");
  });

  it("422 for a missing credential field, an unknown method or a non-uuid id; 404 for another app's id", async () => {
    const missing = await call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token: w.adminToken,
      body: { name: "x", method: "access-token", credentials: { instanceUrl: vault.url } },
    });
    expect(missing.status).toBe(422);
    const method = await call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token: w.adminToken,
      body: { name: "x", method: "nope", credentials: {} },
    });
    expect(method.status).toBe(422);
    expect(
      (await call(t.app, "GET", "/api/v1/app-connections/github/not-a-uuid", { token: w.adminToken })).status,
    ).toBe(422);
    const c = (
      await ok(
        call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
          token: w.adminToken,
          body: vaultBody("v-other"),
        }),
      )
    ).appConnection;
    expect(
      (await call(t.app, "GET", `/api/v1/app-connections/github/${c.id}`, { token: w.adminToken })).status,
    ).toBe(404);
  });

  it("names are unique per organisation", async () => {
    await ok(
      call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
        token: w.adminToken,
        body: vaultBody("dup"),
      }),
    );
    const again = await call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token: w.adminToken,
      body: vaultBody("dup"),
    });
    expect(again.status).toBe(400);
    expect(again.json.message).toContain('"dup" already exists');
  });
});

describe("permissions", () => {
  it("org members may read but not manage; another organisation sees 404", async () => {
    const c = (
      await ok(
        call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
          token: w.adminToken,
          body: vaultBody("perm"),
        }),
      )
    ).appConnection;
    const member = await makeIdentity(t.app, w, "conn-member", "member");
    expect(
      (await call(t.app, "GET", `/api/v1/app-connections/hashicorp-vault/${c.id}`, { token: member.token }))
        .status,
    ).toBe(200);
    const denied = await call(t.app, "POST", "/api/v1/app-connections/hashicorp-vault", {
      token: member.token,
      body: vaultBody("m"),
    });
    expect(denied.status).toBe(403);
    const other = await makeOtherOrg(t);
    expect(
      (await call(t.app, "GET", `/api/v1/app-connections/hashicorp-vault/${c.id}`, { token: other.token }))
        .status,
    ).toBe(404);
    expect(
      (await call(t.app, "DELETE", `/api/v1/app-connections/hashicorp-vault/${c.id}`, { token: other.token }))
        .status,
    ).toBe(404);
  });
});
