import {
  codeForStatus,
  DestinationError,
  type DestinationErrorCode,
  scrub,
  stringLeaves,
} from "../destinations/errors.js";
import { assertPublicUrl, type LookupAll } from "./net-guard.js";

/**
 * The fetch wrapper every destination adapter uses (directly, or handed to an SDK as its `fetch`):
 * per-request timeout, SSRF guard, no redirects, JSON helpers, and classification of every failure into
 * a DestinationError whose message is scrubbed of tokens and request values.
 *
 * It never retries: the sync worker owns retries and backoff (it reads `retryable`/`retryAfterMs`).
 */

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface HttpRequest {
  method?: HttpMethod;
  url: string | URL;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string | undefined>;
  /** Sent as JSON. Its string leaves are also scrubbed from any error message. */
  json?: unknown;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Statuses returned as a response instead of thrown (e.g. 404 on a read that may find nothing). */
  allowStatus?: readonly number[];
  /** More strings that must never appear in an error message. */
  redact?: readonly string[];
  /** Attributes a failure to this destination key. */
  secretKey?: string;
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

export interface HttpClient {
  readonly allowInternal: boolean;
  /** Default per-request timeout, also handed to SDKs that bring their own transport (AWS). */
  readonly timeoutMs: number;
  request<T = unknown>(req: HttpRequest): Promise<HttpResponse<T>>;
  /**
   * A fetch with the same guard and timeout, for SDKs that take a custom fetch (Octokit). Failures
   * before a response arrive as DestinationError; responses are returned whatever their status.
   */
  fetch: typeof fetch;
}

export interface HttpClientOptions {
  allowInternal?: boolean;
  /** Default per-request timeout (SYNC_TIMEOUT_MS). */
  timeoutMs?: number;
  fetch?: typeof fetch;
  lookup?: LookupAll;
}

// Header names whose values are credentials; their values are scrubbed from error messages.
const SENSITIVE_HEADER = /authorization|token|api-key|secret|cookie/i;

/** Retry-After as delta-seconds or an HTTP date → milliseconds from `now`. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** The human part of a vendor error body: Vault `errors[]`, GitHub/AWS `message`, Trigger.dev `error`. */
export function vendorMessage(body: unknown): string | undefined {
  if (typeof body === "string") return body.trim() ? body.trim().slice(0, 300) : undefined;
  if (!body || typeof body !== "object") return undefined;
  const b = body as { errors?: unknown; message?: unknown; error?: unknown };
  if (Array.isArray(b.errors) && b.errors.length > 0) return b.errors.map(String).join("; ");
  if (typeof b.message === "string") return b.message;
  if (typeof b.error === "string") return b.error;
  if (b.error && typeof b.error === "object") return vendorMessage(b.error);
  return undefined;
}

/**
 * A DestinationError for a non-2xx response. Also recognises the common "quota exhausted" convention
 * (`x-ratelimit-remaining: 0` on a 403, as GitHub sends) as a rate limit.
 */
export function errorFromResponse(
  res: { status: number; headers: Headers; body: unknown },
  ctx: { what: string; sensitive: readonly string[]; secretKey?: string; now?: number },
): DestinationError {
  const now = ctx.now ?? Date.now();
  let { code, retryable } = codeForStatus(res.status);
  let retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), now);
  if (res.status === 403 && res.headers.get("x-ratelimit-remaining") === "0") {
    code = "RATE_LIMITED";
    retryable = true;
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    if (retryAfterMs === undefined && reset > 0) retryAfterMs = Math.max(0, reset * 1000 - now);
  }
  if (res.status >= 300 && res.status < 400) code = "REJECTED";
  const detail = res.status >= 300 && res.status < 400 ? "unexpected redirect" : vendorMessage(res.body);
  const message = scrub(
    `${ctx.what} failed with HTTP ${res.status}${detail ? `: ${detail}` : ""}`,
    ctx.sensitive,
  );
  return new DestinationError({
    code,
    message,
    retryable,
    status: res.status,
    ...(retryable && retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(ctx.secretKey === undefined ? {} : { secretKey: ctx.secretKey }),
  });
}

