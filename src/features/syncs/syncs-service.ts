import type { Logger } from "pino";
import type { Db } from "../../db/client.js";
import { isDestinationError, scrub } from "../../destinations/errors.js";
import { getConnectionApp } from "../../destinations/registry.js";
import type { DestinationAdapter } from "../../destinations/types.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { ConnectionsService } from "../app-connections/connections-service.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ChangeBus } from "../events/change-bus.js";
import { findFolder } from "../folders/folder-lookup.js";
import { normalizePath } from "../folders/paths.js";
import { type Ability, assertCan, can } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import type { JobQueue, SyncJob } from "./jobs/queue.js";
import type { SyncLocks } from "./sync-locks.js";
import type { SyncRunner } from "./sync-runner.js";
import type { SyncAction, SyncsRepo, SyncWithJoins } from "./syncs-repo.js";
import type { CreateSyncInput, UpdateSyncInput } from "./syncs-schemas.js";

/** Auto-sync start delay: a burst of edits inside this window collapses into one run (queue coalescing). */
export const AUTO_SYNC_DEBOUNCE_MS = 1_000;
/** Window in which changed folders are collected before one auto-sync lookup. */
const AUTO_SYNC_BATCH_MS = 100;

const IN_PROGRESS = "A job for this sync is already in progress. Please try again shortly.";
const FOLDER_GONE =
  "Invalid source configuration: folder no longer exists. Please configure a valid source and try again.";
const ACTION_PERMISSION: Record<SyncAction, string> = {
  sync: "sync-secrets",
  import: "import-secrets",
  remove: "remove-secrets",
};

