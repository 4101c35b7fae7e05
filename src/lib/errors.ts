/**
 * One error class and one catalogue. The HTTP status is chosen from the code in exactly one place
 * (http/plugins/error-handler.ts). `name` becomes the envelope's `error` field, which is how
 * Infisical's clients read it (e.g. "NotFound", "PermissionDenied", or a service-specific name such as
 * "DeleteSecret").
 */
export const ERRORS = Object.freeze({
  BAD_REQUEST: { status: 400, name: "BadRequest" },
  UNAUTHORIZED: { status: 401, name: "UnauthorizedError" },
  FORBIDDEN: { status: 403, name: "ForbiddenError" },
  PERMISSION_DENIED: { status: 403, name: "PermissionDenied" },
  TOKEN_ERROR: { status: 403, name: "TokenError" },
  NOT_FOUND: { status: 404, name: "NotFound" },
  CONFLICT: { status: 409, name: "Conflict" },
  PAYLOAD_TOO_LARGE: { status: 413, name: "PayloadTooLarge" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, name: "UnsupportedMediaType" },
  VALIDATION: { status: 422, name: "ValidationFailure" },
  RATE_LIMITED: { status: 429, name: "RateLimitExceeded" },
  INTERNAL: { status: 500, name: "InternalServerError" },
  UNAVAILABLE: { status: 503, name: "ServiceUnavailable" },
});

export type ErrorCode = keyof typeof ERRORS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** Seconds, sent as Retry-After with 429/503. */
  readonly retryAfter?: number;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { name?: string; details?: unknown; cause?: unknown; retryAfter?: number } = {},
  ) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.status = ERRORS[code].status;
    this.name = opts.name ?? ERRORS[code].name;
    this.details = opts.details;
    this.retryAfter = opts.retryAfter;
  }
}

export const notFound = (message: string, name?: string) => new AppError("NOT_FOUND", message, { name });
export const badRequest = (message: string, name?: string) => new AppError("BAD_REQUEST", message, { name });
