import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { environments, secretImports } from "../../db/schema/index.js";
import { isUuid } from "../../lib/ids.js";

/** Queries behind the secret-imports service. Every method takes the executor (db or the open tx). */

/** Rows in the wire shape: `importEnv` is the source environment, not its id. */
export const selectImports = (ex: Executor, where: SQL | undefined) =>
  ex
    .select({
      id: secretImports.id,
      version: secretImports.version,
      importPath: secretImports.importPath,
      importEnv: { id: environments.id, name: environments.name, slug: environments.slug },
      position: secretImports.position,
      folderId: secretImports.folderId,
      isReplication: secretImports.isReplication,
      createdAt: secretImports.createdAt,
      updatedAt: secretImports.updatedAt,
    })
    .from(secretImports)
    .innerJoin(environments, eq(environments.id, secretImports.importEnv))
    .where(where)
    .orderBy(asc(secretImports.position));

export type ImportView = Awaited<ReturnType<typeof selectImports>>[number];

export async function importInFolder(
  ex: Executor,
  folderId: string,
  id: string,
): Promise<ImportView | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await selectImports(ex, and(eq(secretImports.folderId, folderId), eq(secretImports.id, id)));
  return row;
}

/** The folder's import list, for `shiftPositions`. */
export const importListOf = (folderId: string) => ({
  table: secretImports,
  position: secretImports.position,
  scope: eq(secretImports.folderId, folderId),
});

/** Serialises writes to one folder's import list, so positions stay 1..n under concurrency. */
export const lockImportList = (tx: Executor, folderId: string) =>
  tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`imports:${folderId}`}))`);
