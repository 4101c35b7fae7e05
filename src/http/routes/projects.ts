import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { MembershipsService } from "../../features/projects/memberships-service.js";
import type { ProjectsService } from "../../features/projects/projects-service.js";
import { actorOf } from "../plugins/auth.js";
import { identityMembershipSchema, projectSchema, slugSchema, userMembershipSchema } from "../schemas.js";

const createBody = z.object({
  projectName: z.string().trim().min(1).max(64),
  projectDescription: z.string().trim().max(256).optional(),
  slug: slugSchema("slug", 36).optional(),
  type: z
    .enum(["secret-manager", "cert-manager", "kms", "ssh", "secret-scanning", "pam"])
    .default("secret-manager"),
  template: z.string().optional(),
  kmsKeyId: z.string().optional(),
  shouldCreateDefaultEnvs: z.boolean().default(true),
});
const updateBody = z.object({
  name: z.string().trim().min(1).max(64).optional(),
  description: z.string().trim().max(256).nullable().optional(),
  slug: slugSchema("slug", 36).optional(),
  hasDeleteProtection: z.boolean().optional(),
});
const projectParam = z.object({ projectId: z.string().trim().min(1) });
const workspaceParam = z.object({ workspaceId: z.string().trim().min(1) });
const rolesBody = z
  .object({
    role: z.string().trim().min(1).optional(),
    roles: z
      .array(z.object({ role: z.string().trim().min(1), isTemporary: z.boolean().optional() }).passthrough())
      .min(1)
      .optional(),
  })
  .refine((b) => b.role || b.roles, { message: "Either role or roles must be provided" });
const rolesOf = (b: z.infer<typeof rolesBody>) => (b.roles ? b.roles.map((r) => r.role) : [b.role as string]);

