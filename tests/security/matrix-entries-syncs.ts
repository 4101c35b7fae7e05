import type { SyncTarget } from "../e2e/sync-harness.js";
import { call, type Json, ok } from "../helpers/fixtures.js";
import type { Entry } from "./matrix-entries.js";
import type { MatrixWorld } from "./matrix-fixtures.js";

/**
 * Matrix entries for app connections, secret syncs, event subscriptions and the licence. Connections and
 * syncs point at the behavioural fakes of tests/fakes (started by matrix.test.ts), so the routes that
 * call a destination (connection validation, preview, the sync jobs a trigger enqueues) do real I/O
 * against them. Syncs are created with auto-sync off, so nothing runs unless a route asks for it, and
 * every trigger gets its own sync (a second trigger of a running sync would be a 400).
 */
type M = "GET" | "POST" | "PATCH" | "DELETE";
const rand = () => Math.random().toString(36).slice(2, 9);
const proj = (mw: MatrixWorld) => mw.project.id as string;
const admin = (mw: MatrixWorld, method: M, url: string, body?: unknown): Promise<Json> =>
  ok(call(mw.t.app, method, url, { token: mw.w.adminToken, body }));

function targetsOf(mw: MatrixWorld): SyncTarget[] {
  if (!mw.targets) throw new Error("the matrix world was built without destination fakes");
  return Object.values(mw.targets);
}
const target = (mw: MatrixWorld, slug: string) => {
  const t = targetsOf(mw).find((x) => x.slug === slug);
  if (!t) throw new Error(`no fake for ${slug}`);
  return t;
};

const freshConnection = async (mw: MatrixWorld, t: SyncTarget) =>
  (await admin(mw, "POST", `/api/v1/app-connections/${t.app}`, { name: `c-${rand()}`, ...t.connection }))
    .appConnection as Json;

type Shared = { connection: Json; sync: Json };
const shared = new WeakMap<MatrixWorld, Map<string, Promise<Shared>>>();

const syncBody = (mw: MatrixWorld, t: SyncTarget, connectionId: string) => ({
  name: `s-${rand()}`,
  projectId: proj(mw),
  connectionId,
  environment: "staging",
  secretPath: "/",
  isAutoSyncEnabled: false,
  syncOptions: { initialSyncBehavior: "overwrite-destination" },
  destinationConfig: t.destinationConfig,
});

/** One connection and one sync per destination, for the read and idempotent routes. */
function fixtures(mw: MatrixWorld, slug: string): Promise<Shared> {
  let byDest = shared.get(mw);
  if (!byDest) {
    byDest = new Map();
    shared.set(mw, byDest);
  }
  let p = byDest.get(slug);
  if (!p) {
    p = (async () => {
      const t = target(mw, slug);
      const connection = await freshConnection(mw, t);
      const sync = (await admin(mw, "POST", `/api/v1/secret-syncs/${slug}`, syncBody(mw, t, connection.id)))
        .secretSync as Json;
      return { connection, sync };
    })();
    byDest.set(slug, p);
  }
  return p;
}

async function freshSync(mw: MatrixWorld, slug: string) {
  const { connection } = await fixtures(mw, slug);
  const r = await admin(
    mw,
    "POST",
    `/api/v1/secret-syncs/${slug}`,
    syncBody(mw, target(mw, slug), connection.id),
  );
  return r.secretSync.id as string;
}

const orgAny = { kind: "org-any" } as const;
const orgAdmin = { kind: "org-admin" } as const;
const syncs = (level: "read" | "write") => ({ kind: "project", level, subject: "secret-syncs" }) as const;
/** Another organisation's id is unknown to the caller: 404, as for every cross-tenant id. */
const otherOrgNotFound = { otherOrg: 404 };

