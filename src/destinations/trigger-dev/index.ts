import { defineDestination } from "../types.js";
import { createTriggerDevClient } from "./client.js";
import { triggerDevConfigSchema, triggerDevSyncOptionsSchema } from "./config.js";
import { triggerDevConnection } from "./connection.js";

export { triggerDevConfigSchema, triggerDevSyncOptionsSchema } from "./config.js";
export { triggerDevConnection } from "./connection.js";

export const triggerDev = defineDestination({
  slug: "trigger-dev",
  name: "Trigger.dev",
  connectionApp: triggerDevConnection.app,
  connection: triggerDevConnection,
  configSchema: triggerDevConfigSchema,
  syncOptionsSchema: triggerDevSyncOptionsSchema,
  // Trigger.dev redacts secret values on read, so no import and no value comparison.
  capabilities: { list: true, listValues: false, import: false, removeOnDelete: true },

  async list(ctx) {
    const vars = await createTriggerDevClient(ctx.credentials, ctx).listVars(ctx.config);
    return new Map(
      vars.map((v) => [v.name, v.isSecret === false && typeof v.value === "string" ? v.value : null]),
    );
  },

  async apply(ctx, plan) {
    const client = createTriggerDevClient(ctx.credentials, ctx);
    let writes = 0;
    if (Object.keys(plan.upsert).length > 0) {
      await client.importVars(ctx.config, plan.upsert, ctx.syncOptions.markAsSecret ?? true);
      writes++;
    }
    // Sequential on purpose: deletes are rare and a burst of parallel calls invites 429s.
    for (const name of plan.delete) {
      await client.deleteVar(ctx.config, name);
      writes++;
    }
    return { writes };
  },
});