/** Projects (v1 `projects`, deprecated v1/v2 `workspace`), identity memberships, custom roles. */
export const projectRoutes =
  (svc: { projects: ProjectsService; memberships: MembershipsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Projects"];
    const one = { 200: z.object({ project: projectSchema }) };
    for (const url of ["/api/v1/projects", "/api/v2/workspace"]) {
      app.post(url, { schema: { tags, body: createBody, response: one } }, async (req) => ({
        project: await svc.projects.create(actorOf(req), req.body),
      }));
    }
    app.get(
      "/api/v1/projects",
      { schema: { tags, response: { 200: z.object({ projects: z.array(projectSchema) }) } } },
      async (req) => ({
        projects: await svc.projects.list(actorOf(req)),
      }),
    );
    app.get(
      "/api/v1/workspace",
      { schema: { tags, response: { 200: z.object({ workspaces: z.array(projectSchema) }) } } },
      async (req) => ({
        workspaces: await svc.projects.list(actorOf(req)),
      }),
    );
    app.get(
      "/api/v1/projects/:projectId",
      { schema: { tags, params: projectParam, response: one } },
      async (req) => ({
        project: await svc.projects.get(actorOf(req), req.params.projectId),
      }),
    );
    app.get(
      "/api/v1/workspace/:workspaceId",
      { schema: { tags, params: workspaceParam, response: { 200: z.object({ workspace: projectSchema }) } } },
      async (req) => ({ workspace: await svc.projects.get(actorOf(req), req.params.workspaceId) }),
    );
    app.get(
      "/api/v1/projects/slug/:slug",
      {
        schema: {
          tags,
          params: z.object({ slug: z.string().trim().min(1) }),
          response: { 200: projectSchema },
        },
      },
      (req) => svc.projects.getBySlug(actorOf(req), req.params.slug),
    );
    app.get(
      "/api/v2/workspace/:slug",
      {
        schema: {
          tags,
          params: z.object({ slug: z.string().trim().min(1) }),
          response: { 200: projectSchema },
        },
      },
      (req) => svc.projects.getBySlug(actorOf(req), req.params.slug),
    );
    app.patch(
      "/api/v1/projects/:projectId",
      { schema: { tags, params: projectParam, body: updateBody, response: one } },
      async (req) => ({
        project: await svc.projects.update(actorOf(req), req.params.projectId, req.body),
      }),
    );
    app.patch(
      "/api/v1/workspace/:workspaceId",
      {
        schema: {
          tags,
          params: workspaceParam,
          body: updateBody,
          response: { 200: z.object({ workspace: projectSchema }) },
        },
      },
      async (req) => ({
        workspace: await svc.projects.update(actorOf(req), req.params.workspaceId, req.body),
      }),
    );
    app.delete(
      "/api/v1/projects/:projectId",
      { schema: { tags, params: projectParam, response: one } },
      async (req) => ({
        project: await svc.projects.remove(actorOf(req), req.params.projectId),
      }),
    );
    app.delete(
      "/api/v1/workspace/:workspaceId",
      { schema: { tags, params: workspaceParam, response: { 200: z.object({ workspace: projectSchema }) } } },
      async (req) => ({ workspace: await svc.projects.remove(actorOf(req), req.params.workspaceId) }),
    );

    // ---- identity memberships: Infisical's v2 workspace routes and the newer v1 projects routes ----
    const mTags = ["Project memberships"];
    const memberParams = projectParam.extend({ identityId: z.string().trim().min(1) });
    for (const base of ["/api/v2/workspace/:projectId", "/api/v1/projects/:projectId"]) {
      app.post(
        `${base}/identity-memberships/:identityId`,
        {
          schema: {
            tags: mTags,
            params: memberParams,
            body: rolesBody,
            response: { 200: z.object({ identityMembership: identityMembershipSchema }) },
          },
        },
        async (req) => ({
          identityMembership: await svc.memberships.addIdentity(
            actorOf(req),
            req.params.projectId,
            req.params.identityId,
            rolesOf(req.body),
          ),
        }),
      );
      app.get(
        `${base}/identity-memberships`,
        {
          schema: {
            tags: mTags,
            params: projectParam,
            response: { 200: z.object({ identityMemberships: z.array(identityMembershipSchema) }) },
          },
        },
        async (req) => ({
          identityMemberships: await svc.memberships.listIdentities(actorOf(req), req.params.projectId),
        }),
      );
      app.get(
        `${base}/identity-memberships/:identityId`,
        {
          schema: {
            tags: mTags,
            params: memberParams,
            response: { 200: z.object({ identityMembership: identityMembershipSchema }) },
          },
        },
        async (req) => ({
          identityMembership: await svc.memberships.getIdentity(
            actorOf(req),
            req.params.projectId,
            req.params.identityId,
          ),
        }),
      );
      app.patch(
        `${base}/identity-memberships/:identityId`,
        {
          schema: {
            tags: mTags,
            params: memberParams,
            body: rolesBody,
            response: { 200: z.object({ roles: identityMembershipSchema.shape.roles }) },
          },
        },
        async (req) => ({
          roles: (
            await svc.memberships.updateIdentity(
              actorOf(req),
              req.params.projectId,
              req.params.identityId,
              rolesOf(req.body),
            )
          ).roles,
        }),
      );
      app.delete(
        `${base}/identity-memberships/:identityId`,
        {
          schema: {
            tags: mTags,
            params: memberParams,
            response: { 200: z.object({ identityMembership: identityMembershipSchema }) },
          },
        },
        async (req) => ({
          identityMembership: await svc.memberships.removeIdentity(
            actorOf(req),
            req.params.projectId,
            req.params.identityId,
          ),
        }),
      );
      app.post(
        `${base}/memberships`,
        {
          schema: {
            tags: mTags,
            params: projectParam,
            body: z.object({
              emails: z.array(z.string().trim()).optional(),
              usernames: z.array(z.string().trim()).optional(),
              roleSlugs: z.array(z.string().trim()).optional(),
            }),
            response: { 200: z.object({ memberships: z.array(userMembershipSchema) }) },
          },
        },
        async (req) => ({
          memberships: await svc.memberships.addUsers(actorOf(req), req.params.projectId, req.body),
        }),
      );
    }
  };
