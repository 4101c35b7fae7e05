import { call, type Json, ok } from "../helpers/fixtures.js";
import type { Entry } from "./matrix-entries.js";
import type { MatrixWorld } from "./matrix-fixtures.js";

/**
 * Matrix entries for the data plane: environments, folders, tags, secret imports and secrets. Everything
 * targets the matrix project's `dev` environment under `/app/…`, the custom role's reach, so the
 * `devApp` rule applies where the subject is secrets or folders. Read routes share fixtures created once;
 * destructive routes get a fresh resource per caller (created by the admin over the HTTP API).
 */
type M = "GET" | "POST" | "PATCH" | "DELETE";
const rand = () => Math.random().toString(36).slice(2, 9);
const proj = (mw: MatrixWorld) => mw.project.id as string;
const admin = (mw: MatrixWorld, method: M, url: string, body?: unknown): Promise<Json> =>
  ok(call(mw.t.app, method, url, { token: mw.w.adminToken, body }));

const SHARED_PATH = "/app/shared";
const SHARED_KEY = "SHARED_KEY";

type Shared = {
  envId: string;
  folderId: string;
  secretId: string;
  tagId: string;
  tagSlug: string;
  importId: string;
};
const shared = new WeakMap<MatrixWorld, Promise<Shared>>();

/** Fixtures for read (and idempotent write) routes, created once per matrix world. */
function fixtures(mw: MatrixWorld): Promise<Shared> {
  let p = shared.get(mw);
  if (!p) {
    p = (async () => {
      const pid = proj(mw);
      const env = await admin(mw, "POST", `/api/v1/projects/${pid}/environments`, {
        name: "Matrix",
        slug: "matrix",
      });
      const folder = await admin(mw, "POST", "/api/v2/folders", {
        projectId: pid,
        environment: "dev",
        path: "/app",
        name: "shared",
      });
      const secret = await admin(mw, "POST", `/api/v4/secrets/${SHARED_KEY}`, {
        projectId: pid,
        environment: "dev",
        secretPath: SHARED_PATH,
        secretValue: "v",
      });
      const tag = await admin(mw, "POST", `/api/v1/projects/${pid}/tags`, {
        slug: "matrix-tag",
        color: "#fff",
      });
      const imp = await admin(mw, "POST", "/api/v2/secret-imports", {
        projectId: pid,
        environment: "dev",
        path: SHARED_PATH,
        import: { environment: "staging", path: "/" },
      });
      return {
        envId: env.environment.id,
        folderId: folder.folder.id,
        secretId: secret.secret.id,
        tagId: tag.tag.id,
        tagSlug: tag.tag.slug,
        importId: imp.secretImport.id,
      };
    })();
    shared.set(mw, p);
  }
  return p;
}

/** A fresh folder `dev:/app/sub/<name>`. */
async function freshFolder(mw: MatrixWorld) {
  const r = await admin(mw, "POST", "/api/v2/folders", {
    projectId: proj(mw),
    environment: "dev",
    path: "/app/sub",
    name: `f-${rand()}`,
  });
  return { id: r.folder.id as string, path: r.folder.path as string };
}

async function freshSecret(mw: MatrixWorld) {
  const key = `K_${rand().toUpperCase()}`;
  await admin(mw, "POST", `/api/v4/secrets/${key}`, {
    projectId: proj(mw),
    environment: "dev",
    secretPath: SHARED_PATH,
    secretValue: "v",
  });
  return key;
}

const project = (level: "read" | "write", subject: string, devApp = false) =>
  ({ kind: "project", level, subject, devApp }) as const;

export const DATA_ENTRIES: Record<string, Entry> = {};
const add = (route: string, e: Entry) => {
  DATA_ENTRIES[route] = e;
};

