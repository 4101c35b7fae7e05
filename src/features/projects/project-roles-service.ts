import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { type PermissionRule, projectRoles } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { BUILT_IN_ROLES, CONDITIONAL_SUBJECTS, SUBJECT_ACTIONS, type Subject } from "../permissions/roles.js";

/** Custom project roles: Infisical's `{subject, action, conditions}` rules, validated before they are saved. */
type RoleRow = typeof projectRoles.$inferSelect;

const CONDITION_OPS = new Set(["$eq", "$neq", "$ne", "$in", "$glob"]);

/** Validates custom-role rules: known subjects and actions, conditions only where Infisical allows them. */
export function validateRules(rules: PermissionRule[]): PermissionRule[] {
  return rules.map((r) => {
    const actions = Array.isArray(r.action) ? r.action : [r.action];
    const allowed = SUBJECT_ACTIONS[r.subject as Subject] as readonly string[] | undefined;
    if (!allowed) throw new AppError("BAD_REQUEST", `Unknown permission subject '${r.subject}'`);
    for (const a of actions) {
      if (!allowed.includes(a))
        throw new AppError("BAD_REQUEST", `Unknown action '${a}' for subject '${r.subject}'`);
    }
    if (r.conditions) {
      if (!CONDITIONAL_SUBJECTS.includes(r.subject as Subject)) {
        throw new AppError("BAD_REQUEST", `Subject '${r.subject}' does not take conditions`);
      }
      for (const [field, cond] of Object.entries(r.conditions)) {
        if (field !== "environment" && field !== "secretPath") {
          throw new AppError("BAD_REQUEST", `Unsupported condition field '${field}'`);
        }
        const ops = typeof cond === "string" ? { $eq: cond } : (cond as Record<string, unknown>);
        for (const [op, v] of Object.entries(ops ?? {})) {
          if (!CONDITION_OPS.has(op))
            throw new AppError("BAD_REQUEST", `Unsupported condition operator '${op}'`);
          const values = Array.isArray(v) ? v : [v];
          if (values.some((x) => typeof x !== "string")) {
            throw new AppError("BAD_REQUEST", `Condition values for '${field}' must be strings`);
          }
          if (
            field === "secretPath" &&
            op !== "$glob" &&
            values.some((x) => !(x as string).startsWith("/"))
          ) {
            throw new AppError("BAD_REQUEST", "Invalid Secret Path; it must start with a '/'");
          }
        }
      }
    }
    return {
      subject: r.subject,
      action: actions,
      ...(r.conditions ? { conditions: r.conditions } : {}),
      ...(r.inverted ? { inverted: true } : {}),
    };
  });
}

export const roleView = (r: RoleRow) => ({
  id: r.id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  projectId: r.projectId,
  permissions: r.permissions,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

export function createProjectRolesService(deps: {
  db: Db;
  audit: AuditLog;
  permissions: PermissionsService;
}) {
  const { db, audit, permissions } = deps;
  return {
    async createRole(
      actor: Actor,
      projectId: string,
      input: { slug: string; name?: string; description?: string | null; permissions: PermissionRule[] },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "create", "role");
      if (BUILT_IN_ROLES[input.slug])
        throw new AppError("BAD_REQUEST", "The slug is reserved for a built-in role");
      const rules = validateRules(input.permissions);
      const row = await db.transaction(async (tx) => {
        const [dupe] = await tx
          .select({ id: projectRoles.id })
          .from(projectRoles)
          .where(and(eq(projectRoles.projectId, projectId), eq(projectRoles.slug, input.slug)));
        if (dupe) throw new AppError("BAD_REQUEST", "Role with same slug already exists");
        const [r] = await tx
          .insert(projectRoles)
          .values({
            projectId,
            slug: input.slug,
            name: input.name ?? input.slug,
            description: input.description ?? null,
            permissions: rules,
          })
          .returning();
        if (!r) throw new Error("insert returned nothing");
        await audit.record(
          { eventType: "create-project-role", actor, projectId, resource: { roleId: r.id, slug: r.slug } },
          tx,
        );
        return r;
      });
      permissions.invalidate({ projectId });
      return roleView(row);
    },

    async listRoles(actor: Actor, projectId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "role");
      const rows = await db
        .select()
        .from(projectRoles)
        .where(eq(projectRoles.projectId, projectId))
        .orderBy(asc(projectRoles.createdAt));
      const builtIn = Object.entries(BUILT_IN_ROLES).map(([slug, r]) => ({
        id: slug,
        slug,
        name: r.name,
        description: null,
        projectId,
        permissions: r.rules,
        createdAt: null,
        updatedAt: null,
      }));
      return [...builtIn, ...rows.map(roleView)];
    },

    async getRoleBySlug(actor: Actor, projectId: string, slug: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "role");
      const [r] = await db
        .select()
        .from(projectRoles)
        .where(and(eq(projectRoles.projectId, projectId), eq(projectRoles.slug, slug)));
      if (!r) throw new AppError("NOT_FOUND", `Role with slug '${slug}' not found`);
      return roleView(r);
    },

    async updateRole(
      actor: Actor,
      projectId: string,
      roleId: string,
      patch: { slug?: string; name?: string; description?: string | null; permissions?: PermissionRule[] },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "edit", "role");
      if (!isUuid(roleId)) throw new AppError("NOT_FOUND", `Role with ID '${roleId}' not found`);
      const rules = patch.permissions ? validateRules(patch.permissions) : undefined;
      const row = await db.transaction(async (tx) => {
        const [r] = await tx
          .update(projectRoles)
          .set({
            ...(patch.slug ? { slug: patch.slug } : {}),
            ...(patch.name ? { name: patch.name } : {}),
            ...(patch.description !== undefined ? { description: patch.description } : {}),
            ...(rules ? { permissions: rules } : {}),
            updatedAt: new Date(),
          })
          .where(and(eq(projectRoles.id, roleId), eq(projectRoles.projectId, projectId)))
          .returning();
        if (!r) throw new AppError("NOT_FOUND", `Role with ID '${roleId}' not found`);
        await audit.record({ eventType: "update-project-role", actor, projectId, resource: { roleId } }, tx);
        return r;
      });
      permissions.invalidate({ projectId });
      return roleView(row);
    },

    async deleteRole(actor: Actor, projectId: string, roleId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "delete", "role");
      if (!isUuid(roleId)) throw new AppError("NOT_FOUND", `Role with ID '${roleId}' not found`);
      const row = await db.transaction(async (tx) => {
        const [r] = await tx
          .delete(projectRoles)
          .where(and(eq(projectRoles.id, roleId), eq(projectRoles.projectId, projectId)))
          .returning();
        if (!r) throw new AppError("NOT_FOUND", `Role with ID '${roleId}' not found`);
        await audit.record({ eventType: "delete-project-role", actor, projectId, resource: { roleId } }, tx);
        return r;
      });
      permissions.invalidate({ projectId });
      return roleView(row);
    },
  };
}

export type ProjectRolesService = ReturnType<typeof createProjectRolesService>;
