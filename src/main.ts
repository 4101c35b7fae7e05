import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";

/**
 * Reads config, builds the app, listens, and shuts down gracefully on SIGTERM/SIGINT: stop accepting,
 * let in-flight requests finish, end event streams, flush the audit log, close the database.
 */
async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`ferry: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { app, services, close } = await buildApp(config);
  const { log } = services;
  for (const name of config.generated) {
    log.warn(
      `${name} is not set: using a development value generated in ${config.DATA_DIR} (never do this in production)`,
    );
  }
  await app.listen({ port: config.PORT, host: config.HOST });
  log.info({ database: services.dbh.kind, redis: Boolean(config.REDIS_URL) }, "ferry is ready");

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      log.error("shutdown took longer than 20 s; exiting");
      process.exit(1);
    }, 20_000);
    force.unref();
    close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, "error during shutdown");
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

main().catch((err: unknown) => {
  process.stderr.write(`ferry: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
