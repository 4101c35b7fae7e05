import { and, count, eq, max, sql } from "drizzle-orm";
import type { Logger } from "pino";
import type { Db } from "../../db/client.js";
import { environments, folders, secretImports } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import { shiftPositions } from "../../lib/positions.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ChangeBus } from "../events/change-bus.js";
import { type FolderRef, findEnvironment, findFolder } from "../folders/folder-lookup.js";
import type { FolderScope } from "../folders/folders-service.js";
import { type Ability, assertCan, can } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { permissionForResource } from "../permissions/resource-permission.js";
import { type FolderPlace, importersOf, publishWithImporters } from "../secrets/secrets-notify.js";
import { importInFolder, importListOf, lockImportList, selectImports } from "./secret-imports-repo.js";

export type ImportSpec = { environment: string; path: string };

/**
 * Secret imports (Infisical's secret-import service): folder F shows the secrets of (environment, path)
 * below its own. Checks, in Infisical's order: project access → `secret-imports` action on F's
 * (environment, path) → describe access to the source's secrets → F exists → source environment
 * exists → no cycle. Positions stay 1..n per folder. After every committed write, F and the folders
 * importing it (the secrets feature's importer lookup) get an `import-changed` notification.
 */
export function createSecretImportsService(deps: {
  db: Db;
  audit: AuditLog;
  permissions: PermissionsService;
  changes: ChangeBus;
  log: Logger;
}) {
  const { db, audit, permissions, changes, log } = deps;

  /** Infisical requires describe (or legacy read) access to the source's secrets. */
  function assertCanReadSource(ability: Ability, source: ImportSpec) {
    const fields = { environment: source.environment, secretPath: source.path };
    if (can(ability, "describeSecret", "secrets", fields) || can(ability, "read", "secrets", fields)) return;
    assertCan(ability, "describeSecret", "secrets", fields);
  }

  async function folderOrThrow(s: FolderScope) {
    const folder = await findFolder(db, s.projectId, s.environment, s.path);
    if (!folder) {
      throw new AppError(
        "NOT_FOUND",
        `Folder with path '${s.path}' in environment with slug '${s.environment}' not found`,
      );
    }
    return folder;
  }

  async function sourceEnvOrThrow(projectId: string, slug: string) {
    const env = await findEnvironment(db, projectId, slug);
    if (!env) {
      throw new AppError(
        "NOT_FOUND",
        `Imported environment with slug '${slug}' in project with ID '${projectId}' not found`,
      );
    }
    return env;
  }

  const placeOf = (f: FolderRef): FolderPlace => ({
    projectId: f.projectId,
    environment: f.environment,
    environmentId: f.envId,
    secretPath: f.path,
    folderId: f.folderId,
  });

  /**
   * F importing S closes a loop when S is F itself or S already imports F (directly or within the
   * importer lookup's depth). Infisical checks only the direct reverse import.
   */
  async function assertNoCycle(folder: FolderRef, source: { envId: string; path: string }) {
    const self = folder.envId === source.envId && folder.path === source.path;
    const importers = self ? [] : await importersOf(db, [placeOf(folder)]);
    if (self || importers.some((f) => f.environmentId === source.envId && f.secretPath === source.path)) {
      throw new AppError("BAD_REQUEST", "Cyclic import not allowed");
    }
  }

  /**
   * After commit: F's effective secrets changed, and so did its importers'. The write already happened,
   * so a failed importer lookup is logged rather than reported to the caller.
   */
  async function changed(f: FolderRef) {
    const place = placeOf(f);
    const importers = await importersOf(db, [place]).catch((err: unknown) => {
      log.error({ err, projectId: f.projectId }, "importer lookup failed after an import change");
      return [];
    });
    publishWithImporters(
      changes,
      [{ ...place, kind: "import-changed", keys: [], personal: false }],
      importers,
    );
  }

  async function one(folderId: string, id: string) {
    const row = await importInFolder(db, folderId, id);
    if (!row) throw new AppError("NOT_FOUND", `Secret import with ID '${id}' not found`);
    return row;
  }

  return {
    async create(actor: Actor, s: FolderScope & { import: ImportSpec; isReplication?: boolean }) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "create", "secret-imports", { environment: s.environment, secretPath: s.path });
      assertCanReadSource(ability, s.import);
      if (s.isReplication) {
        throw new AppError(
          "BAD_REQUEST",
          "Failed to create secret replication due to plan restriction. Upgrade plan to create replication.",
        );
      }
      const folder = await folderOrThrow(s);
      const env = await sourceEnvOrThrow(s.projectId, s.import.environment);
      await assertNoCycle(folder, { envId: env.id, path: s.import.path });
      const id = await db.transaction(async (tx) => {
        await lockImportList(tx, folder.folderId);
        const [last] = await tx
          .select({ pos: max(secretImports.position) })
          .from(secretImports)
          .where(eq(secretImports.folderId, folder.folderId));
        const [row] = await tx
          .insert(secretImports)
          .values({
            folderId: folder.folderId,
            importEnv: env.id,
            importPath: s.import.path,
            position: (last?.pos ?? 0) + 1,
          })
          .returning({ id: secretImports.id });
        if (!row) throw new Error("insert returned nothing");
        await audit.record(
          {
            eventType: "create-secret-import",
            actor,
            projectId: s.projectId,
            resource: {
              secretImportId: row.id,
              folderId: folder.folderId,
              importToEnvironment: s.environment,
              importToSecretPath: s.path,
              importFromEnvironment: env.slug,
              importFromSecretPath: s.import.path,
            },
          },
          tx,
        );
        return row.id;
      });
      await changed(folder);
      return one(folder.folderId, id);
    },

    /** Re-points an import and/or moves it to another position (clamped to 1..n). */
    async update(
      actor: Actor,
      s: FolderScope & { id: string; import: Partial<ImportSpec> & { position?: number } },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "edit", "secret-imports", { environment: s.environment, secretPath: s.path });
      const folder = await folderOrThrow(s);
      const current = await importInFolder(db, folder.folderId, s.id);
      // Infisical answers 400 here, and Terraform maps that 400 to "gone".
      if (!current) throw new AppError("BAD_REQUEST", "Secret import not found");
      const env = s.import.environment
        ? await sourceEnvOrThrow(s.projectId, s.import.environment)
        : current.importEnv;
      const path = s.import.path ?? current.importPath;
      if (env.id !== current.importEnv.id || path !== current.importPath) {
        assertCanReadSource(ability, { environment: env.slug, path });
        await assertNoCycle(folder, { envId: env.id, path });
      }
      await db.transaction(async (tx) => {
        await lockImportList(tx, folder.folderId);
        const inFolder = eq(secretImports.folderId, folder.folderId);
        const [{ n } = { n: 0 }] = await tx.select({ n: count() }).from(secretImports).where(inFolder);
        const [row] = await tx
          .select({ position: secretImports.position })
          .from(secretImports)
          .where(and(inFolder, eq(secretImports.id, current.id)));
        if (!row) throw new AppError("BAD_REQUEST", "Secret import not found");
        const from = row.position;
        const to = s.import.position === undefined ? from : Math.min(Math.max(1, s.import.position), n);
        await shiftPositions(tx, importListOf(folder.folderId), from, to);
        await tx
          .update(secretImports)
          .set({
            importEnv: env.id,
            importPath: path,
            position: to,
            version: sql`${secretImports.version} + 1`,
            updatedAt: new Date(),
          })
          .where(eq(secretImports.id, current.id));
        await audit.record(
          {
            eventType: "update-secret-import",
            actor,
            projectId: s.projectId,
            resource: {
              secretImportId: current.id,
              folderId: folder.folderId,
              position: to,
              importToEnvironment: s.environment,
              importToSecretPath: s.path,
            },
          },
          tx,
        );
      });
      await changed(folder);
      return one(folder.folderId, current.id);
    },

    async remove(actor: Actor, s: FolderScope & { id: string }) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "delete", "secret-imports", { environment: s.environment, secretPath: s.path });
      const folder = await folderOrThrow(s);
      const notFound = new AppError("NOT_FOUND", `Secret import with ID '${s.id}' not found`);
      const current = await importInFolder(db, folder.folderId, s.id);
      if (!current) throw notFound;
      await db.transaction(async (tx) => {
        await lockImportList(tx, folder.folderId);
        const [gone] = await tx
          .delete(secretImports)
          .where(and(eq(secretImports.folderId, folder.folderId), eq(secretImports.id, current.id)))
          .returning({ position: secretImports.position });
        if (!gone) throw notFound;
        await shiftPositions(tx, importListOf(folder.folderId), gone.position, null);
        await audit.record(
          {
            eventType: "delete-secret-import",
            actor,
            projectId: s.projectId,
            resource: {
              secretImportId: current.id,
              folderId: folder.folderId,
              importToEnvironment: s.environment,
              importToSecretPath: s.path,
              importFromEnvironment: current.importEnv.slug,
              importFromSecretPath: current.importPath,
            },
          },
          tx,
        );
      });
      await changed(folder);
      return current;
    },

    async list(actor: Actor, s: FolderScope) {
      const { ability } = await permissions.getProjectPermission(actor, s.projectId);
      assertCan(ability, "read", "secret-imports", { environment: s.environment, secretPath: s.path });
      const folder = await folderOrThrow(s);
      const rows = await selectImports(db, eq(secretImports.folderId, folder.folderId));
      audit.recordLater({
        eventType: "get-secret-imports",
        actor,
        projectId: s.projectId,
        resource: { environment: s.environment, folderId: folder.folderId, numberOfImports: rows.length },
      });
      return rows;
    },

    /** By id alone: the importing folder's project and (environment, path) decide access. */
    async getById(actor: Actor, id: string) {
      const notFound = new AppError("NOT_FOUND", `Secret import with ID '${id}' not found`);
      if (!isUuid(id)) throw notFound;
      const [row] = await db
        .select({ folderId: secretImports.folderId, path: folders.path, env: environments })
        .from(secretImports)
        .innerJoin(folders, eq(folders.id, secretImports.folderId))
        .innerJoin(environments, eq(environments.id, folders.envId))
        .where(eq(secretImports.id, id));
      if (!row) throw notFound;
      const { ability } = await permissionForResource(permissions, actor, row.env.projectId, notFound);
      assertCan(ability, "read", "secret-imports", { environment: row.env.slug, secretPath: row.path });
      const imp = await one(row.folderId, id);
      audit.recordLater({
        eventType: "get-secret-import",
        actor,
        projectId: row.env.projectId,
        resource: { secretImportId: id, folderId: row.folderId },
      });
      return {
        ...imp,
        projectId: row.env.projectId,
        secretPath: row.path,
        environment: { id: row.env.id, name: row.env.name, slug: row.env.slug },
      };
    },
  };
}

export type SecretImportsService = ReturnType<typeof createSecretImportsService>;
