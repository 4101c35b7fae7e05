import { randomUUID } from "node:crypto";
import { and, asc, eq, gte, inArray, ne, type SQL, sql } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { environments, folders } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { permissionForResource } from "../permissions/resource-permission.js";
import { findEnvironment, findFolder } from "./folder-lookup.js";
import { joinPath, segmentsOf } from "./paths.js";

export type FolderRow = typeof folders.$inferSelect;

/** Where a folder operation happens: project, environment slug and the (normalised) parent path. */
export type FolderScope = { projectId: string; environment: string; path: string };

/** `WHERE` for every folder strictly below `path` (descendants), using the stored full paths. */
const below = (path: string) =>
  path === "/" ? ne(folders.path, "/") : sql`left(${folders.path}, ${path.length + 1}) = ${`${path}/`}`;

/**
 * Folders (Infisical's secret-folder service). Every folder stores its full path, so lookups are one
 * indexed read and a rename rewrites the paths of the folder and its subtree in one UPDATE. Permission
 * checks use the *parent* path as `secretPath`, as Infisical does; listing and reading need only project
 * membership ("folder list is allowed to be read by anyone" in Infisical).
 */
export function createFoldersService(deps: { db: Db; audit: AuditLog; permissions: PermissionsService }) {
  const { db, audit, permissions } = deps;

  const folderPathNotFound = (s: FolderScope, name?: string) =>
    new AppError(
      "NOT_FOUND",
      `Folder with path '${s.path}' in environment with slug '${s.environment}' not found`,
      { name },
    );

  /** A non-reserved child of `parentId` by id, or by name (the CLI addresses folders by name). */
  async function findChild(ex: Executor, parentId: string, idOrName: string, byNameFirst: boolean) {
    const child = (cond: ReturnType<typeof eq>) =>
      ex
        .select()
        .from(folders)
        .where(and(eq(folders.parentId, parentId), eq(folders.isReserved, false), cond))
        .then((rows) => rows[0]);
    const byId = () => (isUuid(idOrName) ? child(eq(folders.id, idOrName)) : Promise.resolve(undefined));
    const byName = () => child(eq(folders.name, idOrName));
    return byNameFirst ? ((await byName()) ?? byId()) : ((await byId()) ?? byName());
  }

  /** One folder with its environment and project, in the get-by-id wire shape; one query. */
  async function detail(where: SQL | undefined) {
    const [row] = await db
      .select({ folder: folders, env: environments })
      .from(folders)
      .innerJoin(environments, eq(environments.id, folders.envId))
      .where(where);
    if (!row) return undefined;
    const { folder, env } = row;
    return {
      ...folder,
      projectId: env.projectId,
      environment: { envId: env.id, envName: env.name, envSlug: env.slug },
    };
  }

  return {
    /**
     * Idempotent, and creates missing intermediate folders: asking for `/a/b` + `c` when only `/` exists
     * creates `/a`, `/a/b` and `/a/b/c`; asking again returns the existing `/a/b/c` unchanged.
     */
    async create(actor: Actor, s: FolderScope & { name: string; description?: string | null }) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "create", "secret-folders", { environment: s.environment, secretPath: s.path });
      const env = await findEnvironment(db, s.projectId, s.environment);
      if (!env) {
        throw new AppError(
          "NOT_FOUND",
          `Environment with slug '${s.environment}' in project with ID '${s.projectId}' not found`,
        );
      }
      const target = joinPath(s.path, s.name);
      const prefixes = ["/"];
      for (const seg of segmentsOf(target)) prefixes.push(joinPath(prefixes.at(-1) ?? "/", seg));
      return db.transaction(async (tx) => {
        // Serialise creates per environment so two requests for overlapping paths cannot interleave.
        await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`folder:${env.id}`}))`);
        const existing = await tx
          .select()
          .from(folders)
          .where(and(eq(folders.envId, env.id), inArray(folders.path, prefixes)));
        const byPath = new Map(existing.map((f) => [f.path, f]));
        const found = byPath.get(target);
        if (found) return found;
        let parentId: string | null = null;
        const missing: (typeof folders.$inferInsert)[] = [];
        for (const path of prefixes) {
          const have = byPath.get(path);
          if (have) {
            parentId = have.id;
            continue;
          }
          const id = randomUUID();
          const name = path === "/" ? "root" : path.slice(path.lastIndexOf("/") + 1);
          missing.push({
            id,
            envId: env.id,
            parentId,
            name,
            path,
            description: path === target ? s.description : null,
          });
          parentId = id;
        }
        const rows = await tx.insert(folders).values(missing).returning();
        const created = rows.find((f) => f.path === target);
        if (!created) throw new Error("folder insert returned nothing");
        await audit.record(
          {
            eventType: "create-folder",
            actor,
            projectId: s.projectId,
            resource: {
              environment: s.environment,
              folderId: created.id,
              folderName: s.name,
              folderPath: s.path,
            },
          },
          tx,
        );
        return created;
      });
    },

    /**
     * Direct children of `path` (or, with `recursive`, the whole subtree with `relativePath`). A missing
     * environment is a 404; a missing path is an empty list, as in Infisical.
     */
    async list(
      actor: Actor,
      s: FolderScope & { recursive?: boolean; lastSecretModified?: string },
    ): Promise<(FolderRow & { relativePath?: string })[]> {
      await permissions.getProjectPermission(actor, s.projectId);
      const env = await findEnvironment(db, s.projectId, s.environment);
      if (!env) throw new AppError("NOT_FOUND", `Environment with slug '${s.environment}' not found`);
      const parent = await findFolder(db, s.projectId, s.environment, s.path);
      if (!parent) return [];
      const since = s.lastSecretModified ? new Date(s.lastSecretModified) : undefined;
      const rows = await db
        .select()
        .from(folders)
        .where(
          and(
            eq(folders.envId, env.id),
            eq(folders.isReserved, false),
            s.recursive ? below(parent.path) : eq(folders.parentId, parent.folderId),
            since ? gte(folders.lastSecretModified, since) : undefined,
          ),
        )
        .orderBy(asc(folders.path));
      return s.recursive ? rows.map((f) => ({ ...f, relativePath: f.path })) : rows;
    },

    /** By id alone; the folder's own project decides access (other tenants get the same 404). */
    async getById(actor: Actor, id: string) {
      const notFound = new AppError("NOT_FOUND", `Folder with ID '${id}' not found`);
      if (!isUuid(id)) throw notFound;
      const folder = await detail(eq(folders.id, id));
      if (!folder) throw notFound;
      await permissionForResource(permissions, actor, folder.projectId, notFound);
      return folder;
    },

    /** Terraform's `GET /api/v1/folders/{projectId}/{env}/{path}`. */
    async getByPath(actor: Actor, s: FolderScope) {
      await permissions.getProjectPermission(actor, s.projectId);
      const folder = await detail(
        and(
          eq(environments.projectId, s.projectId),
          eq(environments.slug, s.environment),
          eq(folders.path, s.path),
        ),
      );
      if (!folder) throw folderPathNotFound(s);
      return folder;
    },

    /** Rename (and/or re-describe) a child of `path`; the subtree's stored paths follow the new name. */
    async update(
      actor: Actor,
      s: FolderScope & { idOrName: string; name: string; description?: string | null },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "edit", "secret-folders", { environment: s.environment, secretPath: s.path });
      const parent = await findFolder(db, s.projectId, s.environment, s.path);
      if (!parent) throw folderPathNotFound(s, "UpdateFolder");
      const folder = await findChild(db, parent.folderId, s.idOrName, false);
      if (!folder) {
        throw new AppError("NOT_FOUND", `Folder with ID '${s.idOrName}' not found`, { name: "UpdateFolder" });
      }
      const newPath = joinPath(parent.path, s.name);
      return db.transaction(async (tx) => {
        if (s.name !== folder.name) {
          const [clash] = await tx
            .select({ id: folders.id })
            .from(folders)
            .where(and(eq(folders.envId, folder.envId), eq(folders.path, newPath)));
          if (clash) {
            throw new AppError("BAD_REQUEST", "Folder with specified name already exists", {
              name: "UpdateFolder",
            });
          }
          await tx
            .update(folders)
            .set({ path: sql`${newPath} || substr(${folders.path}, ${folder.path.length + 1})` })
            .where(and(eq(folders.envId, folder.envId), below(folder.path)));
        }
        const [updated] = await tx
          .update(folders)
          .set({
            name: s.name,
            path: newPath,
            ...(s.description !== undefined ? { description: s.description } : {}),
            version: sql`${folders.version} + 1`,
            updatedAt: new Date(),
          })
          .where(eq(folders.id, folder.id))
          .returning();
        if (!updated) throw new AppError("NOT_FOUND", `Folder with ID '${s.idOrName}' not found`);
        await audit.record(
          {
            eventType: "update-folder",
            actor,
            projectId: s.projectId,
            resource: {
              environment: s.environment,
              folderId: folder.id,
              folderPath: s.path,
              oldFolderName: folder.name,
              newFolderName: updated.name,
            },
          },
          tx,
        );
        return updated;
      });
    },

    /**
     * Deletes a child of `path` by name or id. Subfolders go with it (parent_id cascades), and so do the
     * secrets and imports stored in the subtree (their folder_id cascades).
     */
    async remove(actor: Actor, s: FolderScope & { idOrName: string }) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "delete", "secret-folders", { environment: s.environment, secretPath: s.path });
      const env = await findEnvironment(db, s.projectId, s.environment);
      if (!env) throw new AppError("NOT_FOUND", `Environment with slug '${s.environment}' not found`);
      const parent = await findFolder(db, s.projectId, s.environment, s.path);
      if (!parent) throw folderPathNotFound(s);
      return db.transaction(async (tx) => {
        const folder = await findChild(tx, parent.folderId, s.idOrName, true);
        if (!folder) throw new AppError("NOT_FOUND", `Folder with ID '${s.idOrName}' not found`);
        await tx.delete(folders).where(eq(folders.id, folder.id));
        await audit.record(
          {
            eventType: "delete-folder",
            actor,
            projectId: s.projectId,
            resource: {
              environment: s.environment,
              folderId: folder.id,
              folderPath: s.path,
              folderName: folder.name,
            },
          },
          tx,
        );
        return folder;
      });
    },
  };
}

export type FoldersService = ReturnType<typeof createFoldersService>;
