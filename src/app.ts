import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { Redis } from "ioredis";
import pino, { type Logger } from "pino";
import type { Config } from "./config.js";
import { createDb, type DbHandle } from "./db/client.js";
import { createAuditLog } from "./features/audit/audit.js";
import { createAuditQuery } from "./features/audit/audit-query.js";
import { createAuthService } from "./features/auth/auth-service.js";
import { createBootstrapService } from "./features/auth/bootstrap-service.js";
import { createTokenSigner } from "./features/auth/tokens.js";
import { createLocalChangeBus } from "./features/events/change-bus.js";
import { createIdentitiesService } from "./features/identities/identities-service.js";
import { createUniversalAuthService } from "./features/identities/universal-auth-service.js";
import { createPermissionsService } from "./features/permissions/permissions-service.js";
import { createMembershipsService } from "./features/projects/memberships-service.js";
import { createProjectsService } from "./features/projects/projects-service.js";
import { registerAuth } from "./http/plugins/auth.js";
import { registerErrorHandler } from "./http/plugins/error-handler.js";
import { registerRateLimit } from "./http/plugins/rate-limit.js";
import { validatorCompiler } from "./http/plugins/zod-compiler.js";
import { authRoutes } from "./http/routes/auth.js";
import { identityRoutes } from "./http/routes/identities.js";
import { operationsRoutes } from "./http/routes/operations.js";
import { projectRoutes } from "./http/routes/projects.js";
import { createKeyring } from "./lib/crypto/keyring.js";
import { newRequestId } from "./lib/ids.js";
import { createInvalidationChannel } from "./lib/invalidation.js";
import { loggerOptions } from "./lib/logger.js";

export type BuildOptions = {
  /** Use an in-memory PGlite instead of DATA_DIR (tests). Ignored when DATABASE_URL is set. */
  memoryDb?: boolean;
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs through this). */
  logger?: Logger;
};

export type App = Awaited<ReturnType<typeof buildApp>>;

/**
 * The only composition root: config → db → repos/services → Fastify plugins and routes, in that order.
 * Nothing is constructed per request.
 */
export async function buildApp(config: Config, opts: BuildOptions = {}) {
  const log = opts.logger ?? pino(loggerOptions(config.LOG_LEVEL));
  const dbh: DbHandle = await createDb({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    memory: opts.memoryDb,
    log,
  });
  const { db } = dbh;
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : undefined;
  redis?.on("error", (err: Error) => log.warn({ err: err.message }, "redis error"));

  // ---- services ----
  const keyring = createKeyring(config.ENCRYPTION_KEY, db);
  const signer = createTokenSigner(config.AUTH_SECRET);
  const audit = createAuditLog(db, log);
  const invalidation = createInvalidationChannel({ redisUrl: config.REDIS_URL, log });
  const auth = createAuthService({ db, signer });
  const permissions = createPermissionsService({ db });
  invalidation.subscribe((m) => {
    if (m.kind === "token" || m.kind === "identity") auth.invalidate(m);
    if (m.kind === "identity") permissions.invalidate();
    if (m.kind === "project") permissions.invalidate({ projectId: m.id });
    if (m.kind === "all") {
      auth.invalidate(m);
      permissions.invalidate();
    }
  });
  const onIdentityChanged = (id: string) => invalidation.publish({ kind: "identity", id });
  const onTokenRevoked = (id: string) => invalidation.publish({ kind: "token", id });
  const changes = createLocalChangeBus((err) => log.error({ err }, "change listener failed"));
  const bootstrap = createBootstrapService({ db, signer, audit });
  const identities = createIdentitiesService({ db, audit, onIdentityChanged });
  const ua = createUniversalAuthService({ db, signer, audit, identities, onTokenRevoked, onIdentityChanged });
  const projects = createProjectsService({ db, keyring, audit, permissions });
  const memberships = createMembershipsService({ db, audit, permissions });
  const auditQuery = createAuditQuery({ db, permissions, flush: audit.flush });
  // ---- services: data plane (environments, folders, secrets, imports, tags) ----
  // ---- services: secret syncs ----
  // ---- services: events ----

  const services = {
    config,
    log,
    dbh,
    db,
    redis,
    keyring,
    signer,
    audit,
    auth,
    permissions,
    changes,
    invalidation,
    bootstrap,
    identities,
    ua,
    projects,
    memberships,
  };

  // ---- HTTP ----
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: newRequestId,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1024 * 1024,
    // Per-request access logs only at debug/trace: at info they would cost more than the handlers.
    logController: new LogController({
      disableRequestLogging: config.LOG_LEVEL !== "debug" && config.LOG_LEVEL !== "trace",
    }),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);

  await app.register(swagger, {
    openapi: {
      info: { title: "Ferry API", description: "Infisical-compatible secrets API", version: "0.1.0" },
      components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: "/api/docs", uiConfig: { docExpansion: "list" } });
  app.addHook("onRoute", (route) => {
    // The docs routes are public.
    if (route.url.startsWith("/api/docs"))
      route.config = { ...(route.config ?? {}), auth: "none", rateClass: "none" };
  });

  await registerRateLimit(app, config, redis);
  registerAuth(app, auth);

  await app.register(authRoutes({ bootstrap, ua }));
  await app.register(identityRoutes({ identities, ua, bootstrap }));
  await app.register(projectRoutes({ projects, memberships }));
  await app.register(operationsRoutes({ auditQuery, dbKind: dbh.kind }));
  // ---- routes: data plane ----
  // ---- routes: secret syncs ----
  // ---- routes: events ----

  const closers: (() => Promise<void>)[] = [];
  let closed = false;
  async function close() {
    if (closed) return;
    closed = true;
    await app.close();
    for (const c of closers.reverse()) await c();
    await audit.close();
    await invalidation.close();
    redis?.disconnect();
    await dbh.close();
  }

  return {
    app: app as unknown as FastifyInstance,
    services,
    close,
    onClose: (fn: () => Promise<void>) => closers.push(fn),
  };
}
