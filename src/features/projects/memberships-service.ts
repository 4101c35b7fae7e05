import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  identities,
  orgMemberships,
  type PermissionRule,
  projectMemberships,
  projectRoles,
  users,
} from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { BUILT_IN_ROLES, CONDITIONAL_SUBJECTS, SUBJECT_ACTIONS, type Subject } from "../permissions/roles.js";

type MembershipRow = typeof projectMemberships.$inferSelect;
type RoleRow = typeof projectRoles.$inferSelect;

const roleEntries = (m: MembershipRow) =>
  m.roles.map((role) => ({
    id: `${m.id}:${role}`,
    role: BUILT_IN_ROLES[role] ? role : "custom",
    customRoleSlug: BUILT_IN_ROLES[role] ? null : role,
    isTemporary: false,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  }));

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

export function createMembershipsService(deps: { db: Db; audit: AuditLog; permissions: PermissionsService }) {
  const { db, audit, permissions } = deps;

  async function assertRolesExist(projectId: string, roles: string[]) {
    if (roles.length === 0) throw new AppError("BAD_REQUEST", "At least one role is required");
    const custom = roles.filter((r) => !BUILT_IN_ROLES[r]);
    if (custom.length === 0) return;
    const rows = await db
      .select({ slug: projectRoles.slug })
      .from(projectRoles)
      .where(and(eq(projectRoles.projectId, projectId), inArray(projectRoles.slug, custom)));
    const missing = custom.filter((c) => !rows.some((r) => r.slug === c));
    if (missing.length > 0)
      throw new AppError("NOT_FOUND", `Project role with slug '${missing[0]}' not found`);
  }

  async function identityOfOrg(actor: Actor, identityId: string) {
    if (!isUuid(identityId)) throw new AppError("NOT_FOUND", `Identity with ID ${identityId} not found`);
    const [i] = await db
      .select()
      .from(identities)
      .where(and(eq(identities.id, identityId), eq(identities.orgId, actor.orgId)));
    if (!i) throw new AppError("NOT_FOUND", `Identity with ID ${identityId} not found`);
    return i;
  }

  function identityMembershipView(m: MembershipRow, i: typeof identities.$inferSelect) {
    return {
      id: m.id,
      identityId: i.id,
      projectId: m.projectId,
      createdAt: m.createdAt,
      updatedAt: m.updatedAt,
      roles: roleEntries(m),
      identity: { id: i.id, name: i.name, authMethods: i.authMethod ? [i.authMethod] : [] },
    };
  }

  return {
    async addIdentity(actor: Actor, projectId: string, identityId: string, roles: string[]) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "create", "identity");
      const identity = await identityOfOrg(actor, identityId);
      await assertRolesExist(projectId, roles);
      const m = await db.transaction(async (tx) => {
        const [dupe] = await tx
          .select({ id: projectMemberships.id })
          .from(projectMemberships)
          .where(
            and(eq(projectMemberships.projectId, projectId), eq(projectMemberships.actorId, identityId)),
          );
        if (dupe) throw new AppError("BAD_REQUEST", "Identity is already a member of this project");
        const [row] = await tx
          .insert(projectMemberships)
          .values({ projectId, actorType: "identity", actorId: identityId, roles })
          .returning();
        if (!row) throw new Error("insert returned nothing");
        await audit.record(
          { eventType: "add-identity-to-project", actor, projectId, resource: { identityId, roles } },
          tx,
        );
        return row;
      });
      permissions.invalidate({ projectId });
      return identityMembershipView(m, identity);
    },

    async listIdentities(actor: Actor, projectId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "identity");
      const rows = await db
        .select({ m: projectMemberships, i: identities })
        .from(projectMemberships)
        .innerJoin(identities, eq(identities.id, projectMemberships.actorId))
        .where(eq(projectMemberships.projectId, projectId))
        .orderBy(asc(projectMemberships.createdAt));
      return rows.map((r) => identityMembershipView(r.m, r.i));
    },

    async getIdentity(actor: Actor, projectId: string, identityId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "read", "identity");
      const identity = await identityOfOrg(actor, identityId);
      const [m] = await db
        .select()
        .from(projectMemberships)
        .where(and(eq(projectMemberships.projectId, projectId), eq(projectMemberships.actorId, identityId)));
      if (!m)
        throw new AppError(
          "NOT_FOUND",
          `Project membership for identity with ID '${identityId}' in project with ID '${projectId}' not found`,
        );
      return identityMembershipView(m, identity);
    },

    async updateIdentity(actor: Actor, projectId: string, identityId: string, roles: string[]) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "edit", "identity");
      const identity = await identityOfOrg(actor, identityId);
      await assertRolesExist(projectId, roles);
      const m = await db.transaction(async (tx) => {
        const [row] = await tx
          .update(projectMemberships)
          .set({ roles, updatedAt: new Date() })
          .where(and(eq(projectMemberships.projectId, projectId), eq(projectMemberships.actorId, identityId)))
          .returning();
        if (!row)
          throw new AppError(
            "NOT_FOUND",
            `Project membership for identity with ID '${identityId}' not found`,
          );
        await audit.record(
          {
            eventType: "update-identity-project-membership",
            actor,
            projectId,
            resource: { identityId, roles },
          },
          tx,
        );
        return row;
      });
      permissions.invalidate({ projectId });
      return { roles: roleEntries(m), membership: identityMembershipView(m, identity) };
    },

    async removeIdentity(actor: Actor, projectId: string, identityId: string) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "delete", "identity");
      const identity = await identityOfOrg(actor, identityId);
      const m = await db.transaction(async (tx) => {
        const [row] = await tx
          .delete(projectMemberships)
          .where(and(eq(projectMemberships.projectId, projectId), eq(projectMemberships.actorId, identityId)))
          .returning();
        if (!row)
          throw new AppError(
            "NOT_FOUND",
            `Project membership for identity with ID '${identityId}' not found`,
          );
        await audit.record(
          { eventType: "remove-identity-from-project", actor, projectId, resource: { identityId } },
          tx,
        );
        return row;
      });
      permissions.invalidate({ projectId });
      return identityMembershipView(m, identity);
    },

    /** The SDK's `inviteMembers`: adds organisation users (by email/username) with role slugs. */
    async addUsers(
      actor: Actor,
      projectId: string,
      input: { emails?: string[]; usernames?: string[]; roleSlugs?: string[] },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "create", "member");
      const roles = input.roleSlugs && input.roleSlugs.length > 0 ? input.roleSlugs : ["member"];
      await assertRolesExist(projectId, roles);
      const names = [...(input.emails ?? []), ...(input.usernames ?? [])].map((e) => e.toLowerCase());
      if (names.length === 0) throw new AppError("BAD_REQUEST", "Must provide either emails or usernames");
      const found = await db
        .select({ id: users.id, email: users.email })
        .from(users)
        .innerJoin(
          orgMemberships,
          and(eq(orgMemberships.userId, users.id), eq(orgMemberships.orgId, actor.orgId)),
        )
        .where(inArray(users.email, names));
      const missing = names.filter((n) => !found.some((f) => f.email === n));
      if (missing.length > 0)
        throw new AppError("NOT_FOUND", `Users not found in organization: ${missing.join(", ")}`);
      const rows = await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(projectMemberships)
          .values(found.map((u) => ({ projectId, actorType: "user" as const, actorId: u.id, roles })))
          .onConflictDoNothing()
          .returning();
        await audit.record(
          {
            eventType: "add-users-to-project",
            actor,
            projectId,
            resource: { userIds: found.map((f) => f.id), roles },
          },
          tx,
        );
        return inserted;
      });
      permissions.invalidate({ projectId });
      return rows.map((m) => ({
        id: m.id,
        userId: m.actorId,
        projectId: m.projectId,
        roles: roleEntries(m),
        createdAt: m.createdAt,
        updatedAt: m.updatedAt,
      }));
    },

    // ---- custom roles ----
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

export type MembershipsService = ReturnType<typeof createMembershipsService>;
