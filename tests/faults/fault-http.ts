import type { Json } from "../helpers/fixtures.js";

/**
 * A real HTTP client for fault tests (servers run in child processes or listen on a port): every
 * request has a hard timeout, and a timeout is reported as such instead of throwing, so a test can
 * assert that nothing hung.
 */
export type Reply = { status: number; json: Json; ms: number; timedOut: boolean; error?: string };

export async function request(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? 15_000;
  try {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(opts.body === undefined ? {} : { "content-type": "application/json" }),
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.text();
    let json: Json = {};
    try {
      json = text ? (JSON.parse(text) as Json) : {};
    } catch {
      json = { unparsable: text.slice(0, 200) };
    }
    return { status: r.status, json, ms: Date.now() - started, timedOut: false };
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === "TimeoutError" || e.name === "AbortError";
    // status 0: no HTTP answer at all (connection refused or reset; the process died).
    return { status: 0, json: {}, ms: Date.now() - started, timedOut, error: e.message };
  }
}

/** Like `request`, but anything but the expected status throws with the body. */
export async function must(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; timeoutMs?: number } = {},
  status = 200,
): Promise<Json> {
  const r = await request(base, method, path, opts);
  if (r.status !== status)
    throw new Error(
      `${method} ${path}: expected ${status}, got ${r.status} ${r.error ?? JSON.stringify(r.json)}`,
    );
  return r.json;
}

/** Infisical's error envelope, as every failing request must carry. */
export function isEnvelope(j: Json, status: number): boolean {
  return (
    j.statusCode === status &&
    typeof j.reqId === "string" &&
    typeof j.error === "string" &&
    j.message !== undefined
  );
}

export async function bootstrapOver(base: string): Promise<string> {
  const boot = await must(base, "POST", "/api/v1/admin/bootstrap", {
    body: { email: "faults@example.com", password: "correct horse battery staple", organization: "Faults" },
  });
  return boot.identity.credentials.token as string;
}

export async function until<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
