import { and, eq, sql } from "drizzle-orm";
import { type Executor, rowsOf } from "../../db/client.js";
import { environments, folders } from "../../db/schema/index.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { findFolder } from "../folders/folder-lookup.js";
import { expandReferences, hasReferences } from "./secret-references.js";
import { sharedSecretsOfFolders } from "./secrets-repo.js";
import { decryptRow } from "./secrets-view.js";

/**
 * What a secret sync pushes: the folder's shared secrets, decrypted, merged with its imports in
 * Infisical's precedence (the folder's own secrets win; among imports a later one wins over an earlier
 * one; inside one import its source folder wins over what that folder imports itself), with secret
 * references expanded. No permission checks: the caller (the sync worker) runs as the platform, as
 * Infisical's `$getInfisicalSecrets` does. Returns undefined when the folder no longer exists.
 */
export async function secretsForSync(
  ex: Executor,
  keyring: Keyring,
  folderId: string,
): Promise<{ values: Map<string, string>; environment: string; secretPath: string } | undefined> {
  const [folder] = await ex
    .select({
      id: folders.id,
      envId: folders.envId,
      path: folders.path,
      slug: environments.slug,
      projectId: environments.projectId,
    })
    .from(folders)
    .innerJoin(environments, eq(environments.id, folders.envId))
    .where(and(eq(folders.id, folderId)));
  if (!folder) return undefined;
  const dk = await keyring.key(folder.projectId, ex);
  const own = await sharedSecretsOfFolders(ex, [folder.id]);
  const imports = await importChains(ex, folder.id);
  const importedRows = await sharedSecretsOfFolders(ex, [...new Set(imports.flatMap((i) => i.folderIds))]);
  const byFolder = new Map<string, typeof importedRows>();
  for (const r of importedRows) byFolder.set(r.folderId, [...(byFolder.get(r.folderId) ?? []), r]);

  // Raw (unexpanded) values with where each came from, in precedence order.
  const merged = new Map<string, { value: string; environment: string; secretPath: string }>();
  for (const r of own)
    merged.set(r.key, {
      value: decryptRow(dk, r).value,
      environment: r.environment,
      secretPath: r.secretPath,
    });
  for (const imp of [...imports].reverse()) {
    for (const fid of imp.folderIds) {
      for (const r of byFolder.get(fid) ?? []) {
        if (!merged.has(r.key)) {
          merged.set(r.key, {
            value: decryptRow(dk, r).value,
            environment: r.environment,
            secretPath: r.secretPath,
          });
        }
      }
    }
  }

  const cache = new Map<string, Promise<Map<string, string>>>();
  const folderValues = (environment: string, path: string) => {
    const k = `${environment}:${path}`;
    let p = cache.get(k);
    if (!p) {
      p = (async () => {
        const f = await findFolder(ex, folder.projectId, environment, path);
        const rows = f ? await sharedSecretsOfFolders(ex, [f.folderId]) : [];
        return new Map(rows.map((r) => [r.key, decryptRow(dk, r).value]));
      })();
      cache.set(k, p);
    }
    return p;
  };
  const values = new Map<string, string>();
  for (const [key, s] of merged) {
    values.set(
      key,
      hasReferences(s.value)
        ? await expandReferences(
            s.value,
            { environment: s.environment, secretPath: s.secretPath, key },
            {
              values: folderValues,
              canRead: () => true,
            },
          )
        : s.value,
    );
  }
  return { values, environment: folder.slug, secretPath: folder.path };
}

const MAX_IMPORT_DEPTH = 5;

/**
 * The folder's direct (non-replication) imports in position order; each with the folders supplying its
 * secrets: the source folder first, then, depth-first, what that folder imports itself. Each folder is
 * visited once, so import cycles end.
 */
async function importChains(ex: Executor, rootId: string): Promise<{ folderIds: string[] }[]> {
  const seen = new Set([rootId]);
  const direct = async (folderId: string) =>
    rowsOf<{ folder_id: string | null }>(
      sql`SELECT f.id AS folder_id FROM secret_imports si
        LEFT JOIN folders f ON f.env_id = si.import_env AND f.path = si.import_path
        WHERE si.folder_id = ${folderId} AND si.is_replication = false ORDER BY si.position`,
      ex,
    );
  const chain = async (folderId: string, depth: number): Promise<string[]> => {
    if (depth >= MAX_IMPORT_DEPTH) return [];
    const out: string[] = [];
    for (const r of await direct(folderId)) {
      if (!r.folder_id || seen.has(r.folder_id)) continue;
      seen.add(r.folder_id);
      out.push(r.folder_id, ...(await chain(r.folder_id, depth + 1)));
    }
    return out;
  };
  const result: { folderIds: string[] }[] = [];
  for (const r of await direct(rootId)) {
    if (!r.folder_id || seen.has(r.folder_id)) continue;
    seen.add(r.folder_id);
    result.push({ folderIds: [r.folder_id, ...(await chain(r.folder_id, 1))] });
  }
  return result;
}

/** The folder's own shared values (no imports, no expansion): what an import compares against. */
export async function folderOwnValues(ex: Executor, keyring: Keyring, projectId: string, folderId: string) {
  const dk = await keyring.key(projectId, ex);
  const rows = await sharedSecretsOfFolders(ex, [folderId]);
  return new Map(rows.map((r) => [r.key, decryptRow(dk, r).value]));
}
