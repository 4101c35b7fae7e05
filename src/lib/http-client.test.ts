import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { DestinationError } from "../destinations/errors.js";
import { collectPages, createHttpClient, parseRetryAfter } from "./http-client.js";

/** A client whose fetch answers with `respond` and records what it was asked. */
function clientWith(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const seen: Array<{ url: string; init: RequestInit }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    seen.push({ url: String(input), init: init ?? {} });
    return respond(String(input), init ?? {});
  }) as typeof globalThis.fetch;
  return { http: createHttpClient({ allowInternal: true, fetch, timeoutMs: 200 }), seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

async function failure(p: Promise<unknown>): Promise<DestinationError> {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DestinationError);
  return err as DestinationError;
}

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP dates", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(parseRetryAfter("2", now)).toBe(2000);
    expect(parseRetryAfter("Wed, 01 Jan 2025 00:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Tue, 31 Dec 2024 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("createHttpClient", () => {
  it("sends JSON with query params and parses JSON back", async () => {
    const { http, seen } = clientWith(() => json(200, { ok: true }));
    const res = await http.request<{ ok: boolean }>({
      method: "POST",
      url: "http://api.test/x",
      query: { a: 1, b: undefined },
      json: { k: "v" },
    });
    expect(res.data).toEqual({ ok: true });
    expect(seen[0]?.url).toBe("http://api.test/x?a=1");
    expect(seen[0]?.init.body).toBe('{"k":"v"}');
    expect(seen[0]?.init.redirect).toBe("manual");
  });

  it("classifies 429 as retryable with Retry-After", async () => {
    const { http } = clientWith(() => json(429, { message: "slow down" }, { "retry-after": "3" }));
    const err = await failure(http.request({ url: "http://api.test/x" }));
    expect(err).toMatchObject({ code: "RATE_LIMITED", retryable: true, status: 429, retryAfterMs: 3000 });
    expect(err.message).toContain("slow down");
  });

  it("treats an exhausted rate-limit quota on 403 as a rate limit", async () => {
    const reset = Math.floor(Date.now() / 1000) + 60;
    const { http } = clientWith(() =>
      json(
        403,
        { message: "API rate limit exceeded" },
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
      ),
    );
    const err = await failure(http.request({ url: "http://api.test/x" }));
    expect(err.code).toBe("RATE_LIMITED");
    expect(err.retryAfterMs).toBeGreaterThan(50_000);
  });

  it("classifies 5xx as retryable and other 4xx as final", async () => {
    expect(
      await failure(clientWith(() => json(502, {})).http.request({ url: "http://a.test" })),
    ).toMatchObject({
      code: "UNAVAILABLE",
      retryable: true,
    });
    for (const [status, code] of [
      [400, "REJECTED"],
      [401, "UNAUTHORIZED"],
      [403, "FORBIDDEN"],
      [404, "NOT_FOUND"],
      [422, "REJECTED"],
    ] as const) {
      const err = await failure(
        clientWith(() => json(status, { errors: ["nope"] })).http.request({ url: "http://a.test" }),
      );
      expect(err).toMatchObject({ code, retryable: false, status });
    }
  });

  it("returns allowed statuses instead of throwing", async () => {
    const { http } = clientWith(() => json(404, { errors: [] }));
    await expect(http.request({ url: "http://a.test", allowStatus: [404] })).resolves.toMatchObject({
      status: 404,
    });
  });

  it("does not follow redirects", async () => {
    const { http } = clientWith(
      () => new Response(null, { status: 307, headers: { location: "http://169.254.169.254/" } }),
    );
    const err = await failure(http.request({ url: "http://a.test" }));
    expect(err).toMatchObject({ code: "REJECTED", retryable: false });
    expect(err.message).toContain("unexpected redirect");
  });

  it("scrubs tokens and request values from messages, and attributes the key", async () => {
    const { http } = clientWith(() =>
      json(400, { message: "value 's3cr3t-value!' rejected for token hvs.abcdef123456" }),
    );
    const err = await failure(
      http.request({
        method: "PUT",
        url: "http://a.test/secrets/DB",
        headers: { "X-Vault-Token": "hvs.abcdef123456" },
        json: { value: "s3cr3t-value!" },
        secretKey: "DB",
      }),
    );
    expect(err.message).not.toContain("s3cr3t-value!");
    expect(err.message).not.toContain("abcdef123456");
    expect(err.message).toContain("[redacted]");
    expect(err.secretKey).toBe("DB");
  });

  it("times out a hung request as retryable TIMEOUT, and a caller abort as final ABORTED", async () => {
    const hang = (_u: string, init: RequestInit) =>
      new Promise<Response>((_, reject) => {
        if (init.signal?.aborted) reject(init.signal.reason);
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const { http } = clientWith(hang);
    expect(await failure(http.request({ url: "http://a.test" }))).toMatchObject({
      code: "TIMEOUT",
      retryable: true,
    });
    const ac = new AbortController();
    const p = http.request({ url: "http://a.test", signal: ac.signal, timeoutMs: 5000 });
    ac.abort();
    expect(await failure(p)).toMatchObject({ code: "ABORTED", retryable: false });
  });

  it("reports a refused connection as a retryable network error", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await failure(
      createHttpClient({ allowInternal: true }).request({ url: `http://127.0.0.1:${port}/` }),
    );
    expect(err).toMatchObject({ code: "NETWORK", retryable: true });
  });

  it("guards the SDK fetch too", async () => {
    const http = createHttpClient({ allowInternal: false });
    await expect(http.fetch("http://127.0.0.1:1/")).rejects.toMatchObject({ code: "BLOCKED_ADDRESS" });
  });
});

describe("collectPages", () => {
  it("follows cursors until there is none", async () => {
    const pages: Record<string, { items: number[]; next?: string }> = {
      start: { items: [1, 2], next: "b" },
      b: { items: [3], next: "c" },
      c: { items: [4] },
    };
    expect(await collectPages(async (c) => pages[c ?? "start"] ?? { items: [] })).toEqual([1, 2, 3, 4]);
  });

  it("stops a listing that never ends", async () => {
    await expect(
      collectPages(async () => ({ items: [1], next: "again" }), { maxPages: 3 }),
    ).rejects.toMatchObject({ retryable: false });
  });
});
