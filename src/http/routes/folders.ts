import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { FoldersService } from "../../features/folders/folders-service.js";
import { FOLDER_NAME, FOLDER_NAME_MESSAGE, normalizePath } from "../../features/folders/paths.js";
import { actorOf } from "../plugins/auth.js";
import { type ProjectKey, projectIdFields, projectIdFrom } from "../project-id.js";
import { boolish, date } from "../schemas.js";

/** Infisical's folder row (no `path`: routes that return one extend this). */
export const folderSchema = z.object({
  id: z.string(),
  name: z.string(),
  version: z.number().nullable(),
  createdAt: date,
  updatedAt: date,
  envId: z.string(),
  parentId: z.string().nullable(),
  isReserved: z.boolean(),
  description: z.string().nullable(),
  lastSecretModified: date.nullable(),
});
const folderWithPath = folderSchema.extend({ path: z.string() });
const folderDetail = folderWithPath.extend({
  projectId: z.string(),
  environment: z.object({ envId: z.string(), envName: z.string(), envSlug: z.string() }),
});

const path = z.string().optional();
const name = z
  .string()
  .trim()
  .refine((n) => FOLDER_NAME.test(n), { message: FOLDER_NAME_MESSAGE });
const description = z.string().nullable().optional();
const id = z.string().trim().min(1);
const scope = z.object({
  ...projectIdFields,
  environment: z.string().trim().min(1),
  path,
  directory: path,
});
/** `path`, or the CLI's legacy `directory`, normalised (400 for `..`, `//`, odd characters). */
const pathOf = (b: { path?: string; directory?: string }) => normalizePath(b.path || b.directory || "/");

/**
 * Folders: v1 (`workspaceId`, what the Node SDK, Go SDK, CLI and Terraform call) and v2 (`projectId`).
 * Both versions accept `path` or the CLI's `directory` and ignore unknown fields.
 */
export const folderRoutes =
  (svc: { folders: FoldersService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Folders"];
    const register = (base: string, pid: ProjectKey) => {
      const projectOf = (b: { workspaceId?: string; projectId?: string }) => projectIdFrom(b, pid);

      app.post(
        base,
        {
          schema: {
            tags,
            body: scope.extend({ name, description }),
            response: { 200: z.object({ folder: folderWithPath }) },
          },
        },
        async (req) => ({
          folder: await svc.folders.create(actorOf(req), {
            projectId: projectOf(req.body),
            environment: req.body.environment,
            path: pathOf(req.body),
            name: req.body.name,
            description: req.body.description,
          }),
        }),
      );

      app.get(
        base,
        {
          schema: {
            tags,
            querystring: scope.extend({
              recursive: boolish.default(false),
              lastSecretModified: z.string().datetime().optional(),
            }),
            response: {
              200: z.object({
                folders: z.array(folderSchema.extend({ relativePath: z.string().optional() })),
              }),
            },
          },
        },
        async (req) => ({
          folders: await svc.folders.list(actorOf(req), {
            projectId: projectOf(req.query),
            environment: req.query.environment,
            path: pathOf(req.query),
            recursive: req.query.recursive,
            lastSecretModified: req.query.lastSecretModified,
          }),
        }),
      );

      app.get(
        `${base}/:id`,
        { schema: { tags, params: z.object({ id }), response: { 200: z.object({ folder: folderDetail }) } } },
        async (req) => ({ folder: await svc.folders.getById(actorOf(req), req.params.id) }),
      );

      app.patch(
        `${base}/:folderId`,
        {
          schema: {
            tags,
            params: z.object({ folderId: id }),
            body: scope.extend({ name, description }),
            response: { 200: z.object({ folder: folderWithPath }) },
          },
        },
        async (req) => ({
          folder: await svc.folders.update(actorOf(req), {
            projectId: projectOf(req.body),
            environment: req.body.environment,
            path: pathOf(req.body),
            idOrName: req.params.folderId,
            name: req.body.name,
            description: req.body.description,
          }),
        }),
      );

      app.delete(
        `${base}/:folderIdOrName`,
        {
          schema: {
            tags,
            params: z.object({ folderIdOrName: id }),
            body: scope,
            response: { 200: z.object({ folder: folderSchema }) },
          },
        },
        async (req) => ({
          folder: await svc.folders.remove(actorOf(req), {
            projectId: projectOf(req.body),
            environment: req.body.environment,
            path: pathOf(req.body),
            idOrName: req.params.folderIdOrName,
          }),
        }),
      );
    };
    register("/api/v1/folders", "workspaceId");
    register("/api/v2/folders", "projectId");

    // Terraform's data source: GET /api/v1/folders/{projectId}/{environment}/{url-escaped path}.
    app.get(
      "/api/v1/folders/:projectId/:environment/:path",
      {
        schema: {
          tags,
          params: z.object({ projectId: id, environment: id, path: id }),
          response: { 200: z.object({ folder: folderDetail }) },
        },
      },
      async (req) => ({
        folder: await svc.folders.getByPath(actorOf(req), {
          projectId: req.params.projectId,
          environment: req.params.environment,
          path: normalizePath(req.params.path),
        }),
      }),
    );
  };
