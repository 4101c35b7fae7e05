import type { KeyObject } from "node:crypto";
import { randomUUID } from "node:crypto";
import { jwtVerify } from "jose";
import sodium from "libsodium-wrappers";
import { bearerOf, FakeDestination, type FakeRequest, type FakeResponse } from "./fake-destination.js";

/**
 * GitHub Actions secrets for the three scopes, with a real libsodium keypair: it serves the public key
 * and opens every sealed box it receives, so tests read the plaintext GitHub would hold. Names are
 * stored upper-case and validated as GitHub does; listing pages with per_page ≤ 100 and Link headers.
 * Scope for seed/read: "org:<org>", "repo:<owner>/<repo>", "env:<owner>/<repo>/<env>".
 */

export interface FakeGitHubOptions {
  token?: string;
  /** A GitHub App whose RS256 JWTs are verified with `publicKey`, and its installation ids. */
  app?: { appId: string; publicKey: KeyObject; installations: string[] };
}

const SCOPES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^\/orgs\/([^/]+)\/actions\/secrets(?:\/([^/]+))?$/, (m) => `org:${m[1]}`],
  [/^\/repos\/([^/]+)\/([^/]+)\/actions\/secrets(?:\/([^/]+))?$/, (m) => `repo:${m[1]}/${m[2]}`],
  [
    /^\/repos\/([^/]+)\/([^/]+)\/environments\/([^/]+)\/secrets(?:\/([^/]+))?$/,
    (m) => `env:${m[1]}/${m[2]}/${m[3]}`,
  ],
];
const SECRET_NAME = /^[A-Z_][A-Z0-9_]*$/;
const DOCS = "https://docs.github.com/rest";

interface Secret {
  value: string;
  updatedAt: string;
  visibility?: string;
}

export class FakeGitHub extends FakeDestination {
  readonly token: string;
  readonly keyId = "568250167242549743";
  private keyPair: { publicKey: Uint8Array; privateKey: Uint8Array } | undefined;
  private readonly tokens = new Set<string>();
  private readonly scopes = new Map<string, Map<string, Secret>>();

  constructor(readonly options: FakeGitHubOptions = {}) {
    super();
    this.token = options.token ?? "ghp_fakeGoodToken0123456789";
    this.tokens.add(this.token);
  }

  override async start(): Promise<this> {
    await sodium.ready;
    this.keyPair = sodium.crypto_box_keypair();
    return super.start();
  }

  seed(scope: string, entries: Record<string, string>): void {
    const secrets = this.scope(scope);
    for (const [k, v] of Object.entries(entries))
      secrets.set(k.toUpperCase(), { value: v, updatedAt: new Date().toISOString() });
  }

  read(scope: string): Record<string, string> {
    return Object.fromEntries([...(this.scopes.get(scope) ?? [])].map(([k, s]) => [k, s.value]));
  }

  visibilityOf(scope: string, name: string): string | undefined {
    return this.scopes.get(scope)?.get(name)?.visibility;
  }

  protected clear(): void {
    this.scopes.clear();
  }

  private scope(key: string): Map<string, Secret> {
    let s = this.scopes.get(key);
    if (!s) {
      s = new Map();
      this.scopes.set(key, s);
    }
    return s;
  }

  protected isWrite(req: FakeRequest): boolean {
    return (req.method === "PUT" || req.method === "DELETE") && req.path.includes("/secrets/");
  }

  protected failure(status: number): FakeResponse {
    if (status === 401)
      return { status, body: { message: "Bad credentials", documentation_url: DOCS, status: "401" } };
    if (status === 429) {
      return {
        status,
        body: {
          message: "You have exceeded a secondary rate limit.",
          documentation_url: DOCS,
          status: "429",
        },
      };
    }
    return {
      status,
      body: { message: `fake failure ${status}`, documentation_url: DOCS, status: String(status) },
    };
  }

  protected async route(req: FakeRequest): Promise<FakeResponse> {
    const installation = /^\/app\/installations\/([^/]+)\/access_tokens$/.exec(req.path);
    if (req.method === "POST" && installation?.[1]) return this.installationToken(req, installation[1]);

    const token = bearerOf(req);
    if (!token || !this.tokens.has(token)) return this.failure(401);
    if (req.method === "GET" && req.path === "/user")
      return { status: 200, body: { login: "octocat", id: 1 } };
    if (req.method === "GET" && req.path === "/installation/repositories") {
      return { status: 200, body: { total_count: 0, repositories: [] } };
    }
    for (const [re, scopeOf] of SCOPES) {
      const m = re.exec(req.path);
      if (!m) continue;
      const tail = m[m.length - 1];
      return this.secrets(req, scopeOf(m), tail);
    }
    return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
  }

