import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  identities,
  orgMemberships,
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
import { BUILT_IN_ROLES } from "../permissions/roles.js";

type MembershipRow = typeof projectMemberships.$inferSelect;

const roleEntries = (m: MembershipRow) =>
  m.roles.map((role) => ({
    id: `${m.id}:${role}`,
    role: BUILT_IN_ROLES[role] ? role : "custom",
    customRoleSlug: BUILT_IN_ROLES[role] ? null : role,
    isTemporary: false,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  }));

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
  };
}

export type MembershipsService = ReturnType<typeof createMembershipsService>;
