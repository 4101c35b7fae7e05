import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { PROJECT_EVENT_TYPES } from "../../features/events/event-bus.js";
import type { EventsService } from "../../features/events/events-service.js";
import { startSseResponse } from "../../features/events/sse-response.js";
import { AppError } from "../../lib/errors.js";
import { actorOf } from "../plugins/auth.js";

/** Upstream's `ProjectEventRegisterSchema` (events-auth.md §1.1): unknown keys are dropped, not rejected. */
const subscribeBody = z.object({
  projectId: z.string().trim().min(1),
  register: z
    .array(
      z.object({
        event: z.enum(PROJECT_EVENT_TYPES),
        conditions: z
          .object({
            environmentSlug: z.string().trim(),
            secretPath: z.string().trim().default("/"),
          })
          .optional(),
      }),
    )
    .min(1)
    .max(10),
});

/** The bearer token as the auth plugin accepted it (needed to re-validate it while the stream is open). */
function bearerToken(header: string | undefined): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!m?.[1]) throw new AppError("UNAUTHORIZED", "Token missing");
  return m[1];
}

/**
 * A stream lives for hours; what it keeps from its request is multiplied by every open stream. Once the
 * reply is hijacked nothing reads the request again, so drop what would otherwise stay reachable from
 * the socket for the stream's lifetime:
 * - Fastify's response-finished listener, whose closure holds the Fastify request, reply and child
 *   logger (it would only run onResponse hooks and the access log, and Ferry registers no onResponse
 *   hook; `reply.hijack()` already released the socket's own reference);
 * - the request's parsed and raw headers (the bearer token stays with the stream, in the hub).
 */
function releaseRequest(req: IncomingMessage, res: ServerResponse) {
  for (const event of ["finish", "error"] as const) {
    for (const fn of res.listeners(event)) {
      if ((fn as { name?: string }).name === "onResFinished") res.removeListener(event, fn as () => void);
    }
  }
  req.headers = {};
  req.rawHeaders = [];
}

/**
 * `POST /api/v1/events/subscribe/project-events`: every check answers with an ordinary JSON error; only
 * then is the reply hijacked and turned into an event stream, which the hub owns from there on.
 */
export const eventRoutes =
  (svc: { events: EventsService }): FastifyPluginAsyncZod =>
  async (app) => {
    // Hijacked sockets would make server.close() wait forever: end every stream before it runs.
    app.addHook("preClose", async () => svc.events.hub.close());

    app.post(
      "/api/v1/events/subscribe/project-events",
      {
        config: { rateClass: "read" },
        schema: {
          tags: ["Events"],
          summary: "Subscribe to project events (Server-Sent Events)",
          body: subscribeBody,
          response: { 200: z.string().describe("text/event-stream") },
        },
      },
      async (req, reply) => {
        const actor = actorOf(req);
        const token = bearerToken(req.headers.authorization);
        const { ability, expiresAt } = await svc.events.authorize(actor, token, req.body);
        // No await from here on: the capacity checked by authorize() is still there.
        reply.hijack();
        releaseRequest(req.raw, reply.raw);
        const sink = startSseResponse(reply.raw);
        svc.events.hub.open({
          projectId: req.body.projectId,
          actor,
          token,
          registrations: req.body.register,
          ability,
          expiresAt,
          sink,
        });
        return reply;
      },
    );
  };
