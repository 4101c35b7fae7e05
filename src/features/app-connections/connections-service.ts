import { and, asc, eq } from "drizzle-orm";
import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { Db, Executor } from "../../db/client.js";
import { appConnections } from "../../db/schema/index.js";
import { isDestinationError } from "../../destinations/errors.js";
import { connectionApps, getConnectionApp } from "../../destinations/registry.js";
import { type AnyConnectionApp, publicCredentials } from "../../destinations/types.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { ioCtx } from "./io-ctx.js";

/**
 * App connections: organisation-level credentials for one destination kind. Credentials are validated
 * by a real call to the vendor on create/update, sealed with the org's data key, and never returned
 * (only each app's public fields, e.g. `instanceUrl`).
 */
export type ConnectionRow = typeof appConnections.$inferSelect;
export type Credentials = { method: string } & Record<string, unknown>;
export type ConnectionInput = {
  name: string;
  description?: string | null;
  method: string;
  credentials: Record<string, unknown>;
};

const aad = (id: string) => ({ table: "app_connections", column: "encrypted_credentials", id });

export function createConnectionsService(deps: {
  db: Db;
  keyring: Keyring;
  audit: AuditLog;
  config: Config;
  log: Logger;
}) {
  const { db, keyring, audit, config, log } = deps;

  const notFoundById = (app: AnyConnectionApp | undefined, id: string) =>
    new AppError("NOT_FOUND", `Could not find App Connection with ID ${id}`, {
      name: app ? `${app.name}Connection` : "NotFound",
    });

  function assertAdmin(actor: Actor) {
    // App connections are organisation resources; as in Infisical, members may read and use them and
    // only organisation admins manage them.
    if (actor.orgRole !== "admin") {
      throw new AppError("PERMISSION_DENIED", "You are not allowed to manage app-connections");
    }
  }

  async function decrypt(row: ConnectionRow, ex?: Executor): Promise<Credentials> {
    const plain = await keyring.decrypt(row.orgId, row.encryptedCredentials, aad(row.id), ex);
    return { ...(JSON.parse(plain) as Record<string, unknown>), method: row.method };
  }

  async function view(row: ConnectionRow) {
    const app = getConnectionApp(row.app);
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      app: row.app,
      method: row.method,
      version: row.version,
      orgId: row.orgId,
      projectId: null,
      isPlatformManagedCredentials: false,
      gatewayId: null,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      credentials: publicCredentials(app, await decrypt(row)),
    };
  }

  async function validate(app: AnyConnectionApp, actor: Actor, credentials: Credentials) {
    try {
      await app.validate(credentials as never, ioCtx(config, log, actor.orgId));
    } catch (err) {
      if (isDestinationError(err))
        throw new AppError("BAD_REQUEST", err.message, { name: `${app.name}Connection` });
      throw err;
    }
  }

  async function load(actor: Actor, app: AnyConnectionApp | undefined, id: string): Promise<ConnectionRow> {
    const row = isUuid(id)
      ? (await db.select().from(appConnections).where(eq(appConnections.id, id)))[0]
      : undefined;
    if (!row || row.orgId !== actor.orgId) throw notFoundById(app, id);
    if (app && row.app !== app.app) {
      throw new AppError("NOT_FOUND", `Could not find ${app.name} Connection with ID ${id}`);
    }
    return row;
  }

  function duplicate(name: string) {
    return new AppError("BAD_REQUEST", `An App Connection with the name "${name}" already exists`);
  }

  return {
    options: () =>
      [...connectionApps]
        .map((a) => ({ name: a.name, app: a.app, methods: Object.keys(a.methods) }))
        .sort((a, b) => a.name.localeCompare(b.name)),

    async list(actor: Actor, appSlug?: string) {
      const where = appSlug
        ? and(eq(appConnections.orgId, actor.orgId), eq(appConnections.app, appSlug))
        : eq(appConnections.orgId, actor.orgId);
      const rows = await db.select().from(appConnections).where(where).orderBy(asc(appConnections.name));
      return Promise.all(rows.map(view));
    },

    async get(actor: Actor, appSlug: string, id: string) {
      return view(await load(actor, getConnectionApp(appSlug), id));
    },

    async getByName(actor: Actor, appSlug: string, name: string) {
      const app = getConnectionApp(appSlug);
      const [row] = await db
        .select()
        .from(appConnections)
        .where(
          and(
            eq(appConnections.orgId, actor.orgId),
            eq(appConnections.app, app.app),
            eq(appConnections.name, name),
          ),
        );
      if (!row) throw new AppError("NOT_FOUND", `Could not find App Connection with name ${name}`);
      return view(row);
    },

    async create(actor: Actor, appSlug: string, input: ConnectionInput) {
      assertAdmin(actor);
      const app = getConnectionApp(appSlug);
      const credentials: Credentials = { ...input.credentials, method: input.method };
      await validate(app, actor, credentials);
      const { method: _m, ...fields } = credentials;
      const row = await db
        .transaction(async (tx) => {
          const id = crypto.randomUUID();
          const sealed = await keyring.encrypt(actor.orgId, JSON.stringify(fields), aad(id), tx);
          const [r] = await tx
            .insert(appConnections)
            .values({
              id,
              orgId: actor.orgId,
              name: input.name,
              description: input.description ?? null,
              app: app.app,
              method: input.method,
              encryptedCredentials: sealed,
            })
            .returning();
          if (!r) throw new Error("insert returned nothing");
          await audit.record(
            { eventType: "create-app-connection", actor, resource: { id, app: app.app, name: input.name } },
            tx,
          );
          return r;
        })
        .catch((err: unknown) => {
          throw isUnique(err) ? duplicate(input.name) : err;
        });
      return view(row);
    },

    async update(actor: Actor, appSlug: string, id: string, input: Partial<ConnectionInput>) {
      assertAdmin(actor);
      const app = getConnectionApp(appSlug);
      const current = await load(actor, app, id);
      let sealed: Buffer | undefined;
      let method = current.method;
      if (input.credentials) {
        method = input.method ?? current.method;
        const credentials: Credentials = { ...input.credentials, method };
        await validate(app, actor, credentials);
        const { method: _m, ...fields } = credentials;
        sealed = await keyring.encrypt(actor.orgId, JSON.stringify(fields), aad(id));
      }
      const row = await db
        .transaction(async (tx) => {
          const [r] = await tx
            .update(appConnections)
            .set({
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.description !== undefined ? { description: input.description } : {}),
              ...(sealed ? { encryptedCredentials: sealed, method, version: current.version + 1 } : {}),
              updatedAt: new Date(),
            })
            .where(eq(appConnections.id, id))
            .returning();
          if (!r) throw notFoundById(app, id);
          await audit.record(
            { eventType: "update-app-connection", actor, resource: { id, app: app.app } },
            tx,
          );
          return r;
        })
        .catch((err: unknown) => {
          throw isUnique(err) ? duplicate(input.name ?? "") : err;
        });
      return view(row);
    },

    async remove(actor: Actor, appSlug: string, id: string) {
      assertAdmin(actor);
      const app = getConnectionApp(appSlug);
      const current = await load(actor, app, id);
      const out = await view(current);
      await db
        .transaction(async (tx) => {
          await tx.delete(appConnections).where(eq(appConnections.id, id));
          await audit.record(
            { eventType: "delete-app-connection", actor, resource: { id, app: app.app } },
            tx,
          );
        })
        .catch((err: unknown) => {
          if (
            (err as { code?: string }).code === "23503" ||
            (err as { cause?: { code?: string } }).cause?.code === "23503"
          ) {
            throw new AppError(
              "BAD_REQUEST",
              `Cannot delete App Connection with ID ${id}: it is used by one or more secret syncs. Delete those first.`,
            );
          }
          throw err;
        });
      return out;
    },

    /** For the sync service and worker: the row (org-checked by the caller) and its decrypted credentials. */
    async findById(id: string): Promise<ConnectionRow | undefined> {
      if (!isUuid(id)) return undefined;
      return (await db.select().from(appConnections).where(eq(appConnections.id, id)))[0];
    },
    decrypt,
  };
}

function isUnique(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 3 && e; i++) {
    if ((e as { code?: string }).code === "23505") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export type ConnectionsService = ReturnType<typeof createConnectionsService>;