// ---- environments (both prefixes; the workspace copy is what the Node SDK and Terraform call) ----
for (const prefix of ["/api/v1/projects", "/api/v1/workspace"]) {
  const base = (mw: MatrixWorld) => `${prefix}/${proj(mw)}/environments`;
  const r = `${prefix}/:projectId/environments`;
  const freshEnv = async (mw: MatrixWorld) =>
    (await admin(mw, "POST", base(mw), { name: "Tmp", slug: `tmp-${rand()}` })).environment.id as string;
  add(`POST ${r}`, {
    access: project("write", "environments"),
    build: (mw) => ({ url: base(mw), body: { name: "New", slug: `e-${rand()}` } }),
  });
  add(`PATCH ${r}/:envId`, {
    access: project("write", "environments"),
    build: async (mw) => ({ url: `${base(mw)}/${(await fixtures(mw)).envId}`, body: { name: "Matrix" } }),
  });
  add(`DELETE ${r}/:envId`, {
    access: project("write", "environments"),
    build: async (mw) => ({ url: `${base(mw)}/${await freshEnv(mw)}` }),
  });
  add(`GET ${r}/:envId`, {
    access: project("read", "environments"),
    build: async (mw) => ({ url: `${base(mw)}/${(await fixtures(mw)).envId}` }),
  });
  add(`GET ${r}/slug/:envSlug`, {
    access: project("read", "environments"),
    build: (mw) => ({ url: `${base(mw)}/slug/dev` }),
  });
}
add("GET /api/v1/workspace/environments/:envId", {
  access: project("read", "environments"),
  build: async (mw) => ({ url: `/api/v1/workspace/environments/${(await fixtures(mw)).envId}` }),
});

// ---- folders: v1 (workspaceId) and v2 (projectId). Listing and reading folders needs project
// membership only ("folder list is allowed to be read by anyone" in Infisical), hence subject "project".
for (const [v, key] of [
  ["v1", "workspaceId"],
  ["v2", "projectId"],
] as const) {
  const base = `/api/${v}/folders`;
  const scope = (mw: MatrixWorld, path: string) => ({ [key]: proj(mw), environment: "dev", path });
  add(`POST ${base}`, {
    access: project("write", "secret-folders", true),
    build: (mw) => ({ url: base, body: { ...scope(mw, "/app/sub"), name: `n-${rand()}` } }),
  });
  add(`GET ${base}`, {
    access: project("read", "project"),
    build: (mw) => ({ url: `${base}?${key}=${proj(mw)}&environment=dev&path=/app` }),
  });
  add(`GET ${base}/:id`, {
    access: project("read", "project"),
    build: async (mw) => ({ url: `${base}/${(await fixtures(mw)).folderId}` }),
  });
  add(`PATCH ${base}/:folderId`, {
    access: project("write", "secret-folders", true),
    build: async (mw) => ({
      url: `${base}/${(await freshFolder(mw)).id}`,
      body: { ...scope(mw, "/app/sub"), name: `r-${rand()}` },
    }),
  });
  add(`DELETE ${base}/:folderIdOrName`, {
    access: project("write", "secret-folders", true),
    build: async (mw) => ({ url: `${base}/${(await freshFolder(mw)).id}`, body: scope(mw, "/app/sub") }),
  });
}
add("GET /api/v1/folders/:projectId/:environment/:path", {
  access: project("read", "project"),
  build: (mw) => ({ url: `/api/v1/folders/${proj(mw)}/dev/${encodeURIComponent(SHARED_PATH)}` }),
});

// ---- tags: `tag(s)` under projects, `workspaceTag(s)` under workspace ----
for (const prefix of ["/api/v1/projects", "/api/v1/workspace"]) {
  const base = (mw: MatrixWorld) => `${prefix}/${proj(mw)}/tags`;
  const r = `${prefix}/:projectId/tags`;
  const freshTag = async (mw: MatrixWorld) =>
    (await admin(mw, "POST", `/api/v1/projects/${proj(mw)}/tags`, { slug: `t-${rand()}`, color: "#000" })).tag
      .id as string;
  add(`GET ${r}`, { access: project("read", "tags"), build: (mw) => ({ url: base(mw) }) });
  add(`GET ${r}/:tagId`, {
    access: project("read", "tags"),
    build: async (mw) => ({ url: `${base(mw)}/${(await fixtures(mw)).tagId}` }),
  });
  add(`GET ${r}/slug/:tagSlug`, {
    access: project("read", "tags"),
    build: async (mw) => ({ url: `${base(mw)}/slug/${(await fixtures(mw)).tagSlug}` }),
  });
  add(`POST ${r}`, {
    access: project("write", "tags"),
    build: (mw) => ({ url: base(mw), body: { slug: `n-${rand()}`, color: "#abc" } }),
  });
  add(`PATCH ${r}/:tagId`, {
    access: project("write", "tags"),
    build: async (mw) => ({
      url: `${base(mw)}/${await freshTag(mw)}`,
      body: { slug: `u-${rand()}`, color: "" },
    }),
  });
  add(`DELETE ${r}/:tagId`, {
    access: project("write", "tags"),
    build: async (mw) => ({ url: `${base(mw)}/${await freshTag(mw)}` }),
  });
}

