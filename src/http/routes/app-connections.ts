import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { connectionApps } from "../../destinations/registry.js";
import type { AnyConnectionApp } from "../../destinations/types.js";
import type { ConnectionsService } from "../../features/app-connections/connections-service.js";
import { actorOf } from "../plugins/auth.js";
import { date, slugSchema } from "../schemas.js";

/** Infisical's connection object minus `encryptedCredentials`; `credentials` holds public fields only. */
export const appConnectionSchema = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  app: z.string(),
  method: z.string(),
  version: z.number(),
  orgId: z.string(),
  projectId: z.string().nullable(),
  isPlatformManagedCredentials: z.boolean(),
  gatewayId: z.string().nullable(),
  createdAt: date,
  updatedAt: date,
  credentials: z.record(z.unknown()),
});

const one = { 200: z.object({ appConnection: appConnectionSchema }) };
const many = { 200: z.object({ appConnections: z.array(appConnectionSchema) }) };
const idParam = z.object({ connectionId: z.string().uuid() });
const description = z.string().trim().max(256).nullable().optional();

/** `{name, description?, method, credentials}` with `credentials` checked against that method's schema. */
function createBody(app: AnyConnectionApp) {
  const variants = Object.entries(app.methods).map(([method, schema]) =>
    z.object({
      name: slugSchema("name", 64),
      description,
      method: z.literal(method),
      credentials: schema,
    }),
  );
  return z.discriminatedUnion(
    "method",
    variants as unknown as [(typeof variants)[number], ...(typeof variants)[number][]],
  );
}

function updateBody(app: AnyConnectionApp) {
  const methods = Object.keys(app.methods) as [string, ...string[]];
  return z
    .object({
      name: slugSchema("name", 64).optional(),
      description,
      method: z.enum(methods).optional(),
      credentials: z.record(z.unknown()).optional(),
    })
    .superRefine((b, ctx) => {
      if (!b.credentials) return;
      if (!b.method) {
        ctx.addIssue({
          code: "custom",
          path: ["method"],
          message: "Method required when updating credentials",
        });
        return;
      }
      const parsed = app.methods[b.method]?.safeParse(b.credentials);
      for (const issue of parsed?.error?.issues ?? [])
        ctx.addIssue({ ...issue, path: ["credentials", ...issue.path] });
    })
    .transform((b) => ({
      ...b,
      credentials:
        b.credentials && b.method
          ? (app.methods[b.method]?.parse(b.credentials) as Record<string, unknown>)
          : undefined,
    }));
}

export const appConnectionRoutes =
  (svc: { connections: ConnectionsService }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["App Connections"];
    const base = "/api/v1/app-connections";
    app.get(
      `${base}/options`,
      {
        schema: {
          tags,
          response: {
            200: z.object({
              appConnectionOptions: z.array(
                z.object({ name: z.string(), app: z.string(), methods: z.array(z.string()) }),
              ),
            }),
          },
        },
      },
      async () => ({ appConnectionOptions: svc.connections.options() }),
    );
    app.get(base, { schema: { tags, response: many } }, async (req) => ({
      appConnections: await svc.connections.list(actorOf(req)),
    }));

    for (const a of connectionApps) {
      const p = `${base}/${a.app}`;
      app.get(p, { schema: { tags, response: many } }, async (req) => ({
        appConnections: await svc.connections.list(actorOf(req), a.app),
      }));
      app.get(
        `${p}/available`,
        {
          schema: {
            tags,
            response: {
              200: z.object({
                appConnections: z.array(
                  z.object({
                    app: z.string(),
                    name: z.string(),
                    id: z.string(),
                    projectId: z.string().nullable(),
                    orgId: z.string(),
                  }),
                ),
              }),
            },
          },
        },
        async (req) => ({ appConnections: await svc.connections.list(actorOf(req), a.app) }),
      );
      app.get(`${p}/:connectionId`, { schema: { tags, params: idParam, response: one } }, async (req) => ({
        appConnection: await svc.connections.get(actorOf(req), a.app, req.params.connectionId),
      }));
      app.get(
        `${p}/connection-name/:connectionName`,
        { schema: { tags, params: z.object({ connectionName: z.string().trim().min(1) }), response: one } },
        async (req) => ({
          appConnection: await svc.connections.getByName(actorOf(req), a.app, req.params.connectionName),
        }),
      );
      app.post(p, { schema: { tags, body: createBody(a), response: one } }, async (req) => ({
        appConnection: await svc.connections.create(actorOf(req), a.app, req.body as never),
      }));
      app.patch(
        `${p}/:connectionId`,
        { schema: { tags, params: idParam, body: updateBody(a), response: one } },
        async (req) => ({
          appConnection: await svc.connections.update(
            actorOf(req),
            a.app,
            req.params.connectionId,
            req.body as never,
          ),
        }),
      );
      app.delete(`${p}/:connectionId`, { schema: { tags, params: idParam, response: one } }, async (req) => ({
        appConnection: await svc.connections.remove(actorOf(req), a.app, req.params.connectionId),
      }));
    }
  };
