import type { Logger } from "pino";
import type { Config } from "../../config.js";
import type { DestinationEnv, IoCtx } from "../../destinations/types.js";
import { createHttpClient } from "../../lib/http-client.js";

/** Server settings adapters may read (endpoint overrides for the fakes, the server's own AWS identity). */
export function destinationEnv(config: Config): DestinationEnv {
  return {
    AWS_ENDPOINT_URL: config.AWS_ENDPOINT_URL,
    AWS_ENDPOINT_URL_SSM: config.AWS_ENDPOINT_URL_SSM,
    AWS_ENDPOINT_URL_STS: config.AWS_ENDPOINT_URL_STS,
    GITHUB_API_URL: config.GITHUB_API_URL,
    GITHUB_APP_ID: config.GITHUB_APP_ID,
    GITHUB_APP_PRIVATE_KEY: config.GITHUB_APP_PRIVATE_KEY,
  };
}

/** The ctx every connection/destination call gets: SSRF guard, per-request timeout, env, org. */
export function ioCtx(config: Config, log: Logger, orgId: string, signal?: AbortSignal): IoCtx {
  return {
    http: createHttpClient({
      allowInternal: config.ALLOW_INTERNAL_DESTINATIONS,
      timeoutMs: config.SYNC_TIMEOUT_MS,
    }),
    log,
    signal: signal ?? new AbortController().signal,
    env: destinationEnv(config),
    orgId,
  };
}
