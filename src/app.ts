import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { Redis } from "ioredis";
import pino, { type Logger } from "pino";
import type { Config } from "./config.js";
import { createDb, type DbHandle } from "./db/client.js";
import { startEmbeddedVacuum } from "./db/embedded-vacuum.js";
import { createAuditLog, FLUSH_ROWS } from "./features/audit/audit.js";
import { createAuditQuery } from "./features/audit/audit-query.js";
import { createAuthService } from "./features/auth/auth-service.js";
import { createBootstrapService } from "./features/auth/bootstrap-service.js";
import { createTokenSigner } from "./features/auth/tokens.js";
import { createEnvironmentsService } from "./features/environments/environments-service.js";
import { createLocalChangeBus } from "./features/events/change-bus.js";
import { createEventsService } from "./features/events/events-service.js";
import { createFoldersService } from "./features/folders/folders-service.js";
import { createIdentitiesService } from "./features/identities/identities-service.js";
import { createUniversalAuthService } from "./features/identities/universal-auth-service.js";
import { initLicense } from "./features/license/license-service.js";
import { createPermissionsService } from "./features/permissions/permissions-service.js";
import { createMembershipsService } from "./features/projects/memberships-service.js";
import { createProjectRolesService } from "./features/projects/project-roles-service.js";
import { createProjectsService } from "./features/projects/projects-service.js";
import { createSecretImportsService } from "./features/secret-imports/secret-imports-service.js";
import { createSecretsService } from "./features/secrets/secrets-service.js";
import { createSyncsFeature } from "./features/syncs/syncs-feature.js";
import { createTagsService } from "./features/tags/tags-service.js";
import { registerAuth } from "./http/plugins/auth.js";
import { frameworkErrors, registerErrorHandler } from "./http/plugins/error-handler.js";
import { registerRateLimit } from "./http/plugins/rate-limit.js";
import { validatorCompiler } from "./http/plugins/zod-compiler.js";
import { appConnectionRoutes } from "./http/routes/app-connections.js";
import { authRoutes } from "./http/routes/auth.js";
import { environmentRoutes } from "./http/routes/environments.js";
import { eventRoutes } from "./http/routes/events.js";
import { folderRoutes } from "./http/routes/folders.js";
import { identityRoutes } from "./http/routes/identities.js";
import { licenseRoutes } from "./http/routes/license.js";
import { operationsRoutes } from "./http/routes/operations.js";
import { projectRoleRoutes } from "./http/routes/project-roles.js";
import { projectRoutes } from "./http/routes/projects.js";
import { secretImportRoutes } from "./http/routes/secret-imports.js";
import { secretSyncRoutes } from "./http/routes/secret-syncs.js";
import { secretRoutes } from "./http/routes/secrets.js";
import { tagRoutes } from "./http/routes/tags.js";
import { createKeyring } from "./lib/crypto/keyring.js";
import { newRequestId } from "./lib/ids.js";
import { createInvalidationChannel } from "./lib/invalidation.js";
import { lazyChildLogger, loggerOptions } from "./lib/logger.js";

export type BuildOptions = {
  /** Use an in-memory PGlite instead of DATA_DIR (tests). Ignored when DATABASE_URL is set. */
  memoryDb?: boolean;
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs through this). */
  logger?: Logger;
};

export type App = Awaited<ReturnType<typeof buildApp>>;