/** A DestinationError for a fetch that produced no response (timeout, abort, refused connection). */
export function errorFromFailure(
  err: unknown,
  ctx: { what: string; timedOut: boolean; aborted: boolean; sensitive?: readonly string[] },
): DestinationError {
  if (err instanceof DestinationError) return err;
  let code: DestinationErrorCode = "NETWORK";
  let detail = "network error";
  if (ctx.aborted) {
    code = "ABORTED";
    detail = "aborted";
  } else if (ctx.timedOut || (err as Error | undefined)?.name === "TimeoutError") {
    code = "TIMEOUT";
    detail = "timed out";
  } else {
    const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    detail = cause?.code ?? cause?.message ?? (err as Error | undefined)?.message ?? detail;
  }
  return new DestinationError({
    code,
    message: scrub(`${ctx.what} failed: ${detail}`, ctx.sensitive ?? []),
    retryable: code !== "ABORTED",
    cause: err,
  });
}

function describe(method: string, url: URL): string {
  return `${method} ${url.host}${url.pathname}`;
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json") || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export function createHttpClient(opts: HttpClientOptions = {}): HttpClient {
  const allowInternal = opts.allowInternal ?? false;
  const defaultTimeout = opts.timeoutMs ?? 30_000;
  const baseFetch = opts.fetch ?? globalThis.fetch;

  /** Guard + timeout + caller signal around one fetch; throws DestinationError when there is no response. */
  async function guardedFetch(
    url: URL,
    init: RequestInit,
    o: { timeoutMs?: number; signal?: AbortSignal | null; sensitive?: readonly string[] },
  ): Promise<Response> {
    const what = describe(init.method ?? "GET", url);
    await assertPublicUrl(url, { allowInternal, lookup: opts.lookup });
    const timeout = AbortSignal.timeout(o.timeoutMs ?? defaultTimeout);
    const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
    try {
      // Redirects are not followed: a public host could bounce us to an internal one.
      return await baseFetch(url, { ...init, redirect: "manual", signal });
    } catch (err) {
      throw errorFromFailure(err, {
        what,
        timedOut: timeout.aborted,
        aborted: o.signal?.aborted ?? false,
        sensitive: o.sensitive,
      });
    }
  }

  async function request<T>(req: HttpRequest): Promise<HttpResponse<T>> {
    const method = req.method ?? "GET";
    const url = new URL(req.url);
    for (const [k, v] of Object.entries(req.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));

    const headers: Record<string, string> = { accept: "application/json" };
    const sensitive: string[] = [...(req.redact ?? [])];
    for (const [k, v] of Object.entries(req.headers ?? {})) {
      if (v === undefined) continue;
      headers[k.toLowerCase()] = v;
      if (SENSITIVE_HEADER.test(k)) sensitive.push(v, v.replace(/^(Bearer|token|Basic)\s+/i, ""));
    }
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers["content-type"] ??= "application/json";
      sensitive.push(...stringLeaves(req.json));
    }

    const what = describe(method, url);
    const res = await guardedFetch(url, { method, headers, body }, { ...req, sensitive });
    let data: unknown;
    try {
      data = await readBody(res);
    } catch (err) {
      throw errorFromFailure(err, {
        what,
        timedOut: false,
        aborted: req.signal?.aborted ?? false,
        sensitive,
      });
    }
    const ok = res.status >= 200 && res.status < 300;
    if (!ok && !req.allowStatus?.includes(res.status)) {
      throw errorFromResponse(
        { status: res.status, headers: res.headers, body: data },
        {
          what,
          sensitive,
          secretKey: req.secretKey,
        },
      );
    }
    return { status: res.status, headers: res.headers, data: data as T };
  }

  const sdkFetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const headerValues = Object.entries(Object.fromEntries(new Headers(init?.headers).entries()))
      .filter(([k]) => SENSITIVE_HEADER.test(k))
      .map(([, v]) => v);
    return guardedFetch(url, init ?? {}, { signal: init?.signal, sensitive: headerValues });
  }) as typeof fetch;

  return { allowInternal, timeoutMs: defaultTimeout, request, fetch: sdkFetch };
}

/**
 * Collects every page of a cursor-paged listing. `maxPages` bounds a misbehaving API that never stops
 * returning a cursor.
 */
export async function collectPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: readonly T[]; next?: string | undefined }>,
  opts: { maxPages?: number } = {},
): Promise<T[]> {
  const maxPages = opts.maxPages ?? 1000;
  const all: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { items, next } = await fetchPage(cursor);
    all.push(...items);
    if (!next) return all;
    cursor = next;
  }
  throw new DestinationError({
    code: "REJECTED",
    message: `Listing did not finish after ${maxPages} pages`,
    retryable: false,
  });
}
