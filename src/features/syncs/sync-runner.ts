import { createHmac } from "node:crypto";
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Db } from "../../db/client.js";
import { DestinationError, stringLeaves } from "../../destinations/errors.js";
import { getDestination } from "../../destinations/registry.js";
import type { DestinationAdapter, DestinationCtx, RemoteSecrets } from "../../destinations/types.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import type { ConnectionsService } from "../app-connections/connections-service.js";
import { ioCtx } from "../app-connections/io-ctx.js";
import type { Actor } from "../auth/actor.js";
import { folderOwnValues, secretsForSync } from "../secrets/secrets-for-sync.js";
import type { SecretsService } from "../secrets/secrets-service.js";
import type { SyncJob } from "./jobs/queue.js";
import { fingerprint, importable, type Plan, planRemove, planSync } from "./sync-engine.js";
import type { SyncWithJoins } from "./syncs-repo.js";

/**
 * One run of one action against a destination: build the ctx, read source and destination, plan with
 * the engine, apply. Used by the worker (sync/import/remove) and by preview (plan only). Returns the
 * bookkeeping the worker stores on success; throws DestinationError (or AppError) on failure.
 */
export const FOLDER_GONE =
  "Invalid Secret Sync source configuration: folder no longer exists. Please update source environment and secret path.";

type BaseOptions = { initialSyncBehavior: string; keySchema?: string; disableSecretDeletion?: boolean };

export interface RunResult {
  ownedKeys?: string[];
  keyFingerprints?: Record<string, string>;
  written?: string[];
  deleted?: string[];
}

