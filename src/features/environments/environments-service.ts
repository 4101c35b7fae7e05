import { and, eq, max, sql } from "drizzle-orm";
import type { Db, Executor } from "../../db/client.js";
import { environments, folders } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import { shiftPositions } from "../../lib/positions.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { permissionForResource } from "../permissions/resource-permission.js";

export type EnvironmentRow = typeof environments.$inferSelect;

/**
 * Project environments (Infisical's project-env service). Environments carry no permission conditions:
 * every check is on the bare `environments` subject. Creating one also creates its root folder, as
 * every secret path resolves from there.
 *
 * Writes that move positions take a per-project transaction advisory lock, so two concurrent creates
 * cannot both append at the same position (Infisical takes a Redis lock for the same reason).
 */
export function createEnvironmentsService(deps: {
  db: Db;
  audit: AuditLog;
  permissions: PermissionsService;
}) {
  const { db, audit, permissions } = deps;

  const listOf = (projectId: string) => ({
    table: environments,
    position: environments.position,
    scope: eq(environments.projectId, projectId),
  });

  const lockProject = (tx: Executor, projectId: string) =>
    tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`env:${projectId}`}))`);

  const notFoundById = (id: string, projectId: string, name?: string) =>
    new AppError("NOT_FOUND", `Environment with id '${id}' in project with ID '${projectId}' not found`, {
      name,
    });

  async function findInProject(ex: Executor, projectId: string, id: string) {
    if (!isUuid(id)) return undefined;
    const [row] = await ex
      .select()
      .from(environments)
      .where(and(eq(environments.id, id), eq(environments.projectId, projectId)));
    return row;
  }

  async function slugTaken(ex: Executor, projectId: string, slug: string, exceptId?: string) {
    const [row] = await ex
      .select({ id: environments.id })
      .from(environments)
      .where(and(eq(environments.projectId, projectId), eq(environments.slug, slug)));
    return row !== undefined && row.id !== exceptId;
  }

  return {
    async create(actor: Actor, projectId: string, input: { name: string; slug: string; position?: number }) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "create", "environments");
      return db.transaction(async (tx) => {
        await lockProject(tx, projectId);
        if (await slugTaken(tx, projectId, input.slug)) {
          throw new AppError("BAD_REQUEST", "Environment with slug already exist", {
            name: "CreateEnvironment",
          });
        }
        let position = input.position;
        if (position === undefined) {
          const [last] = await tx
            .select({ pos: max(environments.position) })
            .from(environments)
            .where(eq(environments.projectId, projectId));
          position = (last?.pos ?? 0) + 1;
        } else {
          // Inserting at a taken position shifts that environment and the ones after it down by one.
          await shiftPositions(tx, listOf(projectId), null, position);
        }
        const [env] = await tx
          .insert(environments)
          .values({ projectId, name: input.name, slug: input.slug, position })
          .returning();
        if (!env) throw new Error("insert returned nothing");
        await tx.insert(folders).values({ envId: env.id, name: "root", path: "/" });
        await audit.record(
          {
            eventType: "create-environment",
            actor,
            projectId,
            resource: { environmentId: env.id, name: env.name, slug: env.slug },
          },
          tx,
        );
        return env;
      });
    },

    async update(
      actor: Actor,
      projectId: string,
      id: string,
      patch: { name?: string; slug?: string; position?: number },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "edit", "environments");
      return db.transaction(async (tx) => {
        await lockProject(tx, projectId);
        const old = await findInProject(tx, projectId, id);
        if (!old) throw notFoundById(id, projectId);
        if (patch.slug && (await slugTaken(tx, projectId, patch.slug, old.id))) {
          throw new AppError("BAD_REQUEST", "Environment with slug already exist", {
            name: "UpdateEnvironment",
          });
        }
        const to = patch.position;
        if (to !== undefined) await shiftPositions(tx, listOf(projectId), old.position, to);
        const [env] = await tx
          .update(environments)
          .set({
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.slug !== undefined ? { slug: patch.slug } : {}),
            ...(to !== undefined ? { position: to } : {}),
            updatedAt: new Date(),
          })
          .where(eq(environments.id, old.id))
          .returning();
        if (!env) throw notFoundById(id, projectId);
        await audit.record(
          {
            eventType: "update-environment",
            actor,
            projectId,
            resource: {
              environmentId: env.id,
              oldSlug: old.slug,
              newSlug: env.slug,
              oldPos: old.position,
              newPos: env.position,
            },
          },
          tx,
        );
        return env;
      });
    },

    /** Deleting an environment cascades to its folders, and through them to secrets and imports. */
    async remove(actor: Actor, projectId: string, id: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "delete", "environments");
      if (!isUuid(id)) throw notFoundById(id, projectId, "DeleteEnvironment");
      return db.transaction(async (tx) => {
        const [env] = await tx
          .delete(environments)
          .where(and(eq(environments.id, id), eq(environments.projectId, projectId)))
          .returning();
        if (!env) throw notFoundById(id, projectId, "DeleteEnvironment");
        await audit.record(
          {
            eventType: "delete-environment",
            actor,
            projectId,
            resource: { environmentId: env.id, name: env.name, slug: env.slug },
          },
          tx,
        );
        return env;
      });
    },

    /**
     * By id alone, as Infisical does: the environment is found first and permission is checked on its
     * own project (so the path's project id is not trusted). Other tenants get the same 404.
     */
    async getById(actor: Actor, id: string) {
      const notFound = new AppError("NOT_FOUND", `Environment with ID '${id}' not found`);
      if (!isUuid(id)) throw notFound;
      const [env] = await db.select().from(environments).where(eq(environments.id, id));
      if (!env) throw notFound;
      const { ability } = await permissionForResource(permissions, actor, env.projectId, notFound);
      assertCan(ability, "read", "environments");
      audit.recordLater({
        eventType: "get-environment",
        actor,
        projectId: env.projectId,
        resource: { id: env.id },
      });
      return env;
    },

    async getBySlug(actor: Actor, projectId: string, slug: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "environments");
      const [env] = await db
        .select()
        .from(environments)
        .where(and(eq(environments.projectId, projectId), eq(environments.slug, slug)));
      if (!env) {
        throw new AppError(
          "NOT_FOUND",
          `Environment with slug '${slug}' in project with ID '${projectId}' not found`,
        );
      }
      return env;
    },
  };
}

export type EnvironmentsService = ReturnType<typeof createEnvironmentsService>;
