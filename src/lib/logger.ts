import type { LoggerOptions } from "pino";

/**
 * pino options. Redaction is a second line of defence: code never logs tokens, client secrets or
 * secret values on purpose, and these paths catch them if a request or object is logged whole.
 */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  "headers.authorization",
  "*.authorization",
  "*.accessToken",
  "*.clientSecret",
  "*.secretValue",
  "*.password",
  "*.token",
  "*.credentials",
  "*.value",
  "body",
  "req.body",
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: {
      // Log method, route and ids only: never the query string, which may carry names but the body never.
      req: (req: { method: string; url: string; id: string; ip?: string }) => ({
        method: req.method,
        url: req.url.split("?")[0],
        reqId: req.id,
        ip: req.ip,
      }),
    },
  };
}
