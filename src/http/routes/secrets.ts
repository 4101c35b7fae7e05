import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  type ApiVersion,
  batchCreateBody,
  batchDeleteBody,
  batchUpdateBody,
  createBody,
  deleteBody,
  getQuery,
  idParam,
  listQuery,
  nameParam,
  projectRef,
  secretNameSchema,
  tagSlugsOf,
  updateBody,
} from "../../features/secrets/secrets-schemas.js";
import type { SecretsService } from "../../features/secrets/secrets-service.js";
import {
  secretRawSchema,
  secretReadSchema,
  secretWithHiddenSchema,
} from "../../features/secrets/secrets-view.js";
import { AppError } from "../../lib/errors.js";
import { actorOf } from "../plugins/auth.js";
import { etagOnSend, fastSerializerCompiler } from "../plugins/fast-serializer.js";

/**
 * Secrets: Infisical's v3 raw routes (`workspaceId`; what the Node SDK, Go SDK, CLI writes and Terraform
 * call) and v4 routes (`projectId`; CLI reads, web app), generated from one definition per version.
 * Lists and single reads carry an ETag (hash of the serialized body) and answer `If-None-Match` with 304.
 * The benchmarked routes (list, get by name, single delete) serialize with fast-json-stringify.
 */
const hot = { serializerCompiler: fastSerializerCompiler };
const cached = { ...hot, onSend: etagOnSend };
const importSchema = z.object({
  secretPath: z.string(),
  environment: z.string(),
  folderId: z.string().optional(),
  secrets: z.array(secretReadSchema),
});
const listResponse = {
  200: z.object({ secrets: z.array(secretReadSchema), imports: z.array(importSchema).optional() }),
};
const readOne = { 200: z.object({ secret: secretReadSchema }) };
const created = { 200: z.object({ secret: secretRawSchema }) };
const changed = { 200: z.object({ secret: secretWithHiddenSchema }) };
const batchCreated = { 200: z.object({ secrets: z.array(secretRawSchema) }) };
const batchChanged = { 200: z.object({ secrets: z.array(secretWithHiddenSchema) }) };

function requireEnv(environment: string | undefined, v: ApiVersion, what: "list" | "get"): string {
  if (environment) return environment;
  throw new AppError(
    "BAD_REQUEST",
    v === "v4" && what === "list" ? "Missing project id or environment" : "Missing environment",
  );
}

const routesFor =
  (svc: SecretsService, v: ApiVersion): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = [v === "v3" ? "Secrets (v3 raw)" : "Secrets (v4)"];
    const base = v === "v3" ? "/api/v3/secrets/raw" : "/api/v4/secrets";
    const batch = v === "v3" ? "/api/v3/secrets/batch/raw" : "/api/v4/secrets/batch";
    const project = async (req: FastifyRequest, ref: Parameters<typeof projectRef>[0]) => {
      const r = projectRef(ref);
      if (v === "v4" && !r.id) throw new AppError("BAD_REQUEST", "Missing project id or environment");
      return svc.projectIdOf(actorOf(req), r);
    };

    app.get(
      base,
      { ...cached, schema: { tags, querystring: listQuery(v), response: listResponse } },
      async (req) => {
        const q = req.query;
        const projectId = await project(req, q);
        const out = await svc.list(actorOf(req), {
          projectId,
          environment: requireEnv(q.environment, v, "list"),
          secretPath: q.secretPath,
          recursive: q.recursive,
          includeImports: q.include_imports ?? q.includeImports ?? false,
          tagSlugs: tagSlugsOf(q.tagSlugs),
          expandSecretReferences: q.expandSecretReferences,
          viewSecretValue: q.viewSecretValue,
        });
        return out;
      },
    );

    app.get(
      `${base}/id/:secretId`,
      { ...cached, schema: { tags, params: idParam, response: readOne } },
      async (req) => ({ secret: await svc.getById(actorOf(req), req.params.secretId) }),
    );

    app.get(
      `${base}/:secretName`,
      { ...cached, schema: { tags, params: nameParam, querystring: getQuery(v), response: readOne } },
      async (req) => {
        const q = req.query;
        const secret = await svc.getByName(actorOf(req), {
          projectId: await project(req, q),
          environment: requireEnv(q.environment, v, "get"),
          secretPath: q.secretPath,
          secretName: req.params.secretName,
          type: q.type,
          version: q.version,
          expandSecretReferences: q.expandSecretReferences,
          viewSecretValue: q.viewSecretValue,
          includeImports: q.includeImports ?? q.include_imports ?? false,
        });
        return { secret };
      },
    );

    app.post(
      `${base}/:secretName`,
      {
        schema: {
          tags,
          params: z.object({ secretName: secretNameSchema }),
          body: createBody(v),
          response: created,
        },
      },
      async (req) => {
        const b = req.body;
        const scope = {
          projectId: await project(req, b),
          environment: b.environment,
          secretPath: b.secretPath,
        };
        return { secret: await svc.create(actorOf(req), scope, { ...b, secretKey: req.params.secretName }) };
      },
    );

    app.patch(
      `${base}/:secretName`,
      { schema: { tags, params: nameParam, body: updateBody(v), response: changed } },
      async (req) => {
        const b = req.body;
        const scope = {
          projectId: await project(req, b),
          environment: b.environment,
          secretPath: b.secretPath,
        };
        return { secret: await svc.update(actorOf(req), scope, { ...b, secretKey: req.params.secretName }) };
      },
    );

    app.delete(
      `${base}/:secretName`,
      {
        ...hot,
        schema: {
          tags,
          params: z.object({ secretName: z.string().min(1) }),
          body: deleteBody(v),
          response: changed,
        },
      },
      async (req) => {
        const b = req.body;
        return {
          secret: await svc.remove(actorOf(req), {
            projectId: await project(req, b),
            environment: b.environment,
            secretPath: b.secretPath,
            secretName: req.params.secretName,
            type: b.type,
          }),
        };
      },
    );

    /** The folder a batch request addresses: the same three fields on create, update and delete. */
    const batchScope = async (
      req: FastifyRequest,
      b: Parameters<typeof projectRef>[0] & { environment: string; secretPath: string },
    ) => ({
      projectId: await project(req, b),
      environment: b.environment,
      secretPath: b.secretPath,
    });

    app.post(batch, { schema: { tags, body: batchCreateBody(v), response: batchCreated } }, async (req) => {
      const b = req.body;
      const scope = await batchScope(req, b);
      return { secrets: await svc.createMany(actorOf(req), scope, b.secrets) };
    });
    app.patch(batch, { schema: { tags, body: batchUpdateBody(v), response: batchChanged } }, async (req) => {
      const b = req.body;
      const scope = await batchScope(req, b);
      return { secrets: await svc.updateMany(actorOf(req), scope, b.secrets) };
    });
    app.delete(batch, { schema: { tags, body: batchDeleteBody(v), response: batchChanged } }, async (req) => {
      const b = req.body;
      const scope = await batchScope(req, b);
      return { secrets: await svc.deleteMany(actorOf(req), scope, b.secrets) };
    });
  };

export const secretRoutes =
  (svc: { secrets: SecretsService }): FastifyPluginAsyncZod =>
  async (app) => {
    await app.register(routesFor(svc.secrets, "v3"));
    await app.register(routesFor(svc.secrets, "v4"));
  };
