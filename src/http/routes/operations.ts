import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { createAuditQuery } from "../../features/audit/audit-query.js";
import { actorOf } from "../plugins/auth.js";
import { date } from "../schemas.js";

/** Status and audit-log reads. */
export const operationsRoutes =
  (svc: { auditQuery: ReturnType<typeof createAuditQuery>; dbKind: string }): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/api/status",
      {
        config: { auth: "none", rateClass: "none" },
        schema: {
          tags: ["Operations"],
          response: { 200: z.object({ date: z.string(), message: z.string(), database: z.string() }) },
        },
      },
      async () => ({ date: new Date().toISOString(), message: "Ok", database: svc.dbKind }),
    );

    app.get(
      "/api/v1/organization/audit-logs",
      {
        schema: {
          tags: ["Audit logs"],
          querystring: z.object({
            projectId: z.string().trim().optional(),
            actor: z.string().trim().optional(),
            eventType: z.string().trim().optional(),
            startDate: z.coerce.date().optional(),
            endDate: z.coerce.date().optional(),
            offset: z.coerce.number().int().min(0).default(0),
            limit: z.coerce.number().int().min(1).max(1000).default(100),
          }),
          response: {
            200: z.object({
              auditLogs: z.array(
                z.object({
                  id: z.string(),
                  actor: z.object({
                    type: z.string(),
                    metadata: z.object({ id: z.string().nullable(), name: z.string().nullable() }),
                  }),
                  event: z.object({ type: z.string(), metadata: z.record(z.unknown()) }),
                  projectId: z.string().nullable(),
                  orgId: z.string().nullable(),
                  ipAddress: z.string().nullable(),
                  userAgent: z.string().nullable(),
                  outcome: z.string(),
                  createdAt: date,
                }),
              ),
            }),
          },
        },
      },
      async (req) => ({ auditLogs: await svc.auditQuery(actorOf(req), req.query) }),
    );
  };
