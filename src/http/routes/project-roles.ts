import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ProjectRolesService } from "../../features/projects/project-roles-service.js";
import { actorOf } from "../plugins/auth.js";
import { roleSchema, ruleSchema, slugSchema } from "../schemas.js";

const projectParam = z.object({ projectId: z.string().trim().min(1) });

/** Custom project roles on Infisical's `/api/v1/projects/:projectId/roles` routes. */
export const projectRoleRoutes =
  (svc: { roles: ProjectRolesService }): FastifyPluginAsyncZod =>
  async (app) => {
    // ---- custom project roles ----
    const rTags = ["Project roles"];
    const roleResp = { 200: z.object({ role: roleSchema }) };
    const roleParams = projectParam.extend({ roleId: z.string().trim().min(1) });
    app.post(
      "/api/v1/projects/:projectId/roles",
      {
        schema: {
          tags: rTags,
          params: projectParam,
          body: z.object({
            slug: slugSchema("slug", 64),
            name: z.string().trim().min(1).max(64).optional(),
            description: z.string().trim().max(500).nullable().optional(),
            permissions: z.array(ruleSchema),
          }),
          response: roleResp,
        },
      },
      async (req) => ({
        role: await svc.roles.createRole(actorOf(req), req.params.projectId, req.body),
      }),
    );
    app.get(
      "/api/v1/projects/:projectId/roles",
      {
        schema: {
          tags: rTags,
          params: projectParam,
          response: { 200: z.object({ roles: z.array(roleSchema) }) },
        },
      },
      async (req) => ({ roles: await svc.roles.listRoles(actorOf(req), req.params.projectId) }),
    );
    app.get(
      "/api/v1/projects/:projectId/roles/slug/:roleSlug",
      {
        schema: {
          tags: rTags,
          params: projectParam.extend({ roleSlug: z.string().trim().min(1) }),
          response: roleResp,
        },
      },
      async (req) => ({
        role: await svc.roles.getRoleBySlug(actorOf(req), req.params.projectId, req.params.roleSlug),
      }),
    );
    app.patch(
      "/api/v1/projects/:projectId/roles/:roleId",
      {
        schema: {
          tags: rTags,
          params: roleParams,
          body: z.object({
            slug: slugSchema("slug", 64).optional(),
            name: z.string().trim().min(1).max(64).optional(),
            description: z.string().trim().max(500).nullable().optional(),
            permissions: z.array(ruleSchema).optional(),
          }),
          response: roleResp,
        },
      },
      async (req) => ({
        role: await svc.roles.updateRole(actorOf(req), req.params.projectId, req.params.roleId, req.body),
      }),
    );
    app.delete(
      "/api/v1/projects/:projectId/roles/:roleId",
      { schema: { tags: rTags, params: roleParams, response: roleResp } },
      async (req) => ({
        role: await svc.roles.deleteRole(actorOf(req), req.params.projectId, req.params.roleId),
      }),
    );
  };
