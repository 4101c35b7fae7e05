import { afterEach, describe, expect, it } from "vitest";
import { testIo } from "../../../tests/contract/targets.js";
import { FakeVault, type FakeVaultOptions } from "../../../tests/fakes/hashicorp-vault.js";
import type { DestinationCtx } from "../types.js";
import { hashicorpVault, hashicorpVaultConfigSchema } from "./index.js";

let fake: FakeVault | undefined;
afterEach(async () => {
  await fake?.close();
});

async function setup(
  opts: FakeVaultOptions = {},
  creds: Record<string, unknown> = {},
  config = { mount: "secret", path: "app" },
) {
  fake = await new FakeVault(opts).start();
  const ctx: DestinationCtx = {
    ...testIo(),
    config,
    syncOptions: {},
    credentials: { method: "access-token", instanceUrl: fake.url, accessToken: fake.token, ...creds },
  };
  return { fake, ctx };
}

describe("hashicorp-vault", () => {
  it("writes KV v1 as the bare fields and deletes the entry when nothing is left", async () => {
    const { fake, ctx } = await setup({}, {}, { mount: "kv", path: "team/app" });
    await hashicorpVault.apply(ctx, { upsert: { A: "1", B: "2" }, delete: [] });
    expect(fake.calls.find((c) => c.write)?.body).toEqual({ A: "1", B: "2" });
    expect(fake.read("kv/team/app")).toEqual({ A: "1", B: "2" });
    fake.clearCalls();
    const result = await hashicorpVault.apply(ctx, { upsert: {}, delete: ["A", "B"] });
    expect(result.writes).toBe(1);
    expect(fake.writes.map((c) => c.method)).toEqual(["DELETE"]);
    expect(fake.has("kv/team/app")).toBe(false);
  });

  it("writes KV v2 under data/ and keeps an empty secret rather than deleting it", async () => {
    const { fake, ctx } = await setup();
    await hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.writes[0]?.path).toBe("/v1/secret/data/app");
    await hashicorpVault.apply(ctx, { upsert: {}, delete: ["A"] });
    expect(fake.has("secret/app")).toBe(true);
    expect(fake.read("secret/app")).toEqual({});
  });

  it("skips the write when the plan changes nothing", async () => {
    const { fake, ctx } = await setup();
    fake.seed("secret/app", { A: "1" });
    expect(await hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: ["MISSING"] })).toEqual({
      writes: 0,
    });
    expect(fake.writes).toHaveLength(0);
  });

  it("logs in with AppRole first and uses the issued token", async () => {
    const { fake, ctx } = await setup(
      {},
      { method: "app-role", roleId: "fake-role-id", secretId: "fake-secret-id", accessToken: undefined },
    );
    await hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.calls[0]?.path).toBe("/v1/auth/approle/login");
    expect(String(fake.calls[1]?.headers["x-vault-token"])).toMatch(/^hvs\.approle-/);
  });

  it("falls back to the UI mount endpoint when sys/mounts is forbidden", async () => {
    const { fake, ctx } = await setup({ sysMountsForbidden: true });
    await hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.calls.map((c) => c.path)).toContain("/v1/sys/internal/ui/mounts/secret");
    expect(fake.read("secret/app")).toEqual({ A: "1" });
  });

  it("sends the namespace header", async () => {
    const { fake, ctx } = await setup({ namespace: "team-a" }, { namespace: "team-a" });
    await hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.calls.every((c) => c.headers["x-vault-namespace"] === "team-a")).toBe(true);
  });

  it("fails non-retryably on a missing or non-KV mount", async () => {
    const { ctx } = await setup({}, {}, { mount: "nope", path: "app" });
    await expect(hashicorpVault.apply(ctx, { upsert: { A: "1" }, delete: [] })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      retryable: false,
      message: "Mount 'nope' not found",
    });
    await expect(
      hashicorpVault.list?.({ ...ctx, config: { mount: "transit", path: "x" } }),
    ).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  });

  it("validates destinationConfig with Infisical's rules", () => {
    expect(hashicorpVaultConfigSchema.parse({ mount: " secret ", path: "/a/b.c/" })).toEqual({
      mount: "secret",
      path: "a/b.c",
    });
    expect(hashicorpVaultConfigSchema.safeParse({ mount: "", path: "a" }).error?.issues[0]?.message).toBe(
      "Secrets Engine Mount required",
    );
    expect(
      hashicorpVaultConfigSchema.safeParse({ mount: "s", path: "a//b" }).error?.issues[0]?.message,
    ).toMatch(/^Invalid Vault path format/);
  });
});
