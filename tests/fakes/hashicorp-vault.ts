import { randomUUID } from "node:crypto";
import { FakeDestination, type FakeRequest, type FakeResponse } from "./fake-destination.js";

/**
 * HashiCorp Vault: KV v1 and v2 mounts, sys/mounts, the UI preflight mount endpoint, AppRole login and
 * token lookup-self. Bad or missing tokens get Vault's real answer: 403 {"errors":["permission denied"]}.
 * Scope for seed/read: "<mount>/<path>" (e.g. "secret/app/prod").
 */

export interface FakeVaultOptions {
  token?: string;
  roleId?: string;
  secretId?: string;
  /** mount name → KV version. */
  mounts?: Record<string, 1 | 2>;
  /** When set, every request must carry this X-Vault-Namespace. */
  namespace?: string;
  /** Tokens scoped to a mount cannot read sys/mounts: the adapter must fall back. */
  sysMountsForbidden?: boolean;
}

interface Entry {
  data: Record<string, unknown>;
  version: number;
}

const denied: FakeResponse = { status: 403, body: { errors: ["permission denied"] } };
const notFound: FakeResponse = { status: 404, body: { errors: [] } };

export class FakeVault extends FakeDestination {
  readonly token: string;
  readonly roleId: string;
  readonly secretId: string;
  readonly mounts: Record<string, 1 | 2>;
  private readonly tokens = new Set<string>();
  private readonly entries = new Map<string, Entry>();

  constructor(readonly options: FakeVaultOptions = {}) {
    super();
    this.token = options.token ?? "hvs.fake-root-token";
    this.roleId = options.roleId ?? "fake-role-id";
    this.secretId = options.secretId ?? "fake-secret-id";
    this.mounts = options.mounts ?? { secret: 2, kv: 1 };
    this.tokens.add(this.token);
  }

  seed(scope: string, entries: Record<string, string>): void {
    const current = this.entries.get(scope);
    this.entries.set(scope, { data: { ...current?.data, ...entries }, version: (current?.version ?? 0) + 1 });
  }

  read(scope: string): Record<string, string> {
    const data = this.entries.get(scope)?.data ?? {};
    return Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
    );
  }

  /** Whether an entry exists at all (KV v1 deletes the entry when it would be empty). */
  has(scope: string): boolean {
    return this.entries.has(scope);
  }

  protected clear(): void {
    this.entries.clear();
  }

  protected isWrite(req: FakeRequest): boolean {
    return req.method !== "GET" && !req.path.startsWith("/v1/auth/") && !req.path.startsWith("/v1/sys/");
  }

  protected failure(status: number): FakeResponse {
    const message =
      status === 429 ? 'request path "kv/": rate limit quota exceeded' : `fake failure ${status}`;
    return { status, body: { errors: [message] } };
  }

  protected route(req: FakeRequest): FakeResponse {
    if (this.options.namespace && req.headers["x-vault-namespace"] !== this.options.namespace) return denied;
    const path = req.path.replace(/^\/v1\//, "");
    if (req.method === "POST" && path === "auth/approle/login") return this.login(req);

    const token = req.headers["x-vault-token"];
    if (typeof token !== "string" || !this.tokens.has(token)) return denied;

    if (req.method === "GET" && path === "auth/token/lookup-self") {
      return { status: 200, body: { data: { accessor: "fake-accessor", policies: ["default"], ttl: 0 } } };
    }
    if (req.method === "GET" && path === "sys/mounts") return this.sysMounts();
    if (req.method === "GET" && path.startsWith("sys/internal/ui/mounts/")) {
      const mount = path.slice("sys/internal/ui/mounts/".length).replace(/\/+$/, "");
      const version = this.mounts[mount];
      if (version === undefined)
        return { status: 403, body: { errors: ["preflight capability check returned 403"] } };
      return {
        status: 200,
        body: { data: { type: "kv", path: `${mount}/`, options: { version: String(version) } } },
      };
    }
    return this.kv(req, path);
  }

  private login(req: FakeRequest): FakeResponse {
    const b = (req.body ?? {}) as { role_id?: string; secret_id?: string };
    if (b.role_id !== this.roleId || b.secret_id !== this.secretId) {
      return { status: 400, body: { errors: ["invalid role or secret ID"] } };
    }
    const clientToken = `hvs.approle-${randomUUID()}`;
    this.tokens.add(clientToken);
    return {
      status: 200,
      body: { auth: { client_token: clientToken, policies: ["default"], lease_duration: 3600 } },
    };
  }

  private sysMounts(): FakeResponse {
    if (this.options.sysMountsForbidden) return denied;
    const table: Record<string, unknown> = {
      "sys/": { type: "system", options: null },
      "cubbyhole/": { type: "cubbyhole", options: null },
      "transit/": { type: "transit", options: null },
    };
    for (const [mount, version] of Object.entries(this.mounts)) {
      table[`${mount}/`] = { type: "kv", options: { version: String(version) } };
    }
    // Vault returns the table both at the top level (legacy) and under `data`.
    return { status: 200, body: { ...table, data: table, request_id: randomUUID() } };
  }

  private kv(req: FakeRequest, path: string): FakeResponse {
    const mount = Object.keys(this.mounts)
      .sort((a, b) => b.length - a.length)
      .find((m) => path.startsWith(`${m}/`));
    if (mount === undefined) return { status: 404, body: { errors: [`no handler for route "${path}"`] } };
    const version = this.mounts[mount];
    let rest = path.slice(mount.length + 1);
    if (version === 2) {
      if (!rest.startsWith("data/"))
        return {
          status: 404,
          body: { errors: [], warnings: ["Invalid path for a versioned K/V secrets engine"] },
        };
      rest = rest.slice("data/".length);
    }
    const scope = `${mount}/${rest}`;
    const entry = this.entries.get(scope);

    if (req.method === "GET") {
      if (!entry) return notFound;
      if (version === 1) return { status: 200, body: { data: entry.data } };
      return {
        status: 200,
        body: { data: { data: entry.data, metadata: { version: entry.version, destroyed: false } } },
      };
    }
    if (req.method === "POST" || req.method === "PUT") {
      const body = req.body as Record<string, unknown> | undefined;
      const data = version === 2 ? (body?.data as Record<string, unknown> | undefined) : body;
      if (!data || typeof data !== "object") return { status: 400, body: { errors: ["no data provided"] } };
      if (version === 1 && Object.keys(data).length === 0)
        return { status: 400, body: { errors: ["missing data fields"] } };
      const next = { data, version: (entry?.version ?? 0) + 1 };
      this.entries.set(scope, next);
      return version === 2
        ? { status: 200, body: { data: { version: next.version, destroyed: false } } }
        : { status: 204 };
    }
    if (req.method === "DELETE") {
      this.entries.delete(scope);
      return { status: 204 };
    }
    return { status: 405, body: { errors: ["unsupported operation"] } };
  }
}
