import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  encryptionKeys,
  environments,
  folders,
  projectMemberships,
  projects,
} from "../../db/schema/index.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { AppError } from "../../lib/errors.js";
import { randomAlnum } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { assertCan } from "../permissions/can.js";
import type { PermissionsService, ProjectRow } from "../permissions/permissions-service.js";

export const DEFAULT_ENVIRONMENTS = [
  { name: "Development", slug: "dev" },
  { name: "Staging", slug: "staging" },
  { name: "Production", slug: "prod" },
];

const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");

/** Infisical's project object (SanitizedProjectSchema plus `_id` and `environments`). */
export function projectView(p: ProjectRow, envs: { id: string; name: string; slug: string }[]) {
  return {
    id: p.id,
    _id: p.id,
    name: p.name,
    description: p.description,
    type: p.type,
    defaultProduct: p.type,
    slug: p.slug,
    autoCapitalization: false,
    orgId: p.orgId,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    version: 3,
    upgradeStatus: null,
    pitVersionLimit: 10,
    kmsCertificateKeyId: null,
    auditLogsRetentionDays: null,
    hasDeleteProtection: p.hasDeleteProtection,
    secretSharing: true,
    showSnapshotsLegacy: false,
    environments: envs.map((e) => ({ name: e.name, slug: e.slug, id: e.id })),
  };
}

export function createProjectsService(deps: {
  db: Db;
  keyring: Keyring;
  audit: AuditLog;
  permissions: PermissionsService;
}) {
  const { db, keyring, audit, permissions } = deps;

  async function envsOf(projectIds: string[]) {
    if (projectIds.length === 0) return [];
    return db
      .select({
        id: environments.id,
        name: environments.name,
        slug: environments.slug,
        projectId: environments.projectId,
      })
      .from(environments)
      .where(inArray(environments.projectId, projectIds))
      .orderBy(asc(environments.position));
  }

  async function view(p: ProjectRow) {
    return projectView(p, await envsOf([p.id]));
  }

  return {
    async create(
      actor: Actor,
      input: {
        projectName: string;
        slug?: string;
        projectDescription?: string;
        type?: string;
        shouldCreateDefaultEnvs?: boolean;
      },
    ) {
      if (actor.orgRole === "no-access") {
        throw new AppError("FORBIDDEN", "You don't have permission to create a project");
      }
      const slug =
        input.slug ??
        `${slugify(input.projectName).slice(0, 30) || "project"}-${randomAlnum(4).toLowerCase()}`;
      const project = await db.transaction(async (tx) => {
        const [dupe] = await tx
          .select({ id: projects.id })
          .from(projects)
          .where(and(eq(projects.orgId, actor.orgId), eq(projects.slug, slug)));
        if (dupe) {
          throw new AppError(
            "BAD_REQUEST",
            `A project with the slug "${slug}" already exists in your organization. Please choose a different name or slug.`,
          );
        }
        const [p] = await tx
          .insert(projects)
          .values({
            orgId: actor.orgId,
            name: input.projectName,
            slug,
            description: input.projectDescription ?? null,
            type: input.type ?? "secret-manager",
          })
          .returning();
        if (!p) throw new Error("insert returned nothing");
        await keyring.createKey(p.id, tx);
        if (input.shouldCreateDefaultEnvs !== false) {
          const envRows = await tx
            .insert(environments)
            .values(DEFAULT_ENVIRONMENTS.map((e, i) => ({ ...e, projectId: p.id, position: i + 1 })))
            .returning({ id: environments.id });
          await tx.insert(folders).values(envRows.map((e) => ({ envId: e.id, name: "root", path: "/" })));
        }
        // The creator (user or identity) becomes project admin, as in Infisical.
        await tx
          .insert(projectMemberships)
          .values({ projectId: p.id, actorType: actor.type, actorId: actor.id, roles: ["admin"] });
        await audit.record(
          { eventType: "create-project", actor, projectId: p.id, resource: { projectId: p.id, slug } },
          tx,
        );
        return p;
      });
      return view(project);
    },

    async get(actor: Actor, projectId: string) {
      const { project } = await permissions.getProjectPermission(actor, projectId);
      return view(project);
    },

    async getBySlug(actor: Actor, slug: string) {
      const [p] = await db
        .select()
        .from(projects)
        .where(and(eq(projects.orgId, actor.orgId), eq(projects.slug, slug)));
      if (!p) throw new AppError("NOT_FOUND", `Project with slug '${slug}' not found`);
      const { project } = await permissions.getProjectPermission(actor, p.id);
      return view(project);
    },

    async list(actor: Actor) {
      const rows = await db
        .select({ project: projects })
        .from(projectMemberships)
        .innerJoin(projects, eq(projects.id, projectMemberships.projectId))
        .where(and(eq(projectMemberships.actorId, actor.id), eq(projects.orgId, actor.orgId)))
        .orderBy(asc(projects.createdAt));
      const envs = await envsOf(rows.map((r) => r.project.id));
      return rows.map((r) =>
        projectView(
          r.project,
          envs.filter((e) => e.projectId === r.project.id),
        ),
      );
    },

    async update(
      actor: Actor,
      projectId: string,
      patch: { name?: string; description?: string | null; slug?: string; hasDeleteProtection?: boolean },
    ) {
      const { ability } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "edit", "settings");
      const updated = await db.transaction(async (tx) => {
        if (patch.slug) {
          const [dupe] = await tx
            .select({ id: projects.id })
            .from(projects)
            .where(and(eq(projects.orgId, actor.orgId), eq(projects.slug, patch.slug)));
          if (dupe && dupe.id !== projectId) {
            throw new AppError(
              "BAD_REQUEST",
              `A project with the slug "${patch.slug}" already exists in your organization. Please choose a different name or slug.`,
            );
          }
        }
        const [p] = await tx
          .update(projects)
          .set({
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.description !== undefined ? { description: patch.description } : {}),
            ...(patch.slug !== undefined ? { slug: patch.slug } : {}),
            ...(patch.hasDeleteProtection !== undefined
              ? { hasDeleteProtection: patch.hasDeleteProtection }
              : {}),
            updatedAt: new Date(),
          })
          .where(eq(projects.id, projectId))
          .returning();
        if (!p) throw new AppError("NOT_FOUND", `Project with ${projectId} not found`);
        await audit.record({ eventType: "update-project", actor, projectId, resource: { projectId } }, tx);
        return p;
      });
      permissions.invalidate({ projectId });
      return view(updated);
    },

    async remove(actor: Actor, projectId: string) {
      const { ability, project } = await permissions.getProjectPermission(actor, projectId);
      assertCan(ability, "delete", "settings");
      if (project.hasDeleteProtection)
        throw new AppError("FORBIDDEN", "Project delete protection is enabled");
      const v = await view(project);
      await db.transaction(async (tx) => {
        await tx.delete(projects).where(eq(projects.id, projectId));
        await tx.delete(encryptionKeys).where(eq(encryptionKeys.ownerId, projectId));
        await audit.record({ eventType: "delete-project", actor, projectId, resource: { projectId } }, tx);
      });
      permissions.invalidate({ projectId });
      keyring.forget(projectId);
      return v;
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
