import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type {
  EnvironmentRow,
  EnvironmentsService,
} from "../../features/environments/environments-service.js";
import { actorOf } from "../plugins/auth.js";
import { date, slugSchema } from "../schemas.js";

/** Infisical's project environment row. */
export const environmentSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  position: z.number(),
  projectId: z.string(),
  createdAt: date,
  updatedAt: date,
});

const createBody = z.object({
  name: z.string().trim().min(1).max(64),
  slug: slugSchema("slug", 64),
  position: z.number().int().min(1).optional(),
});
const updateBody = z.object({
  name: z.string().trim().min(1).max(64).optional(),
  slug: slugSchema("slug", 64).optional(),
  position: z.number().int().min(1).optional(),
});
const id = z.string().trim().min(1);

/**
 * Environments under `/api/v1/projects/:projectId/…` and Infisical's deprecated copies under
 * `/api/v1/workspace/:workspaceId/…` (what the Node SDK and Terraform call), which answer with the
 * project id under `workspace` instead of `projectId`.
 */
export const environmentRoutes =
  (svc: { environments: EnvironmentsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Environments"];
    // One envelope for both variants; each fills only its own project-id key.
    const envelope = z.object({
      message: z.string(),
      projectId: z.string().optional(),
      workspace: z.string().optional(),
      environment: environmentSchema,
    });
    const params = z.object({ projectId: id });
    const register = (base: string, key: "projectId" | "workspace") => {
      const reply = (message: string, projectId: string, environment: EnvironmentRow) => ({
        message,
        [key]: projectId,
        environment,
      });

      app.post(
        `${base}/environments`,
        { schema: { tags, params, body: createBody, response: { 200: envelope } } },
        async (req) =>
          reply(
            "Successfully created new environment",
            req.params.projectId,
            await svc.environments.create(actorOf(req), req.params.projectId, req.body),
          ),
      );
      app.patch(
        `${base}/environments/:envId`,
        {
          schema: {
            tags,
            params: params.extend({ envId: id }),
            body: updateBody,
            response: { 200: envelope },
          },
        },
        async (req) =>
          reply(
            "Successfully updated environment",
            req.params.projectId,
            await svc.environments.update(actorOf(req), req.params.projectId, req.params.envId, req.body),
          ),
      );
      // Terraform sends a JSON body with this DELETE; it is ignored.
      app.delete(
        `${base}/environments/:envId`,
        { schema: { tags, params: params.extend({ envId: id }), response: { 200: envelope } } },
        async (req) =>
          reply(
            "Successfully deleted environment",
            req.params.projectId,
            await svc.environments.remove(actorOf(req), req.params.projectId, req.params.envId),
          ),
      );
      app.get(
        `${base}/environments/:envId`,
        {
          schema: {
            tags,
            params: params.extend({ envId: id }),
            response: { 200: z.object({ environment: environmentSchema }) },
          },
        },
        async (req) => ({ environment: await svc.environments.getById(actorOf(req), req.params.envId) }),
      );
      app.get(
        `${base}/environments/slug/:envSlug`,
        {
          schema: {
            tags,
            params: params.extend({ envSlug: id }),
            response: { 200: z.object({ environment: environmentSchema }) },
          },
        },
        async (req) => ({
          environment: await svc.environments.getBySlug(
            actorOf(req),
            req.params.projectId,
            req.params.envSlug,
          ),
        }),
      );
    };
    register("/api/v1/projects/:projectId", "projectId");
    register("/api/v1/workspace/:projectId", "workspace");
    app.get(
      "/api/v1/workspace/environments/:envId",
      {
        schema: {
          tags,
          params: z.object({ envId: id }),
          response: { 200: z.object({ environment: environmentSchema }) },
        },
      },
      async (req) => ({ environment: await svc.environments.getById(actorOf(req), req.params.envId) }),
    );
  };
