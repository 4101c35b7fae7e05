import { and, asc, eq, inArray, type SQL } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { appConnections, environments, folders, secretSyncs } from "../../db/schema/index.js";

/** Secret-sync rows, always read with the joined `connection`, `environment` and `folder` summaries. */
export type SyncRow = typeof secretSyncs.$inferSelect;
export type SyncWithJoins = SyncRow & {
  connection: { app: string; name: string; id: string };
  environment: { slug: string; name: string; id: string } | null;
  folder: { id: string; path: string } | null;
};
export type SyncAction = "sync" | "import" | "remove";

const COLUMNS = {
  sync: { status: "syncStatus", jobId: "lastSyncJobId", message: "lastSyncMessage", at: "lastSyncedAt" },
  import: {
    status: "importStatus",
    jobId: "lastImportJobId",
    message: "lastImportMessage",
    at: "lastImportedAt",
  },
  remove: {
    status: "removeStatus",
    jobId: "lastRemoveJobId",
    message: "lastRemoveMessage",
    at: "lastRemovedAt",
  },
} as const;

export function createSyncsRepo(db: Db) {
  async function select(where: SQL | undefined, ex: Executor = db): Promise<SyncWithJoins[]> {
    const rows = await ex
      .select({
        sync: secretSyncs,
        connection: { app: appConnections.app, name: appConnections.name, id: appConnections.id },
        folderId: folders.id,
        folderPath: folders.path,
        envId: environments.id,
        envSlug: environments.slug,
        envName: environments.name,
      })
      .from(secretSyncs)
      .innerJoin(appConnections, eq(appConnections.id, secretSyncs.connectionId))
      .leftJoin(folders, eq(folders.id, secretSyncs.folderId))
      .leftJoin(environments, eq(environments.id, folders.envId))
      .where(where)
      .orderBy(asc(secretSyncs.createdAt), asc(secretSyncs.id));
    return rows.map((r) => ({
      ...r.sync,
      connection: r.connection,
      folder: r.folderId && r.folderPath !== null ? { id: r.folderId, path: r.folderPath } : null,
      environment:
        r.envId && r.envSlug !== null && r.envName !== null
          ? { id: r.envId, slug: r.envSlug, name: r.envName }
          : null,
    }));
  }

  return {
    async findById(id: string, ex?: Executor) {
      return (await select(eq(secretSyncs.id, id), ex))[0];
    },
    async findByName(projectId: string, name: string) {
      return (await select(and(eq(secretSyncs.projectId, projectId), eq(secretSyncs.name, name))))[0];
    },
    listByProject(projectId: string, destination?: string) {
      return select(
        destination
          ? and(eq(secretSyncs.projectId, projectId), eq(secretSyncs.destination, destination))
          : eq(secretSyncs.projectId, projectId),
      );
    },
    /** Auto-sync targets of a folder change. */
    async autoSyncIdsOfFolders(folderIds: string[]): Promise<string[]> {
      if (folderIds.length === 0) return [];
      const rows = await db
        .select({ id: secretSyncs.id })
        .from(secretSyncs)
        .where(and(inArray(secretSyncs.folderId, folderIds), eq(secretSyncs.isAutoSyncEnabled, true)));
      return rows.map((r) => r.id);
    },
    async insert(values: typeof secretSyncs.$inferInsert, ex: Executor = db) {
      const [row] = await ex.insert(secretSyncs).values(values).returning({ id: secretSyncs.id });
      if (!row) throw new Error("insert returned nothing");
      return row.id;
    },
    async update(id: string, values: Partial<typeof secretSyncs.$inferInsert>, ex: Executor = db) {
      await ex
        .update(secretSyncs)
        .set({ ...values, updatedAt: new Date() })
        .where(eq(secretSyncs.id, id));
    },
    async remove(id: string, ex: Executor = db) {
      await ex.delete(secretSyncs).where(eq(secretSyncs.id, id));
    },
    /** Sets one action's status (and optionally job id/message/timestamp) without touching the rest. */
    async setStatus(
      ids: string[],
      action: SyncAction,
      s: { status: string | null; jobId?: string | null; message?: string | null; at?: Date },
      ex: Executor = db,
    ) {
      if (ids.length === 0) return;
      const c = COLUMNS[action];
      await ex
        .update(secretSyncs)
        .set({
          [c.status]: s.status,
          ...(s.jobId !== undefined ? { [c.jobId]: s.jobId } : {}),
          ...(s.message !== undefined ? { [c.message]: s.message } : {}),
          ...(s.at ? { [c.at]: s.at } : {}),
        })
        .where(inArray(secretSyncs.id, ids));
    },
  };
}

export type SyncsRepo = ReturnType<typeof createSyncsRepo>;
