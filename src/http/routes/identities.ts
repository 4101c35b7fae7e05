import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { BootstrapService } from "../../features/auth/bootstrap-service.js";
import { type IdentitiesService, ORG_ROLES } from "../../features/identities/identities-service.js";
import type { UniversalAuthService } from "../../features/identities/universal-auth-service.js";
import { actorOf } from "../plugins/auth.js";
import { clientSecretDataSchema, identitySchema, universalAuthSchema } from "../schemas.js";

const ttl = z.coerce.number().int().min(0).max(315360000);
const ipList = z.array(z.object({ ipAddress: z.string().trim() })).min(1);
const uaBody = z.object({
  accessTokenTTL: ttl.optional(),
  accessTokenMaxTTL: ttl.optional(),
  accessTokenNumUsesLimit: z.coerce.number().int().min(0).optional(),
  accessTokenPeriod: z.coerce.number().int().min(0).optional(),
  clientSecretTrustedIps: ipList.optional(),
  accessTokenTrustedIps: ipList.optional(),
  lockoutEnabled: z.boolean().optional(),
  lockoutThreshold: z.number().int().min(1).max(30).optional(),
  lockoutDurationSeconds: z.number().int().min(30).max(86400).optional(),
  lockoutCounterResetSeconds: z.number().int().min(5).max(3600).optional(),
});
const identityId = z.object({ identityId: z.string().trim().min(1) });

/** Machine identities, their universal-auth configuration and client secrets; organisation users. */
export const identityRoutes =
  (svc: {
    identities: IdentitiesService;
    ua: UniversalAuthService;
    bootstrap: BootstrapService;
  }): FastifyPluginAsyncZod =>
  async (app) => {
    const tags = ["Identities"];
    app.post(
      "/api/v1/identities",
      {
        schema: {
          tags,
          body: z.object({
            name: z.string().trim().min(1).max(64),
            organizationId: z.string().trim().min(1),
            role: z.enum(ORG_ROLES).default("no-access"),
          }),
          response: { 200: z.object({ identity: identitySchema }) },
        },
      },
      async (req) => ({ identity: await svc.identities.create(actorOf(req), req.body) }),
    );
    app.get(
      "/api/v1/identities",
      {
        schema: {
          tags,
          querystring: z.object({ orgId: z.string().trim().min(1) }),
          response: { 200: z.object({ identities: z.array(identitySchema) }) },
        },
      },
      async (req) => ({ identities: await svc.identities.list(actorOf(req), req.query.orgId) }),
    );
    app.get(
      "/api/v1/identities/:identityId",
      { schema: { tags, params: identityId, response: { 200: z.object({ identity: identitySchema }) } } },
      async (req) => ({ identity: await svc.identities.get(actorOf(req), req.params.identityId) }),
    );
    app.patch(
      "/api/v1/identities/:identityId",
      {
        schema: {
          tags,
          params: identityId,
          body: z.object({
            name: z.string().trim().min(1).max(64).optional(),
            role: z.enum(ORG_ROLES).optional(),
          }),
          response: { 200: z.object({ identity: identitySchema }) },
        },
      },
      async (req) => ({
        identity: await svc.identities.update(actorOf(req), req.params.identityId, req.body),
      }),
    );
    app.delete(
      "/api/v1/identities/:identityId",
      { schema: { tags, params: identityId, response: { 200: z.object({ identity: identitySchema }) } } },
      async (req) => ({ identity: await svc.identities.remove(actorOf(req), req.params.identityId) }),
    );

    const uaTags = ["Universal Auth"];
    const uaResponse = { 200: z.object({ identityUniversalAuth: universalAuthSchema }) };
    app.post(
      "/api/v1/auth/universal-auth/identities/:identityId",
      { schema: { tags: uaTags, params: identityId, body: uaBody.optional(), response: uaResponse } },
      async (req) => ({
        identityUniversalAuth: await svc.ua.attach(actorOf(req), req.params.identityId, req.body ?? {}),
      }),
    );
    app.get(
      "/api/v1/auth/universal-auth/identities/:identityId",
      { schema: { tags: uaTags, params: identityId, response: uaResponse } },
      async (req) => ({ identityUniversalAuth: await svc.ua.get(actorOf(req), req.params.identityId) }),
    );
    app.patch(
      "/api/v1/auth/universal-auth/identities/:identityId",
      { schema: { tags: uaTags, params: identityId, body: uaBody, response: uaResponse } },
      async (req) => ({
        identityUniversalAuth: await svc.ua.update(actorOf(req), req.params.identityId, req.body),
      }),
    );
    app.post(
      "/api/v1/auth/universal-auth/identities/:identityId/client-secrets",
      {
        schema: {
          tags: uaTags,
          params: identityId,
          body: z
            .object({
              description: z.string().trim().max(256).default(""),
              numUsesLimit: z.coerce.number().int().min(0).default(0),
              ttl: ttl.default(0),
            })
            .optional(),
          response: { 200: z.object({ clientSecret: z.string(), clientSecretData: clientSecretDataSchema }) },
        },
      },
      (req) => svc.ua.createClientSecret(actorOf(req), req.params.identityId, req.body ?? {}),
    );
    app.get(
      "/api/v1/auth/universal-auth/identities/:identityId/client-secrets",
      {
        schema: {
          tags: uaTags,
          params: identityId,
          response: { 200: z.object({ clientSecretData: z.array(clientSecretDataSchema) }) },
        },
      },
      async (req) => ({
        clientSecretData: await svc.ua.listClientSecrets(actorOf(req), req.params.identityId),
      }),
    );
    app.post(
      "/api/v1/auth/universal-auth/identities/:identityId/client-secrets/:clientSecretId/revoke",
      {
        schema: {
          tags: uaTags,
          params: identityId.extend({ clientSecretId: z.string().trim().min(1) }),
          response: { 200: z.object({ clientSecretData: clientSecretDataSchema }) },
        },
      },
      async (req) => ({
        clientSecretData: await svc.ua.revokeClientSecret(
          actorOf(req),
          req.params.identityId,
          req.params.clientSecretId,
        ),
      }),
    );

    app.post(
      "/api/v1/organization/users",
      {
        schema: {
          tags: ["Users"],
          summary: "Ferry: add a user (email + password) to the caller's organisation",
          body: z.object({
            email: z.string().trim().email(),
            password: z.string().min(8),
            role: z.enum(ORG_ROLES).default("member"),
          }),
          response: {
            200: z.object({
              user: z.object({
                id: z.string(),
                email: z.string(),
                username: z.string(),
                superAdmin: z.boolean(),
              }),
            }),
          },
        },
      },
      async (req) => ({ user: await svc.bootstrap.createUser(actorOf(req), req.body) }),
    );
  };
