import { afterAll, describe, expect, it } from "vitest";
import { startTargets, targetEnv } from "../e2e/sync-harness.js";
import { buildTestApp } from "../helpers/build-test-app.js";
import { bootstrap, call } from "../helpers/fixtures.js";
import { type Access, ENTRIES } from "./matrix-entries.js";
import { buildMatrixWorld, CALLERS, type Caller } from "./matrix-fixtures.js";

/**
 * The authorization matrix: every route of the route table × every kind of caller → the expected
 * status. Adding a route without an entry in matrix-entries.ts fails this suite.
 */
// Connections and syncs point at the destination fakes (AWS and GitHub endpoints come from config).
const targets = await startTargets();
const t = await buildTestApp({ env: targetEnv(targets) });
const w = await bootstrap(t.app);
const mw = await buildMatrixWorld(t, w, targets);
const routes = t.routes.filter((r) => !r.url.startsWith("/api/docs")).map((r) => `${r.method} ${r.url}`);
let requests = 0;

afterAll(async () => {
  console.log(
    `authorization matrix: ${requests} requests over ${routes.length} routes × ${CALLERS.length} callers`,
  );
  await t.close();
  await Promise.all(Object.values(targets).map((x) => x.fake.close()));
});

/** Expected statuses derived from a route's access rule. */
function expected(access: Access, caller: Caller, okStatus: number): number {
  if (access.kind === "public") return okStatus;
  const authFailure: Partial<Record<Caller, number>> = {
    none: 401,
    malformed: 403,
    expired: 403,
    revoked: 401,
    deletedIdentity: 401,
  };
  const fail = authFailure[caller];
  if (fail) return fail;
  if (access.kind === "org-any") return okStatus;
  if (access.kind === "org-admin")
    return caller === "orgAdmin" ? okStatus : caller === "otherOrg" ? 404 : 403;
  // Project-scoped: another organisation never learns the project exists.
  if (caller === "otherOrg") return 404;
  if (caller === "admin" || caller === "orgAdmin") return okStatus;
  if (caller === "noAccess") return access.subject === "project" ? okStatus : 403;
  if (access.level === "manage") return 403;
  if (caller === "customApp") {
    const scoped = ["secrets", "secret-folders", "secret-events"].includes(access.subject) && access.devApp;
    return scoped || access.subject === "project" ? okStatus : 403;
  }
  if (access.level === "read") return okStatus;
  return caller === "member" ? okStatus : 403;
}

describe("authorization matrix", () => {
  it("has an entry for every route, and no entry for a route that does not exist", () => {
    const missing = routes.filter((r) => !ENTRIES[r]);
    const stale = Object.keys(ENTRIES).filter((k) => !routes.includes(k));
    expect(missing, "routes without a matrix entry").toEqual([]);
    expect(stale, "matrix entries for routes that do not exist").toEqual([]);
  });

  for (const route of routes) {
    const entry = ENTRIES[route];
    if (!entry) continue;
    const method = route.split(" ")[0] as "GET" | "POST" | "PATCH" | "DELETE";
    it(route, { timeout: 120_000 }, async () => {
      const got: Record<string, number> = {};
      const want: Record<string, number> = {};
      for (const caller of CALLERS) {
        const req = await entry.build(mw, caller);
        const res = await call(t.app, method, req.url, { token: mw.tokens[caller], body: req.body });
        requests++;
        got[caller] = res.status;
        want[caller] = entry.override?.[caller] ?? expected(entry.access, caller, entry.ok ?? 200);
      }
      expect(got).toEqual(want);
    });
  }
});
