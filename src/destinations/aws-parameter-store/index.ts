import { defineDestination } from "../types.js";
import { createSsmApi, resolveCredentials } from "./client.js";
import { awsParameterStoreConfigSchema, awsParameterStoreSyncOptionsSchema } from "./config.js";
import { awsConnection } from "./connection.js";

export { AWS_REGIONS, awsParameterStoreConfigSchema, awsParameterStoreSyncOptionsSchema } from "./config.js";
export { awsConnection } from "./connection.js";

const DELETE_BATCH = 10; // DeleteParameters accepts at most 10 names

/**
 * One SecureString parameter per key, named `path + key`.
 *
 * Not done here: `syncSecretMetadataAsTags` (the plan carries no metadata) and removing tags that are
 * no longer configured (would need ListTagsForResource per parameter). Configured `tags` are added.
 */
export const awsParameterStore = defineDestination({
  slug: "aws-parameter-store",
  name: "AWS Parameter Store",
  connectionApp: awsConnection.app,
  connection: awsConnection,
  configSchema: awsParameterStoreConfigSchema,
  syncOptionsSchema: awsParameterStoreSyncOptionsSchema,
  capabilities: { list: true, listValues: true, import: true, removeOnDelete: true },

  async list(ctx) {
    const { region, path } = ctx.config;
    const ssm = createSsmApi(ctx, region, await resolveCredentials(ctx.credentials, ctx, region));
    const params = await ssm.listByPath(path);
    return new Map(
      params.filter((p) => p.name.startsWith(path)).map((p) => [p.name.slice(path.length), p.value]),
    );
  },

  async apply(ctx, plan) {
    const { region, path } = ctx.config;
    const ssm = createSsmApi(ctx, region, await resolveCredentials(ctx.credentials, ctx, region));
    const tags = ctx.syncOptions.tags ?? [];
    // SSM rejects empty values; an empty source value means "should not exist there" (Infisical does
    // the same), so it joins the deletes.
    const toDelete = [...plan.delete];
    let writes = 0;
    for (const [key, value] of Object.entries(plan.upsert)) {
      if (value === "") {
        toDelete.push(key);
        continue;
      }
      await ssm.put(path + key, value, ctx.syncOptions.keyId, key);
      writes++;
      if (tags.length > 0) {
        await ssm.tag(path + key, tags, key);
        writes++;
      }
    }
    for (let i = 0; i < toDelete.length; i += DELETE_BATCH) {
      await ssm.deleteBatch(toDelete.slice(i, i + DELETE_BATCH).map((k) => path + k));
      writes++;
    }
    return { writes };
  },
});
