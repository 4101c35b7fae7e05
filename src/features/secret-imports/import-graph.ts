import { and, asc, eq, inArray } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Executor } from "../../db/client.js";
import { environments, folders, secretImports } from "../../db/schema/index.js";

/**
 * Reading the import graph (folder F imports environment E at path P) the way Infisical's
 * `fnSecretsV2FromImports` does: level by level, at most LEVEL_BREAK levels, each (environment, path)
 * visited once (F itself counts as visited, so cycles end), replication imports skipped. No permission
 * checks here. The reverse direction (who imports F) is the secrets feature's `importersOf`.
 */
export const LEVEL_BREAK = 10;

export type ImportSourceEnv = { id: string; slug: string; name: string };

export type ResolvedImport = {
  /** The import row's id. */
  id: string;
  secretPath: string;
  environment: string;
  environmentInfo: ImportSourceEnv;
  /** The source folder; undefined when nothing exists at that path (yet). */
  folderId: string | undefined;
  /**
   * Folders whose shared secrets make up this import, in Infisical's order: the source folder first,
   * then, depth-first, the folders it imports itself. Empty when the source folder does not exist.
   */
  folderIds: string[];
};

type Node = Omit<ResolvedImport, "folderIds"> & { importerFolderId: string };

const keyOf = (envId: string, path: string) => `${envId}\u0000${path}`;
const sourceFolder = alias(folders, "source_folder");

/** One level of the graph: the non-replication imports of `folderIds`, each with its source folder. */
async function importsOf(ex: Executor, folderIds: string[]) {
  if (folderIds.length === 0) return [];
  return ex
    .select({
      id: secretImports.id,
      importerFolderId: secretImports.folderId,
      importPath: secretImports.importPath,
      env: { id: environments.id, slug: environments.slug, name: environments.name },
      sourceFolderId: sourceFolder.id,
    })
    .from(secretImports)
    .innerJoin(environments, eq(environments.id, secretImports.importEnv))
    .leftJoin(
      sourceFolder,
      and(eq(sourceFolder.envId, secretImports.importEnv), eq(sourceFolder.path, secretImports.importPath)),
    )
    .where(and(inArray(secretImports.folderId, folderIds), eq(secretImports.isReplication, false)))
    .orderBy(asc(secretImports.folderId), asc(secretImports.position));
}

/**
 * The folder's direct imports in position order, each with the folders that supply its secrets, so a
 * caller reads the shared secrets of all `folderIds` in one query and concatenates per import. At most
 * LEVEL_BREAK queries, one per level.
 */
export async function resolveImports(
  ex: Executor,
  root: { folderId: string; envId: string; path: string },
): Promise<ResolvedImport[]> {
  const visited = new Set([keyOf(root.envId, root.path)]);
  const levels: Node[][] = [];
  let frontier = [root.folderId];
  for (let depth = 0; depth < LEVEL_BREAK && frontier.length > 0; depth++) {
    const level: Node[] = [];
    for (const r of await importsOf(ex, frontier)) {
      const k = keyOf(r.env.id, r.importPath);
      if (visited.has(k)) continue;
      visited.add(k);
      level.push({
        id: r.id,
        importerFolderId: r.importerFolderId,
        secretPath: r.importPath,
        environment: r.env.slug,
        environmentInfo: r.env,
        folderId: r.sourceFolderId ?? undefined,
      });
    }
    levels.push(level);
    frontier = level.flatMap((n) => (n.folderId ? [n.folderId] : []));
  }

  const childrenOf = new Map<string, Node[]>();
  for (const n of levels.slice(1).flat()) {
    childrenOf.set(n.importerFolderId, [...(childrenOf.get(n.importerFolderId) ?? []), n]);
  }
  const folderIdsOf = (n: Node): string[] =>
    n.folderId ? [n.folderId, ...(childrenOf.get(n.folderId) ?? []).flatMap(folderIdsOf)] : [];
  return (levels[0] ?? []).map((n) => ({
    id: n.id,
    secretPath: n.secretPath,
    environment: n.environment,
    environmentInfo: n.environmentInfo,
    folderId: n.folderId,
    folderIds: folderIdsOf(n),
  }));
}
