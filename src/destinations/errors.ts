/**
 * The one error type adapters throw. The sync worker stores `{ code, message, secretKey? }` on the sync
 * row and decides on backoff from `retryable` alone, so every failure must be classified here, never
 * left as a raw fetch or SDK error.
 */
export type DestinationErrorCode =
  /** 429 or a vendor throttling error. Retryable; `retryAfterMs` when the vendor said how long. */
  | "RATE_LIMITED"
  /** 5xx from the destination. Retryable. */
  | "UNAVAILABLE"
  /** The per-request timeout fired. Retryable. */
  | "TIMEOUT"
  /** Connection refused/reset or DNS trouble. Retryable unless the host does not exist. */
  | "NETWORK"
  /** The caller aborted (job cancelled, shutdown). Not retryable: the caller decided to stop. */
  | "ABORTED"
  /** 401 or a rejected credential. */
  | "UNAUTHORIZED"
  /** 403: the credential works but lacks permission. */
  | "FORBIDDEN"
  | "NOT_FOUND"
  /** Any other 4xx: the destination refused this request as sent. */
  | "REJECTED"
  /** The SSRF guard refused the address. */
  | "BLOCKED_ADDRESS"
  /** The destination is reachable but its configuration cannot work (missing mount, bad URL …). */
  | "INVALID_CONFIG";

export interface DestinationErrorInit {
  code: DestinationErrorCode;
  message: string;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  secretKey?: string;
  cause?: unknown;
}

export class DestinationError extends Error {
  readonly code: DestinationErrorCode;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** The destination key the failure belongs to, when the call was about one key. */
  readonly secretKey?: string;

  constructor(init: DestinationErrorInit) {
    super(init.message, { cause: init.cause });
    this.name = "DestinationError";
    this.code = init.code;
    this.retryable = init.retryable;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.secretKey = init.secretKey;
  }

  /** A copy attributed to one key (the message and classification are kept). */
  withSecretKey(secretKey: string): DestinationError {
    return new DestinationError({ ...this.toJSON(), secretKey, cause: this.cause });
  }

  toJSON(): Omit<DestinationErrorInit, "cause"> {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
      ...(this.secretKey === undefined ? {} : { secretKey: this.secretKey }),
    };
  }
}

export const isDestinationError = (err: unknown): err is DestinationError => err instanceof DestinationError;

/** Classification of an HTTP status into a code. 429 and 5xx are retryable; every other 4xx is not. */
export function codeForStatus(status: number): { code: DestinationErrorCode; retryable: boolean } {
  if (status === 429) return { code: "RATE_LIMITED", retryable: true };
  if (status >= 500) return { code: "UNAVAILABLE", retryable: true };
  if (status === 401) return { code: "UNAUTHORIZED", retryable: false };
  if (status === 403) return { code: "FORBIDDEN", retryable: false };
  if (status === 404) return { code: "NOT_FOUND", retryable: false };
  return { code: "REJECTED", retryable: false };
}

// Short strings are left alone: redacting "1" or "id" would shred messages while protecting nothing.
const MIN_REDACT_LENGTH = 4;
const MAX_MESSAGE_LENGTH = 500;

/**
 * Replaces every occurrence of the given sensitive strings (tokens, secret values) and anything that
 * looks like a bearer credential. Applied to every message built from a vendor response, because
 * vendors do echo request data back (e.g. validation errors quoting the value).
 */
export function scrub(text: string, sensitive: Iterable<string> = []): string {
  let out = text;
  const list = [...sensitive]
    .filter((s) => s.length >= MIN_REDACT_LENGTH)
    .sort((a, b) => b.length - a.length);
  for (const s of list) out = out.split(s).join("[redacted]");
  out = out.replace(/\b(Bearer|token|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [redacted]");
  out = out.replace(
    /\b(gh[pousr]_|github_pat_|hvs\.|hvb\.|tr_(?:dev|prod|stg|pat)_)[A-Za-z0-9_.-]+/g,
    "$1[redacted]",
  );
  return out.length > MAX_MESSAGE_LENGTH ? `${out.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : out;
}

/** All string leaves of a JSON-ish value: what a request body could leak back in an error. */
export function stringLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) stringLeaves(v, out);
  return out;
}
