import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Actor } from "../../features/auth/actor.js";
import type { AuthService } from "../../features/auth/auth-service.js";
import { AppError } from "../../lib/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    actor?: Actor;
  }
  interface FastifyContextConfig {
    /** "none": the route ignores any Authorization header (login, bootstrap, status, docs). */
    auth?: "none" | "required";
    /** Rate-limit class; routes without one are classified by method (read/write). */
    rateClass?: "auth" | "read" | "write" | "none";
  }
}

/**
 * Authentication runs in onRequest, before body and query validation, as in Infisical: a request with no
 * token gets 401 "Token missing" even when its body is also invalid. Public routes opt out with
 * `config: { auth: "none" }`; they ignore a stale bearer (the Node SDK re-sends its old token on login).
 */
export function registerAuth(app: FastifyInstance, auth: AuthService) {
  app.addHook("onRequest", async (req) => {
    const cfg = req.routeOptions.config;
    if (cfg?.auth === "none" || !req.routeOptions.url) return;
    const header = req.headers.authorization;
    if (!header) throw new AppError("UNAUTHORIZED", "Token missing");
    // Infisical drops the first 7 characters without checking the scheme; we require "Bearer ".
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m?.[1]) throw new AppError("UNAUTHORIZED", "Token missing");
    req.actor = await auth.authenticate(m[1], req.ip, req.headers["user-agent"]);
  });
}

export function actorOf(req: FastifyRequest): Actor {
  if (!req.actor) throw new AppError("UNAUTHORIZED", "Token missing");
  return req.actor;
}
