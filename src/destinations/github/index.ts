import { z } from "zod";
import { defineDestination } from "../types.js";
import { githubError, openGitHub, scopeApi, sealSecret } from "./client.js";
import { githubConfigSchema } from "./config.js";
import { githubConnection } from "./connection.js";

export { githubApiBaseUrl } from "./client.js";
export { githubConfigSchema } from "./config.js";
export { githubConnection } from "./connection.js";

/**
 * GitHub Actions secrets. Values are write-only (list gives names), so every upsert is a PUT of a value
 * sealed against the scope's public key. One request per key: the API has no batch write.
 */
export const github = defineDestination({
  slug: "github",
  name: "GitHub",
  connectionApp: githubConnection.app,
  connection: githubConnection,
  configSchema: githubConfigSchema,
  syncOptionsSchema: z.object({}),
  capabilities: { list: true, listValues: false, import: false, removeOnDelete: true },

  // GitHub stores secret names upper-case; the engine must diff in that form or it would delete what
  // it just wrote.
  normalizeKey: (key) => key.toUpperCase(),

  async list(ctx) {
    const { octokit, token } = await openGitHub(ctx.credentials, ctx);
    try {
      const secrets = await scopeApi(octokit, ctx.config).list();
      return new Map(secrets.map((s) => [s.name, null]));
    } catch (err) {
      throw githubError(err, "List GitHub secrets", [token]);
    }
  },

  async apply(ctx, plan) {
    const { octokit, token } = await openGitHub(ctx.credentials, ctx);
    const api = scopeApi(octokit, ctx.config);
    let writes = 0;
    const upserts = Object.entries(plan.upsert);
    if (upserts.length > 0) {
      let publicKey: { key_id: string; key: string };
      try {
        publicKey = await api.publicKey();
      } catch (err) {
        throw githubError(err, "Get GitHub public key", [token]);
      }
      for (const [name, value] of upserts) {
        const sealed = await sealSecret(value, publicKey.key);
        try {
          await api.put(name, sealed, publicKey.key_id);
        } catch (err) {
          throw githubError(err, `Write GitHub secret ${name}`, [token, value, sealed], name);
        }
        writes++;
      }
    }
    for (const name of plan.delete) {
      try {
        await api.remove(name);
      } catch (err) {
        // Already gone is the desired end state.
        if ((err as { status?: number }).status !== 404)
          throw githubError(err, `Delete GitHub secret ${name}`, [token], name);
      }
      writes++;
    }
    return { writes };
  },
});