  private async installationToken(req: FakeRequest, id: string): Promise<FakeResponse> {
    const app = this.options.app;
    const jwt = bearerOf(req);
    if (!app || !jwt)
      return {
        status: 401,
        body: { message: "A JSON web token could not be decoded", documentation_url: DOCS },
      };
    try {
      await jwtVerify(jwt, app.publicKey, { issuer: app.appId, algorithms: ["RS256"] });
    } catch {
      return {
        status: 401,
        body: { message: "A JSON web token could not be decoded", documentation_url: DOCS },
      };
    }
    if (!app.installations.includes(id))
      return { status: 404, body: { message: "Not Found", documentation_url: DOCS } };
    const token = `ghs_${randomUUID().replace(/-/g, "")}`;
    this.tokens.add(token);
    return { status: 201, body: { token, expires_at: new Date(Date.now() + 3_600_000).toISOString() } };
  }

  private secrets(req: FakeRequest, scopeKey: string, tail: string | undefined): FakeResponse {
    const secrets = this.scope(scopeKey);
    if (req.method === "GET" && tail === undefined) return this.list(req, secrets);
    if (req.method === "GET" && tail === "public-key") {
      return {
        status: 200,
        body: {
          key_id: this.keyId,
          key: sodium.to_base64(this.pair().publicKey, sodium.base64_variants.ORIGINAL),
        },
      };
    }
    if (tail === undefined || tail === "public-key")
      return { status: 405, body: { message: "Method not allowed" } };
    const name = tail.toUpperCase();
    if (req.method === "PUT") return this.put(req, scopeKey, secrets, name);
    if (req.method === "DELETE") {
      if (!secrets.delete(name))
        return { status: 404, body: { message: "Not Found", documentation_url: DOCS, status: "404" } };
      return { status: 204 };
    }
    return { status: 405, body: { message: "Method not allowed" } };
  }

  private list(req: FakeRequest, secrets: Map<string, Secret>): FakeResponse {
    // GitHub silently caps per_page at 100; default 30.
    const perPage = Math.min(100, Math.max(1, Number(req.query.get("per_page") ?? 30)));
    const page = Math.max(1, Number(req.query.get("page") ?? 1));
    const names = [...secrets.keys()].sort();
    const last = Math.max(1, Math.ceil(names.length / perPage));
    const slice = names.slice((page - 1) * perPage, page * perPage);
    const link = (p: number) => `<${this.url}${req.path}?per_page=${perPage}&page=${p}>`;
    const links = [
      ...(page < last ? [`${link(page + 1)}; rel="next"`, `${link(last)}; rel="last"`] : []),
      ...(page > 1 ? [`${link(1)}; rel="first"`, `${link(page - 1)}; rel="prev"`] : []),
    ];
    return {
      status: 200,
      headers: links.length ? { link: links.join(", ") } : {},
      body: {
        total_count: names.length,
        secrets: slice.map((name) => ({
          name,
          created_at: secrets.get(name)?.updatedAt,
          updated_at: secrets.get(name)?.updatedAt,
        })),
      },
    };
  }

  private put(req: FakeRequest, scopeKey: string, secrets: Map<string, Secret>, name: string): FakeResponse {
    if (!SECRET_NAME.test(name) || name.startsWith("GITHUB_")) {
      return {
        status: 422,
        body: {
          message:
            "Invalid request.\n\nSecret names can only contain alphanumeric characters or underscores and must not start with a number or GITHUB_.",
          documentation_url: DOCS,
          status: "422",
        },
      };
    }
    const b = (req.body ?? {}) as { encrypted_value?: string; key_id?: string; visibility?: string };
    if (b.key_id !== this.keyId || typeof b.encrypted_value !== "string") {
      return {
        status: 422,
        body: {
          message: 'Invalid request.\n\n"key_id" is not the current public key.',
          documentation_url: DOCS,
          status: "422",
        },
      };
    }
    if (scopeKey.startsWith("org:") && !["all", "private", "selected"].includes(b.visibility ?? "")) {
      return {
        status: 422,
        body: {
          message: 'Invalid request.\n\n"visibility" is required.',
          documentation_url: DOCS,
          status: "422",
        },
      };
    }
    let value: string;
    try {
      const { publicKey, privateKey } = this.pair();
      const opened = sodium.crypto_box_seal_open(
        sodium.from_base64(b.encrypted_value, sodium.base64_variants.ORIGINAL),
        publicKey,
        privateKey,
      );
      value = sodium.to_string(opened);
    } catch {
      return {
        status: 422,
        body: {
          message: "Bad request: could not decrypt encrypted_value",
          documentation_url: DOCS,
          status: "422",
        },
      };
    }
    const existed = secrets.has(name);
    secrets.set(name, { value, updatedAt: new Date().toISOString(), visibility: b.visibility });
    return existed ? { status: 204 } : { status: 201, body: {} };
  }

  private pair() {
    if (!this.keyPair) throw new Error("FakeGitHub not started");
    return this.keyPair;
  }
}
