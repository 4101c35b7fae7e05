import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { isDatabaseUnavailable } from "../../db/client.js";
import { AppError } from "../../lib/errors.js";

/**
 * The one place where HTTP statuses are chosen. Every error leaves as Infisical's envelope
 * `{reqId, statusCode, message, error, details?}` (plus our `code`), which the Node SDK, the Go SDK, the
 * CLI and Terraform all parse. Where Infisical answers 500 for client mistakes (malformed JSON, empty JSON
 * body, unsupported media type) we answer the honest 4xx.
 */
export type Envelope = {
  reqId: string;
  statusCode: number;
  message: unknown;
  error: string;
  details?: unknown;
  code?: string;
};

export function sendError(
  reply: FastifyReply,
  req: FastifyRequest,
  statusCode: number,
  error: string,
  message: unknown,
  extra: { details?: unknown; code?: string; retryAfter?: number } = {},
) {
  const body: Envelope = { reqId: req.id, statusCode, message, error };
  if (extra.details !== undefined) body.details = extra.details;
  if (extra.code) body.code = extra.code;
  if (extra.retryAfter !== undefined) reply.header("retry-after", String(extra.retryAfter));
  return reply.status(statusCode).type("application/json; charset=utf-8").send(body);
}

const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; error: string; message?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, error: "UnsupportedMediaType" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, error: "BadRequest" },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    error: "BadRequest",
    message: "Body cannot be empty when content-type is set to 'application/json'",
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, error: "PayloadTooLarge", message: "Request body is too large" },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, error: "BadRequest", message: "Malformed JSON body" },
};

/**
 * PostgreSQL "data exception" codes that only bad client input can cause (a non-uuid compared with a
 * uuid column, a NUL byte in text, an integer or date out of range, an over-long value). Routes validate
 * what they can; this keeps anything that slips through a clear 400 instead of a 500, on PGlite and
 * PostgreSQL alike.
 */
const PG_BAD_INPUT: Record<string, string> = {
  "22P02": "Invalid input: a value has the wrong format (for example an id that is not a UUID)",
  "22021": "Invalid input: text must not contain NUL (\\u0000) characters",
  "22P05": "Invalid input: text contains a character that cannot be stored",
  "22003": "Invalid input: a number is out of range",
  "22001": "Invalid input: a value is too long",
  "22007": "Invalid input: a date or time has the wrong format",
  "22008": "Invalid input: a date or time is out of range",
  "2201B": "Invalid input: invalid regular expression",
  "54000": "Invalid input: a value is too large to store",
};

function pgCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Errors Fastify raises before routing (a path parameter over `maxParamLength`, a malformed URL): passed
 * as the `frameworkErrors` option so they leave in the envelope too.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  if (err.code === "FST_ERR_MAX_PARAM_LENGTH")
    return sendError(reply, req, 414, "UriTooLong", "A path parameter is too long", { code: "BAD_REQUEST" });
  return sendError(reply, req, 400, "BadRequest", "Malformed URL", { code: "BAD_REQUEST" });
}

export function registerErrorHandler(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError | AppError | ZodError | Error, req, reply) => {
    if (err instanceof AppError) {
      if (err.status >= 500) req.log.error({ err }, "request failed");
      return sendError(reply, req, err.status, err.name, err.message, {
        details: err.details,
        code: err.code,
        retryAfter: err.retryAfter,
      });
    }
    if (err instanceof ZodError) {
      return sendError(reply, req, 422, "ValidationFailure", err.issues, { code: "VALIDATION" });
    }
    const fe = err as FastifyError;
    if (fe.validation) {
      return sendError(reply, req, 422, "ValidationFailure", fe.validation, { code: "VALIDATION" });
    }
    const known = fe.code ? FASTIFY_CLIENT_ERRORS[fe.code] : undefined;
    if (known) return sendError(reply, req, known.status, known.error, known.message ?? fe.message);
    // JSON.parse failures surface as SyntaxError with a 400 status from Fastify's parser.
    if (err instanceof SyntaxError || (fe.statusCode === 400 && fe.code?.startsWith("FST_"))) {
      return sendError(reply, req, 400, "BadRequest", "Malformed JSON body");
    }
    if (fe.statusCode === 429) {
      return sendError(reply, req, 429, "RateLimitExceeded", fe.message, { code: "RATE_LIMITED" });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendError(reply, req, fe.statusCode, fe.name || "BadRequest", fe.message);
    }
    const pg = pgCode(err);
    const badInput = pg ? PG_BAD_INPUT[pg] : undefined;
    if (badInput) {
      req.log.debug({ err }, "database rejected the input");
      return sendError(reply, req, 400, "BadRequest", badInput, { code: "BAD_REQUEST" });
    }
    // PostgreSQL down or restarting: a retryable 503, not a bug report.
    if (isDatabaseUnavailable(err)) {
      req.log.warn({ err: (err as Error).message }, "database unavailable");
      return sendError(
        reply,
        req,
        503,
        "ServiceUnavailable",
        "The database is unavailable; try again shortly",
        {
          code: "UNAVAILABLE",
          retryAfter: 1,
        },
      );
    }
    req.log.error({ err }, "unhandled error");
    return sendError(reply, req, 500, "InternalServerError", "Something went wrong", { code: "INTERNAL" });
  });

  app.setNotFoundHandler((req, reply) =>
    sendError(reply, req, 404, "NotFound", `Route ${req.method}:${req.url.split("?")[0]} not found`, {
      code: "NOT_FOUND",
    }),
  );
}
