import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { destinations } from "../../destinations/registry.js";
import type { DestinationAdapter } from "../../destinations/types.js";
import {
  anySyncView,
  createBody,
  IMPORT_BEHAVIORS,
  previewView,
  syncOptionEntry,
  syncOptionsList,
  syncView,
  updateBody,
} from "../../features/syncs/syncs-schemas.js";
import type { SyncsService } from "../../features/syncs/syncs-service.js";
import { actorOf } from "../plugins/auth.js";

/** Rows carry the destination as a plain string; the response schema narrows it to the literal. */
const wire = (v: unknown) => v as never;
const projectQuery = z.object({ projectId: z.string().trim().min(1, "Project ID required") });
const idParam = z.object({ syncId: z.string().uuid() });

/**
 * Infisical's per-destination sync routes, registered by ONE loop over the registry (STYLE §2.3): the
 * body and response schemas of each come from that destination's definition.
 */
const destinationSyncRoutes =
  (d: DestinationAdapter, svc: SyncsService): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Secret Syncs"];
    const one = { 200: z.object({ secretSync: syncView(d) }) };
    const many = { 200: z.object({ secretSyncs: z.array(syncView(d)) }) };

    app.get("/", { schema: { tags, querystring: projectQuery, response: many } }, async (req) => ({
      secretSyncs: wire(await svc.listByProject(actorOf(req), req.query.projectId, d.slug)),
    }));
    app.get("/:syncId", { schema: { tags, params: idParam, response: one } }, async (req) => ({
      secretSync: wire(await svc.get(actorOf(req), d, req.params.syncId)),
    }));
    app.get(
      "/sync-name/:syncName",
      {
        schema: {
          tags,
          params: z.object({ syncName: z.string().trim().min(1, "Sync name required") }),
          querystring: projectQuery,
          response: one,
        },
      },
      async (req) => ({
        secretSync: wire(await svc.getByName(actorOf(req), d, req.params.syncName, req.query.projectId)),
      }),
    );
    app.post("/", { schema: { tags, body: createBody(d), response: one } }, async (req) => ({
      secretSync: wire(await svc.create(actorOf(req), d, req.body as never)),
    }));
    app.patch(
      "/:syncId",
      { schema: { tags, params: idParam, body: updateBody(d), response: one } },
      async (req) => ({
        secretSync: wire(await svc.update(actorOf(req), d, req.params.syncId, req.body as never)),
      }),
    );
    app.delete(
      "/:syncId",
      {
        schema: {
          tags,
          params: idParam,
          querystring: z.object({
            removeSecrets: z
              .enum(["true", "false"])
              .default("false")
              .transform((v) => v === "true"),
          }),
          response: one,
        },
      },
      async (req) => ({
        secretSync: wire(await svc.remove(actorOf(req), d, req.params.syncId, req.query.removeSecrets)),
      }),
    );
    app.post("/:syncId/sync-secrets", { schema: { tags, params: idParam, response: one } }, async (req) => ({
      secretSync: wire(await svc.trigger(actorOf(req), d, req.params.syncId, "sync")),
    }));
    app.post(
      "/:syncId/import-secrets",
      {
        schema: {
          tags,
          params: idParam,
          querystring: z.object({ importBehavior: z.enum(IMPORT_BEHAVIORS) }),
          response: one,
        },
      },
      async (req) => ({
        secretSync: wire(
          await svc.trigger(actorOf(req), d, req.params.syncId, "import", req.query.importBehavior),
        ),
      }),
    );
    app.post(
      "/:syncId/remove-secrets",
      { schema: { tags, params: idParam, response: one } },
      async (req) => ({
        secretSync: wire(await svc.trigger(actorOf(req), d, req.params.syncId, "remove")),
      }),
    );
    app.post(
      "/:syncId/preview",
      { schema: { tags, params: idParam, response: { 200: previewView } } },
      async (req) => ({
        preview: await svc.preview(actorOf(req), d, req.params.syncId),
      }),
    );
    app.post(
      "/check-destination",
      {
        schema: {
          tags,
          body: z.object({
            destinationConfig: z.unknown(),
            connectionId: z.string().uuid().optional(),
            excludeSyncId: z.string().uuid().optional(),
            projectId: z.string().uuid(),
          }),
          response: {
            200: z.object({ hasDuplicate: z.boolean(), duplicateProjectId: z.string().uuid().optional() }),
          },
        },
      },
      async (req) =>
        svc.checkDestination(actorOf(req), d, { ...req.body, destinationConfig: req.body.destinationConfig }),
    );
  };

export const secretSyncRoutes =
  (svc: { syncs: SyncsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Secret Syncs"];
    app.get(
      "/api/v1/secret-syncs/options",
      { schema: { tags, response: { 200: z.object({ secretSyncOptions: z.array(syncOptionEntry) }) } } },
      async () => ({ secretSyncOptions: syncOptionsList() }),
    );
    app.get(
      "/api/v1/secret-syncs",
      {
        schema: {
          tags,
          querystring: projectQuery,
          response: { 200: z.object({ secretSyncs: z.array(anySyncView) }) },
        },
      },
      async (req) => ({
        secretSyncs: wire(await svc.syncs.listByProject(actorOf(req), req.query.projectId)),
      }),
    );
    for (const d of destinations) {
      await app.register(destinationSyncRoutes(d as DestinationAdapter, svc.syncs), {
        prefix: `/api/v1/secret-syncs/${d.slug}`,
      });
    }
  };
