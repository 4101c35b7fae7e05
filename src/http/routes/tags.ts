import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { TagRow, TagsService } from "../../features/tags/tags-service.js";
import { actorOf } from "../plugins/auth.js";
import { date, slugSchema } from "../schemas.js";

/** Infisical's tag row (the newest schema has no `name` column). */
export const tagSchema = z.object({
  id: z.string(),
  slug: z.string(),
  color: z.string().nullable(),
  projectId: z.string(),
  createdBy: z.string().nullable(),
  createdByActorType: z.string(),
  createdAt: date,
  updatedAt: date,
});
/** Get-by-id and get-by-slug add `name` = slug, kept by Infisical for Terraform. */
const namedTag = tagSchema.extend({ name: z.string() });
const withName = (t: TagRow) => ({ ...t, name: t.slug });

const projectParam = z.object({ projectId: z.string().trim().min(1) });
const tagParams = projectParam.extend({ tagId: z.string().trim().min(1) });
const createBody = z.object({ slug: slugSchema("slug", 64), color: z.string().trim() });
const updateBody = z.object({ slug: slugSchema("slug", 64), color: z.string().trim() });

/**
 * Tags under `/api/v1/projects/:projectId/tags` (`tag`/`tags`) and the deprecated copy under
 * `/api/v1/workspace/:projectId/tags` (`workspaceTag`/`workspaceTags`, what Terraform calls). By-id
 * routes authorise against the tag's own project, not the one in the path.
 */
export const tagRoutes =
  (svc: { tags: TagsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Tags"];
    const variants = [
      { base: "/api/v1/projects/:projectId/tags", one: "tag", many: "tags" },
      { base: "/api/v1/workspace/:projectId/tags", one: "workspaceTag", many: "workspaceTags" },
    ] as const;
    for (const { base, one, many } of variants) {
      const single = (schema: typeof tagSchema | typeof namedTag) => ({
        200: z.object({ [one]: schema }) as z.ZodType<Record<string, unknown>>,
      });
      const wrap = (v: unknown) => ({ [one]: v });

      app.get(
        base,
        {
          schema: {
            tags,
            params: projectParam,
            response: { 200: z.object({ [many]: z.array(tagSchema) }) as z.ZodType<Record<string, unknown>> },
          },
        },
        async (req) => ({ [many]: await svc.tags.list(actorOf(req), req.params.projectId) }),
      );
      app.get(
        `${base}/:tagId`,
        { schema: { tags, params: tagParams, response: single(namedTag) } },
        async (req) => wrap(withName(await svc.tags.getById(actorOf(req), req.params.tagId))),
      );
      app.get(
        `${base}/slug/:tagSlug`,
        {
          schema: {
            tags,
            params: projectParam.extend({ tagSlug: z.string().trim().min(1) }),
            response: single(namedTag),
          },
        },
        async (req) =>
          wrap(withName(await svc.tags.getBySlug(actorOf(req), req.params.projectId, req.params.tagSlug))),
      );
      app.post(
        base,
        { schema: { tags, params: projectParam, body: createBody, response: single(tagSchema) } },
        async (req) => wrap(await svc.tags.create(actorOf(req), req.params.projectId, req.body)),
      );
      app.patch(
        `${base}/:tagId`,
        { schema: { tags, params: tagParams, body: updateBody, response: single(tagSchema) } },
        async (req) => wrap(await svc.tags.update(actorOf(req), req.params.tagId, req.body)),
      );
      // Terraform sends `{projectId, tagId}` as a JSON body with this DELETE; it is ignored.
      app.delete(
        `${base}/:tagId`,
        { schema: { tags, params: tagParams, response: single(tagSchema) } },
        async (req) => wrap(await svc.tags.remove(actorOf(req), req.params.tagId)),
      );
    }
  };