export type RouteInfo = {
  method: string;
  url: string;
  schema?: { params?: unknown; querystring?: unknown; body?: unknown; response?: unknown };
  config?: { auth?: "none" | "required" };
};

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
  const vacuum = startEmbeddedVacuum(dbh, log, config.EMBEDDED_VACUUM_INTERVAL_MS);
  const redis = config.REDIS_URL
    ? new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : undefined;
  redis?.on("error", (err: Error) => log.warn({ err: err.message }, "redis error"));

  // ---- services ----
  const keyring = createKeyring(
    config.ENCRYPTION_KEY,
    db,
    config.ENCRYPTION_KEY_PREVIOUS ? [config.ENCRYPTION_KEY_PREVIOUS] : [],
  );
  const signer = createTokenSigner(config.AUTH_SECRET);
  const audit = createAuditLog(dbh, log, 1000, FLUSH_ROWS[dbh.kind]);
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
  const roles = createProjectRolesService({ db, audit, permissions });
  const auditQuery = createAuditQuery({ db, permissions, flush: audit.flush });
  // ---- services: data plane (environments, folders, secrets, imports, tags) ----
  const environments = createEnvironmentsService({ db, audit, permissions });
  const folders = createFoldersService({ db, audit, permissions });
  const tags = createTagsService({ db, audit, permissions });
  // Import writes notify the folder and its importers through the secrets feature's importer lookup.
  const secretImports = createSecretImportsService({ db, audit, permissions, changes, log });
  const secrets = createSecretsService({ db, dbh, keyring, audit, permissions, changes, log });
  // ---- services: secret syncs ----
  const syncsFeature = await createSyncsFeature({
    config,
    log,
    dbh,
    keyring,
    audit,
    permissions,
    changes,
    secrets,
  });
  const { connections, syncs, staleSweep: syncStatusSweep } = syncsFeature;
  // ---- services: events ----
  const license = await initLicense({ config, log });
  const events = createEventsService({ config, log, changes, permissions, auth, license });
  invalidation.subscribe((m) => events.onInvalidation(m));

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
    roles,
    environments,
    folders,
    tags,
    secretImports,
    secrets,
    connections,
    syncs,
    syncStatusSweep,
    license,
    events,
  };

  // ---- HTTP ----
  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    // request.log is made on first use (see lazyChildLogger): most requests never log.
    childLoggerFactory: lazyChildLogger as never,
    genReqId: newRequestId,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    routerOptions: { ignoreTrailingSlash: true },
    bodyLimit: 1024 * 1024,
    // Over-long path parameters and malformed URLs are refused before routing: keep the envelope.
    frameworkErrors,
    // Per-request access logs only at debug/trace: at info they would cost more than the handlers.
    logController: new LogController({
      disableRequestLogging: config.LOG_LEVEL !== "debug" && config.LOG_LEVEL !== "trace",
    }),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandler(app);

  // The route table: every registered route with its schema. The OpenAPI document, the authorization
  // matrix and the fuzz suite are all derived from it, so a new route cannot escape them.
  const routes: RouteInfo[] = [];
  app.addHook("onRoute", (route) => {
    // The docs routes are public.
    if (route.url.startsWith("/api/docs"))
      route.config = { ...(route.config ?? {}), auth: "none", rateClass: "none" };
    for (const method of [route.method].flat()) {
      if (method === "HEAD" || route.url.endsWith("*")) continue;
      routes.push({
        method,
        url: route.url,
        schema: route.schema as RouteInfo["schema"],
        config: route.config,
      });
    }
  });

  await app.register(swagger, {
    openapi: {
      info: { title: "Ferry API", description: "Infisical-compatible secrets API", version: "0.1.0" },
      components: { securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } },
      security: [{ bearerAuth: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: "/api/docs", uiConfig: { docExpansion: "list" } });
  await registerRateLimit(app, config, redis);
  registerAuth(app, auth);

  await app.register(authRoutes({ bootstrap, ua }));
  await app.register(identityRoutes({ identities, ua, bootstrap }));
  await app.register(projectRoutes({ projects, memberships }));
  await app.register(projectRoleRoutes({ roles }));
  await app.register(operationsRoutes({ auditQuery, dbKind: dbh.kind }));
  // ---- routes: data plane ----
  await app.register(environmentRoutes({ environments }));
  await app.register(folderRoutes({ folders }));
  await app.register(tagRoutes({ tags }));
  await app.register(secretImportRoutes({ secretImports }));
  await app.register(secretRoutes({ secrets }));
  // ---- routes: secret syncs ----
  await app.register(appConnectionRoutes({ connections }));
  await app.register(secretSyncRoutes({ syncs }));
  // ---- routes: events ----
  await app.register(eventRoutes({ events }));
  await app.register(licenseRoutes({ license }));

  const closers: (() => Promise<void>)[] = [];
  closers.push(() => events.close());
  closers.push(() => syncsFeature.close());
  let closed = false;
  async function close() {
    if (closed) return;
    closed = true;
    const step = async (name: string, fn: () => Promise<unknown> | unknown) => {
      log.debug({ step: name }, "closing");
      await fn();
    };
    // server.close() closes only the connections idle at that moment: a keep-alive connection whose
    // request was still in flight becomes idle later and would hold shutdown open for the whole
    // keep-alive timeout (72 s). Keep closing newly idle connections until the server is closed.
    const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
    await step("http", () => app.close()).finally(() => clearInterval(idleSweep));
    for (const [i, c] of closers.reverse().entries()) await step(`feature ${i}`, c);
    await step("audit", () => audit.close());
    await step("invalidation", () => invalidation.close());
    redis?.disconnect();
    await step("embedded autovacuum", () => vacuum.stop());
    await step("database", () => dbh.close());
  }

  return {
    app: app as unknown as FastifyInstance,
    routes,
    services,
    close,
    onClose: (fn: () => Promise<void>) => closers.push(fn),
  };
}
