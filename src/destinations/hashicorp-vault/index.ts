import { z } from "zod";
import { defineDestination } from "../types.js";
import { createVaultClient } from "./client.js";
import { hashicorpVaultConfigSchema } from "./config.js";
import { hashicorpVaultConnection } from "./connection.js";

export { hashicorpVaultConfigSchema } from "./config.js";
export { hashicorpVaultConnection } from "./connection.js";

// Vault stores JSON; other tools may have written numbers or objects. Compare and import as strings.
const asString = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/**
 * The whole sync is ONE Vault secret at mount/path; each key is a field of it. So apply is read, merge,
 * and exactly one write, which also means one new KV v2 version per run rather than one per key.
 */
export const hashicorpVault = defineDestination({
  slug: "hashicorp-vault",
  name: "Hashicorp Vault",
  connectionApp: hashicorpVaultConnection.app,
  connection: hashicorpVaultConnection,
  configSchema: hashicorpVaultConfigSchema,
  syncOptionsSchema: z.object({}),
  capabilities: { list: true, listValues: true, import: true, removeOnDelete: true },

  async list(ctx) {
    const vault = createVaultClient(ctx.credentials, ctx);
    const version = await vault.kvVersion(ctx.config.mount);
    const fields = await vault.read(ctx.config.mount, ctx.config.path, version);
    return new Map(Object.entries(fields).map(([k, v]) => [k, asString(v)]));
  },

  async apply(ctx, plan) {
    const { mount, path } = ctx.config;
    const vault = createVaultClient(ctx.credentials, ctx);
    const version = await vault.kvVersion(mount);
    // A Map, not an object: a field named "__proto__" must stay a field.
    const fields = new Map(Object.entries(await vault.read(mount, path, version)));
    let changed = false;
    for (const key of plan.delete) changed = fields.delete(key) || changed;
    for (const [key, value] of Object.entries(plan.upsert)) {
      if (fields.get(key) !== value) {
        fields.set(key, value);
        changed = true;
      }
    }
    // Nothing to do: skip the write so KV v2 does not grow a version per no-op run.
    if (!changed) return { writes: 0 };
    if (fields.size === 0 && version === 1) await vault.remove(mount, path);
    else await vault.write(mount, path, version, Object.fromEntries(fields));
    ctx.log.debug({ fields: fields.size, kv: version }, "vault secret written");
    return { writes: 1 };
  },
});
