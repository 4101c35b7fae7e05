import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import { type PermissionRule, projectMemberships, projectRoles, projects } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import { TtlCache } from "../../lib/ttl-cache.js";
import type { Actor } from "../auth/actor.js";
import { type Ability, buildAbility } from "./can.js";
import { BUILT_IN_ROLES } from "./roles.js";

export type ProjectRow = typeof projects.$inferSelect;
export type ProjectPermission = {
  project: ProjectRow;
  ability: Ability;
  roles: string[];
  membershipId: string;
};

/**
 * The one project-permission lookup every route uses (Infisical's `getProjectPermission`, §1.5):
 * 1. unknown project, or a project of another organisation → 404 (ids cannot be probed across tenants);
 * 2. no membership → 403 "You are not member of this project";
 * 3. the CASL ability from the member's built-in and custom roles.
 * Projects and abilities are cached; any membership or role write calls `invalidate`, which drops the
 * cache here and (through app.ts) on other instances.
 */
export function createPermissionsService(deps: { db: Db; cacheTtlMs?: number }) {
  const { db } = deps;
  const ttl = deps.cacheTtlMs ?? 5_000;
  const projectCache = new TtlCache<string, ProjectRow>(ttl);
  const abilityCache = new TtlCache<string, Omit<ProjectPermission, "project">>(ttl);

  async function getProject(projectId: string): Promise<ProjectRow | undefined> {
    if (!isUuid(projectId)) return undefined;
    return projectCache.load(projectId, async () => {
      const [row] = await db.select().from(projects).where(eq(projects.id, projectId));
      return row;
    });
  }

  function loadAbility(actorId: string, projectId: string) {
    return abilityCache.load(`${actorId}:${projectId}`, () => buildMemberAbility(actorId, projectId));
  }

  async function buildMemberAbility(actorId: string, projectId: string) {
    const [m] = await db
      .select()
      .from(projectMemberships)
      .where(and(eq(projectMemberships.projectId, projectId), eq(projectMemberships.actorId, actorId)));
    if (!m) return undefined;
    const rules: PermissionRule[] = [];
    const custom = m.roles.filter((r) => !BUILT_IN_ROLES[r]);
    for (const r of m.roles) rules.push(...(BUILT_IN_ROLES[r]?.rules ?? []));
    if (custom.length > 0) {
      const rows = await db.select().from(projectRoles).where(eq(projectRoles.projectId, projectId));
      for (const row of rows) if (custom.includes(row.slug)) rules.push(...row.permissions);
    }
    return { ability: buildAbility(rules), roles: m.roles, membershipId: m.id };
  }

  /**
   * `getProjectPermission` answered from the caches alone, without a promise: undefined unless the
   * project and the caller's ability are both cached and the project is in the caller's organisation
   * (every other case, errors included, goes through `getProjectPermission`).
   */
  function cachedProjectPermission(actor: Actor, projectId: string): ProjectPermission | undefined {
    const project = projectCache.get(projectId);
    if (!project || project.orgId !== actor.orgId) return undefined;
    const a = abilityCache.get(`${actor.id}:${projectId}`);
    return a && { project, ability: a.ability, roles: a.roles, membershipId: a.membershipId };
  }

  async function getProjectPermission(actor: Actor, projectId: string): Promise<ProjectPermission> {
    const cached = cachedProjectPermission(actor, projectId);
    if (cached) return cached;
    const project = await getProject(projectId);
    if (!project || project.orgId !== actor.orgId) {
      throw new AppError("NOT_FOUND", `Project with ${projectId} not found`);
    }
    const a = await loadAbility(actor.id, projectId);
    if (!a) {
      throw new AppError("FORBIDDEN", "You are not allowed to access this resource", {
        name: "You are not member of this project",
      });
    }
    return { project, ...a };
  }

  return {
    getProject,
    getProjectPermission,
    cachedProjectPermission,
    /** Drops cached projects and abilities (call after any membership, role or project write). */
    invalidate(scope: { projectId?: string } = {}) {
      if (scope.projectId) {
        projectCache.delete(scope.projectId);
        abilityCache.deleteWhere((_v, k) => k.endsWith(`:${scope.projectId}`));
      } else {
        projectCache.clear();
        abilityCache.clear();
      }
    },
  };
}

export type PermissionsService = ReturnType<typeof createPermissionsService>;
