import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { Agent, request } from "undici";
import { REPO_ROOT, type ServerChild, startServer } from "./procs.js";

/**
 * Ferry under test: a real `src/main.ts` child process, and the client calls the benchmark needs to set
 * it up the way a user would (bootstrap → machine identity → universal-auth login → project → secrets
 * seeded through the batch route).
 */

export interface FerryEnv {
  /** Set to share one database (PostgreSQL) between instances; unset: PGlite in dataDir. */
  databaseUrl?: string;
  redisUrl?: string;
  dataDir: string;
  extra?: Record<string, string>;
}

/** One licence, keys and secrets for the whole benchmark run (instances of one run must share them). */
export async function runSecrets(): Promise<Record<string, string>> {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const licence = await new SignJWT({ plan: "enterprise" })
    .setProtectedHeader({ alg: "EdDSA" })
    .setSubject("ferry-bench")
    .setIssuedAt()
    .sign(privateKey);
  return {
    LICENSE_KEY: licence,
    LICENSE_PUBLIC_KEY: publicKey.export({ type: "spki", format: "pem" }).toString(),
    ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    AUTH_SECRET: randomBytes(48).toString("base64url"),
    // Own pub/sub channel: other users of the same Redis never see our events, nor we theirs.
    SSE_REDIS_CHANNEL: `ferry-bench:${randomBytes(6).toString("hex")}`,
  };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * The node flags of `npm start` (everything between `node` and `src/main.ts`, such as the young
 * generation's size), so that the benchmark runs Ferry exactly as a user starts it.
 */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  const [cmd, ...args] = pkg.scripts.start.trim().split(/\s+/);
  const script = args.pop();
  if (cmd !== "node" || script !== "src/main.ts") {
    throw new Error(`package.json "start" is not "node <flags> src/main.ts": ${pkg.scripts.start}`);
  }
  return args;
}

export async function startFerry(
  name: string,
  e: FerryEnv,
  secrets: Record<string, string>,
  cpuProfDir?: string,
): Promise<ServerChild> {
  return startServer({
    name,
    script: join(REPO_ROOT, "src/main.ts"),
    nodeFlags: startNodeFlags(),
    readyPath: "/api/status",
    cpuProfDir,
    inspect: true,
    env: {
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      DATA_DIR: e.dataDir,
      DATABASE_URL: e.databaseUrl,
      DB_CONNECTION_URI: undefined,
      REDIS_URL: e.redisUrl,
      // The benchmark measures the service, not its abuse limits.
      RATE_LIMIT_AUTH_PER_MINUTE: "0",
      RATE_LIMIT_READ_PER_MINUTE: "0",
      RATE_LIMIT_WRITE_PER_MINUTE: "0",
      SSE_MAX_CONNECTIONS_PER_PROJECT: "100000",
      ALLOW_INTERNAL_DESTINATIONS: "true",
      ...secrets,
      ...e.extra,
    },
  });
}

/** Keep-alive connections for the setup calls and the writer (one socket reused, as a real client). */
const agent = new Agent({ connections: 8, keepAliveTimeout: 60_000 });

export async function api<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<T> {
  const res = await request(base + path, {
    method: method as "GET",
    dispatcher: agent,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path} → ${res.statusCode}: ${text.slice(0, 400)}`);
  return (text ? JSON.parse(text) : {}) as T;
}

export interface World {
  base: string;
  token: string;
  adminToken: string;
  orgId: string;
  projectId: string;
}

// biome-ignore lint/suspicious/noExplicitAny: response JSON, read field by field
type J = Record<string, any>;

/** The README walk-through: bootstrap, an identity with universal auth, its login, its project. */
export async function setupWorld(base: string): Promise<World> {
  const boot = await api<J>(base, "POST", "/api/v1/admin/bootstrap", {
    email: "bench@example.com",
    password: "bench-password-1",
    organization: "Bench",
  });
  const adminToken = boot.identity.credentials.token as string;
  const orgId = boot.organization.id as string;
  const ident = await api<J>(
    base,
    "POST",
    "/api/v1/identities",
    { name: "bench", organizationId: orgId, role: "member" },
    adminToken,
  );
  const id = ident.identity.id as string;
  const ua = await api<J>(base, "POST", `/api/v1/auth/universal-auth/identities/${id}`, {}, adminToken);
  const cs = await api<J>(
    base,
    "POST",
    `/api/v1/auth/universal-auth/identities/${id}/client-secrets`,
    {},
    adminToken,
  );
  const login = await api<J>(base, "POST", "/api/v1/auth/universal-auth/login", {
    clientId: ua.identityUniversalAuth.clientId,
    clientSecret: cs.clientSecret,
  });
  const token = login.accessToken as string;
  const project = await api<J>(base, "POST", "/api/v2/workspace", { projectName: "Bench" }, token);
  return { base, token, adminToken, orgId, projectId: project.project.id as string };
}

/** Creates `names` in one environment/path through the v4 batch route, `batch` at a time. */
export async function seedSecrets(
  w: World,
  environment: string,
  secretPath: string,
  names: readonly string[],
  value: (name: string) => string,
  batch = 500,
): Promise<void> {
  for (let i = 0; i < names.length; i += batch) {
    const secrets = names
      .slice(i, i + batch)
      .map((secretKey) => ({ secretKey, secretValue: value(secretKey) }));
    await api(
      w.base,
      "POST",
      "/api/v4/secrets/batch",
      { projectId: w.projectId, environment, secretPath, secrets },
      w.token,
    );
  }
}

/** PATCH one secret's value (the SDK's update call), as the event writer does. */
export async function updateSecret(
  w: World,
  environment: string,
  name: string,
  secretValue: string,
): Promise<void> {
  await api(
    w.base,
    "PATCH",
    `/api/v3/secrets/raw/${encodeURIComponent(name)}`,
    { workspaceId: w.projectId, environment, secretPath: "/", secretValue },
    w.token,
  );
}

export async function closeAgent(): Promise<void> {
  await agent.close();
}