export function createSyncsService(deps: {
  db: Db;
  repo: SyncsRepo;
  queue: JobQueue;
  locks: SyncLocks;
  runner: SyncRunner;
  connections: ConnectionsService;
  permissions: PermissionsService;
  audit: AuditLog;
  changes: ChangeBus;
  log: Logger;
}) {
  const { db, repo, queue, locks, runner, connections, permissions, audit, changes, log } = deps;

  const fields = (s: SyncWithJoins) => ({
    environment: s.environment?.slug ?? "",
    secretPath: s.folder?.path ?? "",
  });
  const creator = (a: Actor) => ({ type: a.type, id: a.id, orgId: a.orgId, name: a.name });

  /** Infisical's lookup order: 404 before permissions, destination mismatch (400) after them. */
  async function load(actor: Actor, d: DestinationAdapter, id: string, action: string, quoteId = true) {
    const sync = isUuid(id) ? await repo.findById(id) : undefined;
    const shown = quoteId ? `"${id}"` : id;
    if (!sync) throw new AppError("NOT_FOUND", `Could not find ${d.name} Sync with ID ${shown}`);
    const { ability } = await permissions.getProjectPermission(actor, sync.projectId);
    assertCan(ability, action, "secret-syncs", fields(sync));
    if (sync.destination !== d.slug) {
      throw new AppError("BAD_REQUEST", `Secret sync with ID "${id}" is not configured for ${d.name}`);
    }
    return { sync, ability };
  }

  async function resolveFolder(projectId: string, environment: string, secretPath: string) {
    const path = normalizePath(secretPath);
    const folder = await findFolder(db, projectId, environment, path);
    if (!folder) {
      throw new AppError(
        "BAD_REQUEST",
        `Could not find folder with path "${secretPath}" in environment "${environment}" for project with ID "${projectId}"`,
      );
    }
    return folder;
  }

  async function resolveConnection(
    actor: Actor,
    ability: Ability,
    d: DestinationAdapter,
    connectionId: string,
  ) {
    const conn = await connections.findById(connectionId);
    if (!conn || conn.orgId !== actor.orgId) {
      throw new AppError("NOT_FOUND", `Could not find App Connection with ID ${connectionId}`);
    }
    assertCan(ability, "connect", "app-connections");
    if (conn.app !== d.connectionApp) {
      const app = getConnectionApp(conn.app);
      throw new AppError(
        "BAD_REQUEST",
        `${app.name} Connection with ID ${connectionId} cannot be used to connect to ${d.name}`,
      );
    }
    return conn;
  }

  const duplicateName = (name: string, projectId: string) =>
    new AppError(
      "BAD_REQUEST",
      `A Secret Sync with the name "${name}" already exists for the project with ID "${projectId}"`,
    );
  const isUnique = (err: unknown) =>
    (err as { code?: string }).code === "23505" ||
    (err as { cause?: { code?: string } }).cause?.code === "23505";

  /** Sets `pending` before enqueueing (never after: a fast worker's `running` must not be overwritten). */
  async function enqueue(ids: string[], job: Omit<SyncJob, "syncId" | "attempt">, delayMs?: number) {
    await repo.setStatus(ids, job.action, { status: "pending" });
    for (const syncId of ids) await queue.enqueue({ ...job, syncId, attempt: 1 }, { delayMs });
  }

  async function reload(id: string) {
    const s = await repo.findById(id);
    if (!s) throw new AppError("NOT_FOUND", `Could not find Secret Sync with ID "${id}"`);
    return s;
  }

  /**
   * Auto-sync trigger. Changed folders are collected for a short window and looked up in one query,
   * so a burst of writes costs one lookup instead of one per write (the lookup is not cached: a sync
   * created on another instance must be seen at once).
   */
  function onChange() {
    const pending = new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const folderIds = [...pending];
      pending.clear();
      return repo
        .autoSyncIdsOfFolders(folderIds)
        .then((ids) => (ids.length > 0 ? enqueue(ids, { action: "sync" }, AUTO_SYNC_DEBOUNCE_MS) : undefined))
        .catch((err: unknown) => log.error({ err, folders: folderIds.length }, "auto-sync trigger failed"));
    };
    const unsubscribe = changes.subscribe((c) => {
      if (c.personal) return;
      pending.add(c.folderId);
      timer ??= setTimeout(flush, AUTO_SYNC_BATCH_MS);
    });
    // On shutdown, triggers still collected are flushed (and awaited) so no committed change is left
    // without its sync.
    return async () => {
      unsubscribe();
      if (timer) {
        clearTimeout(timer);
        await flush();
      }
    };
  }

  return {
    onChange,

    async listByProject(actor: Actor, projectId: string, destination?: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "secret-syncs");
      const rows = await repo.listByProject(projectId, destination);
      return rows.filter((s) => can(ability, "read", "secret-syncs", fields(s)));
    },

    async get(actor: Actor, d: DestinationAdapter, id: string) {
      return (await load(actor, d, id, "read")).sync;
    },

    async getByName(actor: Actor, d: DestinationAdapter, name: string, projectId: string) {
      const sync = isUuid(projectId) ? await repo.findByName(projectId, name) : undefined;
      if (!sync) throw new AppError("NOT_FOUND", `Could not find ${d.name} Sync with name "${name}"`);
      return (await load(actor, d, sync.id, "read")).sync;
    },

    async create(actor: Actor, d: DestinationAdapter, body: CreateSyncInput) {
      const { ability } = await permissions.getProjectPermission(actor, body.projectId);
      const secretPath = normalizePath(body.secretPath);
      assertCan(ability, "create", "secret-syncs", { environment: body.environment, secretPath });
      const folder = await resolveFolder(body.projectId, body.environment, body.secretPath);
      await resolveConnection(actor, ability, d, body.connectionId);
      const id = await db
        .transaction(async (tx) => {
          const newId = await repo.insert(
            {
              name: body.name,
              description: body.description ?? null,
              destination: d.slug,
              isAutoSyncEnabled: body.isAutoSyncEnabled,
              destinationConfig: body.destinationConfig as Record<string, unknown>,
              syncOptions: body.syncOptions,
              projectId: body.projectId,
              folderId: folder.folderId,
              connectionId: body.connectionId,
              createdBy: creator(actor),
              syncStatus: body.isAutoSyncEnabled ? "pending" : null,
            },
            tx,
          );
          const resource = {
            syncId: newId,
            name: body.name,
            destination: d.slug,
            environment: body.environment,
            secretPath,
          };
          await audit.record(
            { eventType: "create-secret-sync", actor, projectId: body.projectId, resource },
            tx,
          );
          return newId;
        })
        .catch((err: unknown) => {
          throw isUnique(err) ? duplicateName(body.name, body.projectId) : err;
        });
      if (body.isAutoSyncEnabled)
        await queue.enqueue({ syncId: id, action: "sync", attempt: 1, actor: creator(actor) });
      return reload(id);
    },

    async update(actor: Actor, d: DestinationAdapter, id: string, body: UpdateSyncInput) {
      const { sync, ability } = await load(actor, d, id, "edit", false);
      let folderId = sync.folderId;
      if (body.environment !== undefined || body.secretPath !== undefined) {
        const environment = body.environment ?? sync.environment?.slug;
        const secretPath = body.secretPath ?? sync.folder?.path;
        if (!environment || !secretPath)
          throw new AppError("BAD_REQUEST", "Must specify both source environment and secret path");
        assertCan(ability, "edit", "secret-syncs", { environment, secretPath: normalizePath(secretPath) });
        folderId = (await resolveFolder(sync.projectId, environment, secretPath)).folderId;
      }
      if (body.connectionId) await resolveConnection(actor, ability, d, body.connectionId);
      const auto = body.isAutoSyncEnabled ?? sync.isAutoSyncEnabled;
      await db
        .transaction(async (tx) => {
          await repo.update(
            id,
            {
              ...(body.name !== undefined ? { name: body.name } : {}),
              ...(body.description !== undefined ? { description: body.description } : {}),
              ...(body.connectionId ? { connectionId: body.connectionId } : {}),
              ...(body.destinationConfig !== undefined
                ? { destinationConfig: body.destinationConfig as Record<string, unknown> }
                : {}),
              ...(body.syncOptions !== undefined ? { syncOptions: body.syncOptions } : {}),
              ...(body.isAutoSyncEnabled !== undefined ? { isAutoSyncEnabled: body.isAutoSyncEnabled } : {}),
              folderId,
              version: sync.version + 1,
              ...(auto ? { syncStatus: "pending" } : {}),
            },
            tx,
          );
          await audit.record(
            { eventType: "update-secret-sync", actor, projectId: sync.projectId, resource: { syncId: id } },
            tx,
          );
        })
        .catch((err: unknown) => {
          throw isUnique(err) ? duplicateName(body.name ?? sync.name, sync.projectId) : err;
        });
      if (auto) await queue.enqueue({ syncId: id, action: "sync", attempt: 1, actor: creator(actor) });
      return reload(id);
    },

    async remove(actor: Actor, d: DestinationAdapter, id: string, removeSecrets: boolean) {
      const { sync, ability } = await load(actor, d, id, "delete");
      if (!removeSecrets) {
        await db.transaction(async (tx) => {
          await repo.remove(id, tx);
          await audit.record(
            { eventType: "delete-secret-sync", actor, projectId: sync.projectId, resource: { syncId: id } },
            tx,
          );
        });
        return sync;
      }
      assertCan(ability, "remove-secrets", "secret-syncs", fields(sync));
      if (!sync.folderId) throw new AppError("BAD_REQUEST", FOLDER_GONE);
      if (await locks.isRunning(id)) throw new AppError("BAD_REQUEST", IN_PROGRESS);
      await enqueue([id], { action: "remove", deleteSyncOnComplete: true, actor: creator(actor) });
      return reload(id);
    },

    async trigger(
      actor: Actor,
      d: DestinationAdapter,
      id: string,
      action: SyncAction,
      importBehavior?: string,
    ) {
      if (action === "import" && !d.capabilities.import) {
        throw new AppError("BAD_REQUEST", `${d.name} does not support importing secrets.`);
      }
      const { sync } = await load(actor, d, id, ACTION_PERMISSION[action]);
      if (!sync.folderId) throw new AppError("BAD_REQUEST", FOLDER_GONE);
      if (await locks.isRunning(id)) throw new AppError("BAD_REQUEST", IN_PROGRESS);
      await enqueue([id], { action, importBehavior, actor: creator(actor) });
      return reload(id);
    },

    /** The next run's plan (key names only), computed live against the destination. */
    async preview(actor: Actor, d: DestinationAdapter, id: string) {
      const { sync } = await load(actor, d, id, "read");
      try {
        return await runner.preview(sync);
      } catch (err) {
        if (isDestinationError(err))
          throw new AppError("BAD_REQUEST", scrub(err.message), { name: "SecretSyncPreview" });
        throw err;
      }
    },

    async checkDestination(
      actor: Actor,
      d: DestinationAdapter,
      body: { projectId: string; destinationConfig: unknown; excludeSyncId?: string },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, body.projectId);
      assertCan(ability, "read", "secret-syncs");
      const same = JSON.stringify(body.destinationConfig);
      const rows = (await repo.listByProject(body.projectId, d.slug)).filter(
        (s) => s.id !== body.excludeSyncId,
      );
      const hit = rows.find((s) => JSON.stringify(s.destinationConfig) === same);
      return hit ? { hasDuplicate: true, duplicateProjectId: hit.projectId } : { hasDuplicate: false };
    },
  };
}

export type SyncsService = ReturnType<typeof createSyncsService>;