// ---- secret imports: v1 (workspaceId) and v2 (projectId) ----
for (const [v, key] of [
  ["v1", "workspaceId"],
  ["v2", "projectId"],
] as const) {
  const base = `/api/${v}/secret-imports`;
  const scope = (mw: MatrixWorld, path: string) => ({ [key]: proj(mw), environment: "dev", path });
  const source = { environment: "staging", path: "/" };
  const freshImport = async (mw: MatrixWorld) => {
    const f = await freshFolder(mw);
    const r = await admin(mw, "POST", base, { ...scope(mw, f.path), import: source });
    return { id: r.secretImport.id as string, path: f.path };
  };
  add(`POST ${base}`, {
    access: project("write", "secret-imports"),
    build: async (mw) => ({
      url: base,
      body: { ...scope(mw, (await freshFolder(mw)).path), import: source },
    }),
  });
  add(`PATCH ${base}/:secretImportId`, {
    access: project("write", "secret-imports"),
    build: async (mw) => ({
      url: `${base}/${(await fixtures(mw)).importId}`,
      body: { ...scope(mw, SHARED_PATH), import: { position: 1 } },
    }),
  });
  add(`DELETE ${base}/:secretImportId`, {
    access: project("write", "secret-imports"),
    build: async (mw) => {
      const i = await freshImport(mw);
      return { url: `${base}/${i.id}`, body: scope(mw, i.path) };
    },
  });
  add(`GET ${base}`, {
    access: project("read", "secret-imports"),
    build: (mw) => ({ url: `${base}?${key}=${proj(mw)}&environment=dev&path=${SHARED_PATH}` }),
  });
  add(`GET ${base}/:secretImportId`, {
    access: project("read", "secret-imports"),
    build: async (mw) => ({ url: `${base}/${(await fixtures(mw)).importId}` }),
  });
}

// ---- secrets: v3 raw (workspaceId) and v4 (projectId), single and batch ----
for (const [base, batch, key] of [
  ["/api/v3/secrets/raw", "/api/v3/secrets/batch/raw", "workspaceId"],
  ["/api/v4/secrets", "/api/v4/secrets/batch", "projectId"],
] as const) {
  const scope = (mw: MatrixWorld) => ({ [key]: proj(mw), environment: "dev", secretPath: SHARED_PATH });
  const query = (mw: MatrixWorld) => `${key}=${proj(mw)}&environment=dev&secretPath=${SHARED_PATH}`;
  const read = project("read", "secrets", true);
  const write = project("write", "secrets", true);
  add(`GET ${base}`, { access: read, build: (mw) => ({ url: `${base}?${query(mw)}` }) });
  add(`GET ${base}/id/:secretId`, {
    access: read,
    build: async (mw) => ({ url: `${base}/id/${(await fixtures(mw)).secretId}` }),
  });
  add(`GET ${base}/:secretName`, {
    access: read,
    build: (mw) => ({ url: `${base}/${SHARED_KEY}?${query(mw)}` }),
  });
  add(`POST ${base}/:secretName`, {
    access: write,
    build: (mw) => ({ url: `${base}/N_${rand().toUpperCase()}`, body: { ...scope(mw), secretValue: "v" } }),
  });
  add(`PATCH ${base}/:secretName`, {
    access: write,
    build: async (mw) => {
      await fixtures(mw);
      return { url: `${base}/${SHARED_KEY}`, body: { ...scope(mw), secretValue: "v2" } };
    },
  });
  add(`DELETE ${base}/:secretName`, {
    access: write,
    build: async (mw) => ({ url: `${base}/${await freshSecret(mw)}`, body: scope(mw) }),
  });
  add(`POST ${batch}`, {
    access: write,
    build: (mw) => ({
      url: batch,
      body: { ...scope(mw), secrets: [{ secretKey: `B_${rand().toUpperCase()}`, secretValue: "v" }] },
    }),
  });
  add(`PATCH ${batch}`, {
    access: write,
    build: async (mw) => {
      await fixtures(mw);
      return { url: batch, body: { ...scope(mw), secrets: [{ secretKey: SHARED_KEY, secretValue: "v3" }] } };
    },
  });
  add(`DELETE ${batch}`, {
    access: write,
    build: async (mw) => ({
      url: batch,
      body: { ...scope(mw), secrets: [{ secretKey: await freshSecret(mw) }] },
    }),
  });
}
