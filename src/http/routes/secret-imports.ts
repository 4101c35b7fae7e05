import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { normalizePath } from "../../features/folders/paths.js";
import type { SecretImportsService } from "../../features/secret-imports/secret-imports-service.js";
import { actorOf } from "../plugins/auth.js";
import { projectIdFields, projectIdFrom } from "../project-id.js";
import { date } from "../schemas.js";

const envRef = z.object({ id: z.string(), name: z.string(), slug: z.string() });

/** Infisical's secret-import row with `importEnv` expanded to the source environment. */
export const secretImportSchema = z.object({
  id: z.string(),
  version: z.number().nullable(),
  importPath: z.string(),
  importEnv: envRef,
  position: z.number(),
  createdAt: date,
  updatedAt: date,
  folderId: z.string(),
  isReplication: z.boolean(),
});
const secretImportDetail = secretImportSchema.extend({
  projectId: z.string(),
  secretPath: z.string(),
  environment: envRef,
});
const one = { 200: z.object({ message: z.string(), secretImport: secretImportSchema }) };

const trimmed = z.string().trim().min(1);
const scope = z.object({
  ...projectIdFields,
  environment: trimmed,
  path: z.string().optional(),
});
type Scope = z.infer<typeof scope>;
const importSpec = z.object({ environment: trimmed, path: z.string() });
const idParam = z.object({ secretImportId: trimmed });

/**
 * Secret imports, v1 (`workspaceId`; Terraform) and v2 (`projectId`). Paths are normalised like every
 * secret path (leading slash added, trailing slashes removed, `..`/`//`/odd characters refused with 400).
 */
export const secretImportRoutes =
  (svc: { secretImports: SecretImportsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Secret imports"];
    for (const [base, key] of [
      ["/api/v1/secret-imports", "workspaceId"],
      ["/api/v2/secret-imports", "projectId"],
    ] as const) {
      const scopeOf = (b: Scope) => ({
        projectId: projectIdFrom(b, key),
        environment: b.environment,
        path: normalizePath(b.path),
      });

      app.post(
        base,
        {
          schema: {
            tags,
            body: scope.extend({ import: importSpec, isReplication: z.boolean().default(false) }),
            response: one,
          },
        },
        async (req) => ({
          message: "Successfully created secret import",
          secretImport: await svc.secretImports.create(actorOf(req), {
            ...scopeOf(req.body),
            import: { environment: req.body.import.environment, path: normalizePath(req.body.import.path) },
            isReplication: req.body.isReplication,
          }),
        }),
      );

      app.patch(
        `${base}/:secretImportId`,
        {
          schema: {
            tags,
            params: idParam,
            body: scope.extend({
              import: z.object({
                environment: trimmed.optional(),
                path: z.string().optional(),
                position: z.number().int().optional(),
              }),
            }),
            response: one,
          },
        },
        async (req) => {
          const { environment, path, position } = req.body.import;
          return {
            message: "Successfully updated secret import",
            secretImport: await svc.secretImports.update(actorOf(req), {
              ...scopeOf(req.body),
              id: req.params.secretImportId,
              import: { environment, path: path ? normalizePath(path) : undefined, position },
            }),
          };
        },
      );

      app.delete(
        `${base}/:secretImportId`,
        { schema: { tags, params: idParam, body: scope, response: one } },
        async (req) => ({
          message: "Successfully deleted secret import",
          secretImport: await svc.secretImports.remove(actorOf(req), {
            ...scopeOf(req.body),
            id: req.params.secretImportId,
          }),
        }),
      );

      app.get(
        base,
        {
          schema: {
            tags,
            querystring: scope,
            response: { 200: z.object({ message: z.string(), secretImports: z.array(secretImportSchema) }) },
          },
        },
        async (req) => ({
          message: "Successfully fetched secret imports",
          secretImports: await svc.secretImports.list(actorOf(req), scopeOf(req.query)),
        }),
      );

      app.get(
        `${base}/:secretImportId`,
        {
          schema: {
            tags,
            params: idParam,
            response: { 200: z.object({ secretImport: secretImportDetail }) },
          },
        },
        async (req) => ({
          secretImport: await svc.secretImports.getById(actorOf(req), req.params.secretImportId),
        }),
      );
    }
  };