export const SYNC_ENTRIES: Record<string, Entry> = {
  "GET /api/v1/app-connections/options": {
    access: orgAny,
    build: () => ({ url: "/api/v1/app-connections/options" }),
  },
  "GET /api/v1/app-connections": { access: orgAny, build: () => ({ url: "/api/v1/app-connections" }) },
  "GET /api/v1/secret-syncs/options": {
    access: orgAny,
    build: () => ({ url: "/api/v1/secret-syncs/options" }),
  },
  "GET /api/v1/secret-syncs": {
    access: syncs("read"),
    build: (mw) => ({ url: `/api/v1/secret-syncs?projectId=${proj(mw)}` }),
  },
  "GET /api/v1/license": { access: orgAny, build: () => ({ url: "/api/v1/license" }) },
  "POST /api/v1/events/subscribe/project-events": {
    access: { kind: "project", level: "read", subject: "secret-events", devApp: true },
    // The matrix app has no licence: a caller who passes the permission checks gets the plan's 400
    // (checked after them), so no stream is ever opened here.
    ok: 400,
    build: (mw) => ({
      url: "/api/v1/events/subscribe/project-events",
      body: {
        projectId: proj(mw),
        register: [
          { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/app/shared" } },
        ],
      },
    }),
  },
};
const add = (route: string, e: Entry) => {
  SYNC_ENTRIES[route] = e;
};

// ---- app connections, one set of routes per connection app (organisation resources) ----
for (const [slug, app] of [
  ["hashicorp-vault", "hashicorp-vault"],
  ["trigger-dev", "trigger-dev"],
  ["github", "github"],
  ["aws-parameter-store", "aws"],
] as const) {
  const base = `/api/v1/app-connections/${app}`;
  const conn = async (mw: MatrixWorld) => (await fixtures(mw, slug)).connection;
  add(`GET ${base}`, { access: orgAny, build: () => ({ url: base }) });
  add(`GET ${base}/available`, { access: orgAny, build: () => ({ url: `${base}/available` }) });
  add(`GET ${base}/:connectionId`, {
    access: orgAny,
    override: otherOrgNotFound,
    build: async (mw) => ({ url: `${base}/${(await conn(mw)).id}` }),
  });
  add(`GET ${base}/connection-name/:connectionName`, {
    access: orgAny,
    override: otherOrgNotFound,
    build: async (mw) => ({ url: `${base}/connection-name/${(await conn(mw)).name}` }),
  });
  add(`POST ${base}`, {
    access: orgAdmin,
    override: { otherOrg: 200 }, // an admin of another organisation creates it in their own organisation
    build: (mw) => ({ url: base, body: { name: `n-${rand()}`, ...target(mw, slug).connection } }),
  });
  add(`PATCH ${base}/:connectionId`, {
    access: orgAdmin,
    build: async (mw) => ({ url: `${base}/${(await conn(mw)).id}`, body: { description: "d" } }),
  });
  add(`DELETE ${base}/:connectionId`, {
    access: orgAdmin,
    build: async (mw) => ({ url: `${base}/${(await freshConnection(mw, target(mw, slug))).id}` }),
  });
}

// ---- secret syncs, one set of routes per destination ----
for (const slug of ["hashicorp-vault", "trigger-dev", "github", "aws-parameter-store"] as const) {
  const base = `/api/v1/secret-syncs/${slug}`;
  const sync = async (mw: MatrixWorld) => (await fixtures(mw, slug)).sync;
  add(`GET ${base}`, { access: syncs("read"), build: (mw) => ({ url: `${base}?projectId=${proj(mw)}` }) });
  add(`GET ${base}/:syncId`, {
    access: syncs("read"),
    build: async (mw) => ({ url: `${base}/${(await sync(mw)).id}` }),
  });
  add(`GET ${base}/sync-name/:syncName`, {
    access: syncs("read"),
    build: async (mw) => ({ url: `${base}/sync-name/${(await sync(mw)).name}?projectId=${proj(mw)}` }),
  });
  add(`POST ${base}`, {
    access: syncs("write"),
    build: async (mw) => ({
      url: base,
      body: syncBody(mw, target(mw, slug), (await fixtures(mw, slug)).connection.id),
    }),
  });
  add(`PATCH ${base}/:syncId`, {
    access: syncs("write"),
    build: async (mw) => ({ url: `${base}/${(await sync(mw)).id}`, body: { description: "d" } }),
  });
  add(`DELETE ${base}/:syncId`, {
    access: syncs("write"),
    build: async (mw) => ({ url: `${base}/${await freshSync(mw, slug)}` }),
  });
  add(`POST ${base}/:syncId/sync-secrets`, {
    access: syncs("write"),
    build: async (mw) => ({ url: `${base}/${await freshSync(mw, slug)}/sync-secrets` }),
  });
  add(`POST ${base}/:syncId/remove-secrets`, {
    access: syncs("write"),
    build: async (mw) => ({ url: `${base}/${await freshSync(mw, slug)}/remove-secrets` }),
  });
  const canImport = slug === "hashicorp-vault" || slug === "aws-parameter-store";
  add(`POST ${base}/:syncId/import-secrets`, {
    access: syncs("write"),
    // Destinations that cannot import refuse the route itself, before any lookup: the same 400 for
    // every signed-in caller, which reveals nothing about the sync.
    override: canImport
      ? undefined
      : { otherOrg: 400, noAccess: 400, viewer: 400, member: 400, customApp: 400, admin: 400, orgAdmin: 400 },
    build: async (mw) => ({
      url: `${base}/${await freshSync(mw, slug)}/import-secrets?importBehavior=prioritize-source`,
    }),
  });
  add(`POST ${base}/:syncId/preview`, {
    access: syncs("read"),
    build: async (mw) => ({ url: `${base}/${(await sync(mw)).id}/preview` }),
  });
  add(`POST ${base}/check-destination`, {
    access: syncs("read"),
    build: (mw) => ({
      url: `${base}/check-destination`,
      body: { projectId: proj(mw), destinationConfig: target(mw, slug).destinationConfig },
    }),
  });
}
