import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { secretTags } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { permissionForResource } from "../permissions/resource-permission.js";

export type TagRow = typeof secretTags.$inferSelect;

/** Postgres unique_violation: the (project_id, slug) constraint lost a race with a concurrent write. */
const isUniqueViolation = (err: unknown) =>
  (err as { code?: string })?.code === "23505" ||
  (err as { cause?: { code?: string } })?.cause?.code === "23505";

const TAG_EXISTS = () => new AppError("BAD_REQUEST", "Tag already exists");

/**
 * Project secret tags (Infisical's secret-tag service). Lookups by tag id ignore the project id in the
 * URL and authorise against the tag's own project, as Infisical does; a tag of another organisation is
 * indistinguishable from a missing one (404). Deleting a tag detaches it from secrets through the
 * secrets feature's ON DELETE CASCADE link rows.
 */
export function createTagsService(deps: { db: Db; audit: AuditLog; permissions: PermissionsService }) {
  const { db, audit, permissions } = deps;

  /** The tag and the caller's ability on its project; 404 before any permission check. */
  async function loadTag(actor: Actor, tagId: string, action: "read" | "edit" | "delete") {
    const notFound = new AppError("NOT_FOUND", `Tag with ID '${tagId}' not found`);
    if (!isUuid(tagId)) throw notFound;
    const [tag] = await db.select().from(secretTags).where(eq(secretTags.id, tagId));
    if (!tag) throw notFound;
    const { ability } = await permissionForResource(permissions, actor, tag.projectId, notFound);
    assertCan(ability, action, "tags");
    return tag;
  }

  return {
    async list(actor: Actor, projectId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "tags");
      return db
        .select()
        .from(secretTags)
        .where(eq(secretTags.projectId, projectId))
        .orderBy(asc(secretTags.createdAt), asc(secretTags.slug));
    },

    getById: (actor: Actor, tagId: string) => loadTag(actor, tagId, "read"),

    async getBySlug(actor: Actor, projectId: string, slug: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "tags");
      const [tag] = await db
        .select()
        .from(secretTags)
        .where(and(eq(secretTags.projectId, projectId), eq(secretTags.slug, slug)));
      if (!tag) throw new AppError("NOT_FOUND", `Tag with slug '${slug}' not found`);
      return tag;
    },

    async create(actor: Actor, projectId: string, input: { slug: string; color: string }) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "create", "tags");
      // A duplicate slug (even one racing this request) loses to ON CONFLICT and becomes the 400.
      return db.transaction(async (tx) => {
        const [tag] = await tx
          .insert(secretTags)
          .values({
            projectId,
            slug: input.slug,
            color: input.color,
            createdBy: actor.id,
            createdByActorType: actor.type,
          })
          .onConflictDoNothing()
          .returning();
        if (!tag) throw TAG_EXISTS();
        await audit.record(
          { eventType: "create-tag", actor, projectId, resource: { tagId: tag.id, slug: tag.slug } },
          tx,
        );
        return tag;
      });
    },

    async update(actor: Actor, tagId: string, patch: { slug?: string; color?: string }) {
      const tag = await loadTag(actor, tagId, "edit");
      try {
        return await db.transaction(async (tx) => {
          if (patch.slug !== undefined && patch.slug !== tag.slug) {
            const [dupe] = await tx
              .select({ id: secretTags.id })
              .from(secretTags)
              .where(and(eq(secretTags.projectId, tag.projectId), eq(secretTags.slug, patch.slug)));
            if (dupe) throw TAG_EXISTS();
          }
          const [updated] = await tx
            .update(secretTags)
            .set({
              ...(patch.slug !== undefined ? { slug: patch.slug } : {}),
              ...(patch.color !== undefined ? { color: patch.color } : {}),
              updatedAt: new Date(),
            })
            .where(eq(secretTags.id, tag.id))
            .returning();
          if (!updated) throw new AppError("NOT_FOUND", `Tag with ID '${tagId}' not found`);
          await audit.record(
            {
              eventType: "update-tag",
              actor,
              projectId: tag.projectId,
              resource: { tagId: tag.id, oldSlug: tag.slug, newSlug: updated.slug },
            },
            tx,
          );
          return updated;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw TAG_EXISTS();
        throw err;
      }
    },

    async remove(actor: Actor, tagId: string) {
      const tag = await loadTag(actor, tagId, "delete");
      return db.transaction(async (tx) => {
        const [deleted] = await tx.delete(secretTags).where(eq(secretTags.id, tag.id)).returning();
        if (!deleted) throw new AppError("NOT_FOUND", `Tag with ID '${tagId}' not found`);
        await audit.record(
          {
            eventType: "delete-tag",
            actor,
            projectId: tag.projectId,
            resource: { tagId: tag.id, slug: tag.slug },
          },
          tx,
        );
        return deleted;
      });
    },
  };
}

export type TagsService = ReturnType<typeof createTagsService>;
