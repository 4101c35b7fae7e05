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
  // A callback hook, not an async one: a token whose JWT and row are cached (nearly every request) is
  // answered synchronously, with no promise and no extra turn of the microtask queue.
  app.addHook("onRequest", (req, _reply, done) => {
    const cfg = req.routeOptions.config;
    if (cfg?.auth === "none" || !req.routeOptions.url) return done();
    const header = req.headers.authorization;
    if (!header) return done(new AppError("UNAUTHORIZED", "Token missing"));
    // Infisical drops the first 7 characters without checking the scheme; we require "Bearer ".
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m?.[1]) return done(new AppError("UNAUTHORIZED", "Token missing"));
    const token = m[1];
    const ua = req.headers["user-agent"];
    let actor: Actor | undefined;
    try {
      actor = auth.authenticateCached(token, req.ip, ua);
    } catch (err) {
      return done(err as Error);
    }
    if (actor) {
      req.actor = actor;
      return done();
    }
    auth.authenticate(token, req.ip, ua).then(
      (a) => {
        req.actor = a;
        done();
      },
      (err: unknown) => done(err as Error),
    );
  });
}

export function actorOf(req: FastifyRequest): Actor {
  if (!req.actor) throw new AppError("UNAUTHORIZED", "Token missing");
  return req.actor;
}
