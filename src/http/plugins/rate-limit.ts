import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import type { Config } from "../../config.js";
import { AppError } from "../../lib/errors.js";

/**
 * Per-route-class limits, per client IP, over a 60 s window. By default only the `auth` class (login,
 * bootstrap, token renew) is limited, as brute-force protection; read and write limits are off until
 * configured, as in self-hosted Infisical. With Redis the counters are shared by all instances.
 */
export async function registerRateLimit(app: FastifyInstance, config: Config, redis?: Redis) {
  const limits = {
    auth: config.RATE_LIMIT_AUTH_PER_MINUTE,
    read: config.RATE_LIMIT_READ_PER_MINUTE,
    write: config.RATE_LIMIT_WRITE_PER_MINUTE,
    none: 0,
  };
  /** The route's configured class, else by method: reads are GET/HEAD, everything else writes. */
  const classFor = (configured: keyof typeof limits | undefined, methods: string[]) =>
    configured ?? (methods.every((m) => m === "GET" || m === "HEAD") ? "read" : "write");
  const classOf = (req: FastifyRequest) => classFor(req.routeOptions.config?.rateClass, [req.method]);
  // A route whose class is unlimited gets no rate-limit hook at all (no per-request cost): this hook
  // runs before the plugin's own onRoute hook, which skips routes configured with `rateLimit: false`.
  app.addHook("onRoute", (route) => {
    const cls = classFor(route.config?.rateClass, [route.method].flat());
    if (limits[cls] <= 0) route.config = { ...(route.config ?? {}), rateLimit: false };
  });
  await app.register(rateLimit, {
    global: true,
    hook: "onRequest",
    timeWindow: 60_000,
    ...(redis ? { redis, nameSpace: "ferry-rl:" } : {}),
    allowList: (req) => limits[classOf(req)] <= 0 || req.url === "/api/status",
    max: (req) => limits[classOf(req)],
    keyGenerator: (req) => `${classOf(req)}:${req.ip}`,
    errorResponseBuilder: (_req, ctx) =>
      new AppError("RATE_LIMITED", `Rate limit exceeded. Please try again in ${ctx.after}`, {
        retryAfter: Math.ceil(ctx.ttl / 1000),
      }),
  });
}