export function createSyncRunner(deps: {
  db: Db;
  keyring: Keyring;
  config: Config;
  log: Logger;
  connections: ConnectionsService;
  secrets: SecretsService;
}) {
  const { db, keyring, config, log, connections, secrets } = deps;

  const nonRetryable = (message: string) =>
    new DestinationError({ code: "INVALID_CONFIG", message, retryable: false });

  async function open(sync: SyncWithJoins, signal?: AbortSignal, sink: string[] = []) {
    const d = getDestination(sync.destination) as DestinationAdapter;
    const conn = await connections.findById(sync.connectionId);
    if (!conn) throw nonRetryable("The sync's app connection no longer exists");
    const credentials = await connections.decrypt(conn);
    const ctx: DestinationCtx = {
      ...ioCtx(config, log.child({ syncId: sync.id, destination: d.slug }), conn.orgId, signal),
      config: d.configSchema.parse(sync.destinationConfig),
      syncOptions: d.syncOptionsSchema.parse(extraOptions(sync.syncOptions)),
      credentials: credentials as never,
    };
    // Strings that must never reach a stored message: every credential field.
    const sensitive = stringLeaves(credentials).filter((s) => s !== credentials.method);
    sink.push(...sensitive);
    return { d, ctx, sensitive };
  }

  async function source(sync: SyncWithJoins) {
    if (!sync.folderId) throw nonRetryable(FOLDER_GONE);
    const s = await secretsForSync(db, keyring, sync.folderId);
    if (!s) throw nonRetryable(FOLDER_GONE);
    return s;
  }

  /** HMAC key per sync, derived from the project's data key: fingerprints are useless elsewhere. */
  async function fingerprintOf(sync: SyncWithJoins) {
    const dk = await keyring.key(sync.projectId);
    const k = createHmac("sha256", dk).update(`secret-sync-fingerprint:${sync.id}`).digest();
    return (destKey: string, value: string) => fingerprint(k, destKey, value);
  }

  async function plan(sync: SyncWithJoins, d: DestinationAdapter, remote?: RemoteSecrets): Promise<Plan> {
    const src = await source(sync);
    const o = sync.syncOptions as BaseOptions;
    return planSync({
      source: src.values,
      keySchema: o.keySchema,
      environment: src.environment,
      normalizeKey: d.normalizeKey,
      remote,
      listValues: d.capabilities.listValues,
      ownedKeys: sync.ownedKeys,
      fingerprints: sync.keyFingerprints,
      fingerprintOf: await fingerprintOf(sync),
      disableSecretDeletion: o.disableSecretDeletion,
    });
  }

  function actorFor(sync: SyncWithJoins, job?: SyncJob): Actor {
    const a = job?.actor ?? sync.createdBy;
    if (!a) throw nonRetryable("Import needs the user or identity that created the sync, which is unknown");
    return { ...a, orgRole: "member", tokenId: "", authMethod: "secret-sync", ip: "" };
  }

  /** Writes destination keys (schema stripped) into the source folder per the behaviour. */
  async function importInto(sync: SyncWithJoins, remote: RemoteSecrets, behavior: string, job?: SyncJob) {
    const o = sync.syncOptions as BaseOptions;
    if (!sync.folderId || !sync.environment || !sync.folder) throw nonRetryable(FOLDER_GONE);
    const incoming = importable(remote, o.keySchema, sync.environment.slug);
    const invalid = [...incoming.keys()].filter((k) => k.includes(":") || k.includes("/"));
    if (invalid.length > 0) {
      throw nonRetryable(
        `Found ${invalid.length} invalid secret name(s): ${invalid.slice(0, 5).join(", ")}. Secret name cannot contain colon or forward slash.`,
      );
    }
    const own = await folderOwnValues(db, keyring, sync.projectId, sync.folderId);
    const creates = [...incoming].filter(([k]) => !own.has(k));
    const updates =
      behavior === "prioritize-destination"
        ? [...incoming].filter(([k, v]) => own.has(k) && own.get(k) !== v)
        : [];
    const scope = {
      projectId: sync.projectId,
      environment: sync.environment.slug,
      secretPath: sync.folder.path,
    };
    const actor = actorFor(sync, job);
    if (creates.length > 0)
      await secrets.createMany(
        actor,
        scope,
        creates.map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      );
    if (updates.length > 0)
      await secrets.updateMany(
        actor,
        scope,
        updates.map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      );
    return creates.length + updates.length;
  }

  return {
    open,

    async sync(
      sync: SyncWithJoins,
      job: SyncJob,
      signal?: AbortSignal,
      sink: string[] = [],
    ): Promise<RunResult> {
      const { d, ctx } = await open(sync, signal, sink);
      let remote = d.list ? await d.list(ctx) : undefined;
      const behavior = (sync.syncOptions as BaseOptions).initialSyncBehavior;
      if (!sync.lastSyncedAt && behavior !== "overwrite-destination" && d.capabilities.import && remote) {
        const n = await importInto(sync, remote, behavior.replace("import-", ""), job);
        if (n > 0 && d.list) remote = await d.list(ctx);
      }
      const p = await plan(sync, d, remote);
      sink.push(...p.desired.values());
      if (Object.keys(p.upsert).length > 0 || p.delete.length > 0) await d.apply(ctx, p);
      return {
        ownedKeys: p.nextOwned,
        keyFingerprints: d.capabilities.listValues ? {} : p.nextFingerprints,
        written: Object.keys(p.upsert),
        deleted: p.delete,
      };
    },

    async import(
      sync: SyncWithJoins,
      job: SyncJob,
      signal?: AbortSignal,
      sink: string[] = [],
    ): Promise<RunResult> {
      const { d, ctx } = await open(sync, signal, sink);
      if (!d.list || !d.capabilities.import)
        throw nonRetryable(`${d.name} does not support importing secrets.`);
      const remote = await d.list(ctx);
      sink.push(...[...remote.values()].filter((v): v is string => v !== null));
      await importInto(sync, remote, job.importBehavior ?? "prioritize-source", job);
      return {};
    },

    async remove(sync: SyncWithJoins, signal?: AbortSignal, sink: string[] = []): Promise<RunResult> {
      const { d, ctx } = await open(sync, signal, sink);
      const remote = d.list ? await d.list(ctx) : undefined;
      const env = sync.environment?.slug ?? "";
      const p = planRemove({
        ownedKeys: sync.ownedKeys,
        keySchema: (sync.syncOptions as BaseOptions).keySchema,
        environment: env,
        remote,
      });
      if (p.delete.length > 0) await d.apply(ctx, p);
      const gone = new Set(p.delete);
      const fps = Object.fromEntries(Object.entries(sync.keyFingerprints).filter(([k]) => !gone.has(k)));
      return {
        ownedKeys: sync.ownedKeys.filter((k) => !gone.has(k)),
        keyFingerprints: fps,
        deleted: p.delete,
      };
    },

    /** The plan of the next sync run, without writing anything (and without the initial import). */
    async preview(sync: SyncWithJoins) {
      const { d, ctx } = await open(sync);
      const remote = d.list ? await d.list(ctx) : undefined;
      const p = await plan(sync, d, remote);
      const upserts = Object.keys(p.upsert);
      const exists = (k: string) => (remote ? remote.has(k) : sync.ownedKeys.includes(k));
      return {
        create: upserts.filter((k) => !exists(k)).sort(),
        update: upserts.filter(exists).sort(),
        delete: [...p.delete].sort(),
        unchanged: [...p.unchanged].sort(),
        foreign: p.foreign,
      };
    },
  };
}

/** The destination-specific part of stored syncOptions (the shared keys belong to the engine). */
function extraOptions(o: Record<string, unknown>) {
  const { initialSyncBehavior: _i, keySchema: _k, disableSecretDeletion: _d, ...rest } = o;
  return rest;
}

export type SyncRunner = ReturnType<typeof createSyncRunner>;
