import { and, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { auditLogs } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";

export type AuditFilter = {
  projectId?: string;
  actor?: string;
  eventType?: string;
  startDate?: Date;
  endDate?: Date;
  offset: number;
  limit: number;
};

/**
 * Reads for `GET /api/v1/organization/audit-logs`. Organisation admins see the whole organisation;
 * anyone else must name a project where they may read audit logs.
 */
export function createAuditQuery(deps: {
  db: Db;
  permissions: PermissionsService;
  flush: () => Promise<void>;
}) {
  return async function list(actor: Actor, f: AuditFilter) {
    if (f.projectId && actor.orgRole === "admin") {
      const project = await deps.permissions.getProject(f.projectId);
      if (!project || project.orgId !== actor.orgId) {
        throw new AppError("NOT_FOUND", `Project with ${f.projectId} not found`);
      }
    } else if (f.projectId) {
      const { ability } = await deps.permissions.getProjectPermission(actor, f.projectId);
      assertCan(ability, "read", "audit-logs");
    } else if (actor.orgRole !== "admin") {
      throw new AppError("PERMISSION_DENIED", "You are not allowed to read audit logs of this organization");
    }
    // Read and login records are batched; flush so a reader sees everything recorded so far.
    await deps.flush();
    const where: SQL[] = [eq(auditLogs.orgId, actor.orgId)];
    if (f.projectId) where.push(eq(auditLogs.projectId, f.projectId));
    if (f.actor)
      where.push(isUuid(f.actor) ? eq(auditLogs.actorId, f.actor) : eq(auditLogs.actorName, f.actor));
    if (f.eventType) where.push(eq(auditLogs.eventType, f.eventType));
    if (f.startDate) where.push(gte(auditLogs.createdAt, f.startDate));
    if (f.endDate) where.push(lte(auditLogs.createdAt, f.endDate));
    const rows = await deps.db
      .select()
      .from(auditLogs)
      .where(and(...where))
      .orderBy(desc(auditLogs.createdAt))
      .limit(f.limit)
      .offset(f.offset);
    return rows.map((r) => ({
      id: r.id,
      actor: { type: r.actorType, metadata: { id: r.actorId, name: r.actorName } },
      event: { type: r.eventType, metadata: r.resource },
      projectId: r.projectId,
      orgId: r.orgId,
      ipAddress: r.ip,
      userAgent: r.userAgent,
      outcome: r.outcome,
      createdAt: r.createdAt,
    }));
  };
}
