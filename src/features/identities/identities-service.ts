import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { identities, identityUniversalAuths, projectMemberships } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";

/** Organisation roles for identities and users. Only `admin` manages identities and users. */
export const ORG_ROLES = ["admin", "member", "no-access"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export function assertOrgAdmin(actor: Actor, action = "manage identities") {
  if (actor.orgRole !== "admin") {
    throw new AppError("PERMISSION_DENIED", `You are not allowed to ${action} in this organization`, {
      details: [{ action, subject: "organization", orgRole: actor.orgRole }],
    });
  }
}

export type IdentityRow = typeof identities.$inferSelect;

export function identityView(i: IdentityRow, hasUa: boolean) {
  return {
    id: i.id,
    name: i.name,
    orgId: i.orgId,
    role: i.orgRole,
    authMethod: hasUa ? "universal-auth" : i.authMethod,
    authMethods: hasUa ? ["universal-auth"] : i.authMethod ? [i.authMethod] : [],
    hasDeleteProtection: false,
    createdAt: i.createdAt,
    updatedAt: i.updatedAt,
  };
}

export function createIdentitiesService(deps: {
  db: Db;
  audit: AuditLog;
  onIdentityChanged: (identityId: string) => void;
}) {
  const { db, audit } = deps;

  /** Loads an identity of the caller's organisation; any other organisation's id is a 404. */
  async function load(actor: Actor, identityId: string) {
    if (!isUuid(identityId)) throw new AppError("NOT_FOUND", `Identity with ID ${identityId} not found`);
    const [row] = await db
      .select({ identity: identities, uaId: identityUniversalAuths.id })
      .from(identities)
      .leftJoin(identityUniversalAuths, eq(identityUniversalAuths.identityId, identities.id))
      .where(and(eq(identities.id, identityId), eq(identities.orgId, actor.orgId)));
    if (!row) throw new AppError("NOT_FOUND", `Identity with ID ${identityId} not found`);
    return { identity: row.identity, hasUa: row.uaId !== null };
  }

  return {
    load,
    async create(actor: Actor, input: { name: string; organizationId: string; role: string }) {
      if (input.organizationId !== actor.orgId) {
        throw new AppError("NOT_FOUND", `Organization with ID ${input.organizationId} not found`);
      }
      assertOrgAdmin(actor);
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(identities)
          .values({ orgId: actor.orgId, name: input.name, orgRole: input.role })
          .returning();
        if (!row) throw new Error("insert returned nothing");
        await audit.record(
          { eventType: "create-identity", actor, resource: { identityId: row.id, name: row.name } },
          tx,
        );
        return identityView(row, false);
      });
    },
    async get(actor: Actor, identityId: string) {
      const { identity, hasUa } = await load(actor, identityId);
      return identityView(identity, hasUa);
    },
    async list(actor: Actor, orgId: string) {
      if (orgId !== actor.orgId) throw new AppError("NOT_FOUND", `Organization with ID ${orgId} not found`);
      if (actor.orgRole === "no-access") assertOrgAdmin(actor, "read identities");
      const rows = await db
        .select({ identity: identities, uaId: identityUniversalAuths.id })
        .from(identities)
        .leftJoin(identityUniversalAuths, eq(identityUniversalAuths.identityId, identities.id))
        .where(eq(identities.orgId, orgId))
        .orderBy(identities.createdAt);
      return rows.map((r) => identityView(r.identity, r.uaId !== null));
    },
    async update(actor: Actor, identityId: string, patch: { name?: string; role?: string }) {
      await load(actor, identityId);
      assertOrgAdmin(actor);
      const view = await db.transaction(async (tx) => {
        const [row] = await tx
          .update(identities)
          .set({
            ...(patch.name ? { name: patch.name } : {}),
            ...(patch.role ? { orgRole: patch.role } : {}),
            updatedAt: new Date(),
          })
          .where(eq(identities.id, identityId))
          .returning();
        if (!row) throw new AppError("NOT_FOUND", `Identity with ID ${identityId} not found`);
        await audit.record({ eventType: "update-identity", actor, resource: { identityId } }, tx);
        const [ua] = await tx
          .select({ id: identityUniversalAuths.id })
          .from(identityUniversalAuths)
          .where(eq(identityUniversalAuths.identityId, identityId));
        return identityView(row, Boolean(ua));
      });
      deps.onIdentityChanged(identityId);
      return view;
    },
    async remove(actor: Actor, identityId: string) {
      const { identity, hasUa } = await load(actor, identityId);
      assertOrgAdmin(actor);
      if (identityId === actor.id) throw new AppError("BAD_REQUEST", "You cannot delete your own identity");
      await db.transaction(async (tx) => {
        // Memberships reference identities without a foreign key (they may name users too).
        await tx.delete(projectMemberships).where(eq(projectMemberships.actorId, identityId));
        await tx.delete(identities).where(eq(identities.id, identityId));
        await audit.record({ eventType: "delete-identity", actor, resource: { identityId } }, tx);
      });
      deps.onIdentityChanged(identityId);
      return identityView(identity, hasUa);
    },
  };
}

export type IdentitiesService = ReturnType<typeof createIdentitiesService>;
