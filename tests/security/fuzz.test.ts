import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { ZodTypeAny } from "zod";
import { buildTestApp } from "../helpers/build-test-app.js";
import { bootstrap, call, makeIdentity, makeProject, ok } from "../helpers/fixtures.js";
import { hostile, paramValue, valid } from "./zod-arbitrary.js";

/**
 * Property-based fuzzing of every route in the route table: bodies, queries and params generated from
 * each route's own zod schemas, valid-ish and hostile (wrong types, huge strings, deep nesting, unicode,
 * path traversal, prototype-pollution keys, malformed and oversized bodies). Properties: never a 5xx,
 * never a hang, every error in the envelope, and the server healthy afterwards.
 */
const TARGET_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const t = await buildTestApp({ env: { SYNC_TIMEOUT_MS: "300", ALLOW_INTERNAL_DESTINATIONS: "false" } });
const w = await bootstrap(t.app);
const member = await makeIdentity(t.app, w, "fuzz-member");
const project = await makeProject(t.app, w.adminToken, "Fuzzed");
await ok(
  call(t.app, "POST", `/api/v2/workspace/${project.id}/identity-memberships/${member.id}`, {
    token: w.adminToken,
    body: { role: "member" },
  }),
);
const routes = t.routes.filter((r) => !r.url.startsWith("/api/docs"));
const perRoute = Math.ceil(TARGET_REQUESTS / routes.length / 2);
let sent = 0;
const statuses = new Map<number, number>();

afterAll(async () => {
  console.log(
    `fuzz: ${sent} requests over ${routes.length} routes; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  await t.close();
});

const REAL: Record<string, string> = {
  projectId: project.id,
  workspaceId: project.id,
  identityId: member.id,
};

/**
 * Half of the valid-ish bodies and queries name the real project (and an existing environment), so they
 * get past the project lookup and reach the handlers' deeper code and the database.
 */
const REAL_FIELDS: Record<string, string> = { ...REAL, environment: "dev" };
const grounded = (arb: fc.Arbitrary<unknown>) =>
  fc.tuple(arb, fc.boolean()).map(([v, ground]) => {
    if (!ground || !v || typeof v !== "object" || Array.isArray(v)) return v;
    const o = { ...(v as Record<string, unknown>) };
    for (const k of Object.keys(o)) if (REAL_FIELDS[k] !== undefined) o[k] = REAL_FIELDS[k];
    return o;
  });

function urlFor(template: string, params: Record<string, string>) {
  return template.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => params[name] ?? "x");
}

const paramNames = (url: string) => [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);

async function send(method: string, url: string, token: string | undefined, payload: unknown, raw?: string) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (raw !== undefined || payload !== undefined) headers["content-type"] = "application/json";
  const body = raw ?? (payload === undefined ? undefined : JSON.stringify(payload));
  let timer: NodeJS.Timeout | undefined;
  const res = await Promise.race([
    t.app.inject({ method: method as "GET", url, headers, payload: body }),
    new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`hang: ${method} ${url}`)), 15_000);
    }),
  ]).finally(() => clearTimeout(timer));
  sent++;
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  return res;
}

function checkResponse(res: Awaited<ReturnType<typeof send>>, what: string) {
  expect(res.statusCode, `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode >= 400) {
    const j = res.json() as Record<string, unknown>;
    expect(j, what).toMatchObject({ statusCode: res.statusCode });
    expect(typeof j.reqId, what).toBe("string");
    expect(typeof j.error, what).toBe("string");
    expect(j.message, what).toBeDefined();
  }
}

describe("fuzz every route", () => {
  for (const r of routes) {
    const s = r.schema ?? {};
    const names = paramNames(r.url);
    const params = fc.record(
      Object.fromEntries(
        names.map((n) => [n, REAL[n] ? fc.oneof(fc.constant(REAL[n] as string), paramValue) : paramValue]),
      ),
    ) as fc.Arbitrary<Record<string, string>>;
    const query = s.querystring ? grounded(valid(s.querystring as ZodTypeAny)) : fc.constant({});
    const token = fc.constantFrom<string | undefined>(
      w.adminToken,
      w.adminToken,
      member.token,
      undefined,
      "garbage",
    );

    it(`${r.method} ${r.url}`, { timeout: 300_000 }, async () => {
      // Valid-ish requests reach handlers and the database.
      await fc.assert(
        fc.asyncProperty(
          params,
          query,
          s.body ? grounded(valid(s.body as ZodTypeAny)) : fc.constant(undefined),
          token,
          async (p, q, b, tok) => {
            const qs = new URLSearchParams(
              Object.entries((q ?? {}) as Record<string, unknown>).flatMap(([k, v]): [string, string][] =>
                v === undefined ? [] : [[k, String(v)]],
              ),
            ).toString();
            const url = urlFor(r.url, p) + (qs ? `?${qs}` : "");
            checkResponse(
              await send(r.method, url, tok, r.method === "GET" ? undefined : b),
              `${r.method} ${url}`,
            );
          },
        ),
        { numRuns: perRoute },
      );
      // Hostile bodies, queries and raw payloads.
      await fc.assert(
        fc.asyncProperty(
          params,
          hostile(s.body as ZodTypeAny | undefined),
          fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 50 }), { maxKeys: 4 }),
          fc.option(
            fc.constantFrom('{"a":', "[", "\u0000", '{"__proto__":{"admin":true}}', "x".repeat(1_100_000)),
            { nil: undefined },
          ),
          async (p, b, q, raw) => {
            const qs = new URLSearchParams(q).toString();
            const url = urlFor(r.url, p) + (qs ? `?${qs}` : "");
            checkResponse(
              await send(
                r.method,
                url,
                w.adminToken,
                r.method === "GET" ? undefined : b,
                r.method === "GET" ? undefined : raw,
              ),
              `${r.method} ${url}`,
            );
          },
        ),
        { numRuns: perRoute },
      );
    });
  }

  it("leaves the server healthy and nothing polluted", async () => {
    expect((await call(t.app, "GET", "/api/status")).status).toBe(200);
    const list = await call(t.app, "GET", "/api/v1/projects", { token: w.adminToken });
    expect(list.status).toBe(200);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(sent).toBeGreaterThanOrEqual(TARGET_REQUESTS);
  });
});
