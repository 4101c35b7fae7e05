import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { BootstrapService } from "../../features/auth/bootstrap-service.js";
import type { UniversalAuthService } from "../../features/identities/universal-auth-service.js";
import { tokenResponse } from "../schemas.js";

/** Public authentication routes: bootstrap, universal-auth login, token renew/revoke, user login. */
export const authRoutes =
  (svc: { bootstrap: BootstrapService; ua: UniversalAuthService }): FastifyPluginAsyncZod =>
  async (app) => {
    const pub = { auth: "none" as const, rateClass: "auth" as const };

    app.post(
      "/api/v1/admin/bootstrap",
      {
        config: pub,
        schema: {
          tags: ["Admin"],
          summary: "Bootstrap a fresh instance",
          body: z.object({
            email: z.string().trim().email(),
            password: z.string().min(1),
            organization: z.string().trim().min(1),
          }),
          response: {
            200: z.object({
              message: z.string(),
              user: z.object({
                id: z.string(),
                email: z.string(),
                username: z.string(),
                firstName: z.string().nullable(),
                lastName: z.string().nullable(),
                superAdmin: z.boolean(),
              }),
              organization: z.object({ id: z.string(), name: z.string(), slug: z.string() }),
              identity: z.object({
                id: z.string(),
                name: z.string(),
                credentials: z.object({ token: z.string() }),
              }),
            }),
          },
        },
      },
      (req) => svc.bootstrap.bootstrap(req.body, req.ip),
    );

    app.post(
      "/api/v1/auth/universal-auth/login",
      {
        config: pub,
        schema: {
          tags: ["Universal Auth"],
          summary: "Log in with a client id and client secret",
          body: z.object({
            clientId: z.string().trim().min(1),
            clientSecret: z.string().trim().min(1),
            organizationSlug: z.string().optional(),
            subOrganizationName: z.string().optional(),
          }),
          response: { 200: tokenResponse },
        },
      },
      (req) => svc.ua.login(req.body, req.ip, req.headers["user-agent"]),
    );

    app.post(
      "/api/v1/auth/token/renew",
      {
        config: pub,
        schema: {
          tags: ["Universal Auth"],
          body: z.object({ accessToken: z.string().trim().min(1) }),
          response: { 200: tokenResponse },
        },
      },
      (req) => svc.ua.renew(req.body.accessToken),
    );

    app.post(
      "/api/v1/auth/token/revoke",
      {
        config: pub,
        schema: {
          tags: ["Universal Auth"],
          body: z.object({ accessToken: z.string().trim().min(1) }),
          response: { 200: z.object({ message: z.string() }) },
        },
      },
      (req) => svc.ua.revokeToken(req.body.accessToken),
    );

    app.post(
      "/api/v1/auth/email/login",
      {
        config: pub,
        schema: {
          tags: ["Users"],
          summary: "Ferry: log a user in with email and password",
          body: z.object({ email: z.string().trim().email(), password: z.string().min(1) }),
          response: {
            200: z.object({ accessToken: z.string(), expiresIn: z.number(), tokenType: z.literal("Bearer") }),
          },
        },
      },
      (req) => svc.bootstrap.loginUser(req.body, req.ip, req.headers["user-agent"]),
    );
  };
