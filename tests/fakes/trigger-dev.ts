import { bearerOf, FakeDestination, type FakeRequest, type FakeResponse } from "./fake-destination.js";

/**
 * Trigger.dev env-var API (`/api/v1/projects/{ref}/envvars/{env}`), bearer API key. Secret variables are
 * listed without their value, as Trigger.dev redacts them. Scope for seed/read: "<projectRef>/<env>".
 */

export interface FakeTriggerDevOptions {
  apiKey?: string;
}

const ENVIRONMENTS = new Set(["dev", "staging", "prod", "preview"]);
const ENVVARS = /^\/api\/v1\/projects\/([^/]+)\/envvars\/([^/]+)(?:\/(import|[^/]+))?$/;

interface Variable {
  value: string;
  isSecret: boolean;
}

export class FakeTriggerDev extends FakeDestination {
  readonly apiKey: string;
  private readonly envs = new Map<string, Map<string, Variable>>();

  constructor(options: FakeTriggerDevOptions = {}) {
    super();
    this.apiKey = options.apiKey ?? "tr_dev_fakegoodkey123";
  }

  seed(scope: string, entries: Record<string, string>): void {
    const vars = this.env(scope);
    for (const [k, v] of Object.entries(entries)) vars.set(k, { value: v, isSecret: false });
  }

  read(scope: string): Record<string, string> {
    return Object.fromEntries([...(this.envs.get(scope) ?? [])].map(([k, v]) => [k, v.value]));
  }

  /** Whether a variable is stored as secret (what `markAsSecret` controls). */
  isSecret(scope: string, name: string): boolean | undefined {
    return this.envs.get(scope)?.get(name)?.isSecret;
  }

  protected clear(): void {
    this.envs.clear();
  }

  private env(scope: string): Map<string, Variable> {
    let vars = this.envs.get(scope);
    if (!vars) {
      vars = new Map();
      this.envs.set(scope, vars);
    }
    return vars;
  }

  protected isWrite(req: FakeRequest): boolean {
    return (req.method === "POST" || req.method === "DELETE") && req.path.includes("/envvars/");
  }

  protected failure(status: number): FakeResponse {
    const error =
      status === 429
        ? "Rate limit exceeded"
        : status === 401
          ? "Invalid or Missing API key"
          : `fake failure ${status}`;
    return { status, body: { error } };
  }

  protected route(req: FakeRequest): FakeResponse {
    if (bearerOf(req) !== this.apiKey) return { status: 401, body: { error: "Invalid or Missing API key" } };
    if (req.method === "GET" && req.path === "/api/v1/projects") {
      const refs = new Set([...this.envs.keys()].map((s) => s.split("/")[0]));
      return {
        status: 200,
        body: [...refs].map((ref) => ({
          id: `id_${ref}`,
          externalRef: ref,
          name: ref,
          organization: { id: "org_1" },
        })),
      };
    }
    const m = ENVVARS.exec(req.path);
    if (!m?.[1] || !m[2]) return { status: 404, body: { error: "Not found" } };
    const [ref, envName, tail] = [m[1], m[2], m[3]];
    if (!ref.startsWith("proj_")) return { status: 404, body: { error: "Project not found" } };
    if (!ENVIRONMENTS.has(envName)) return { status: 404, body: { error: "Environment not found" } };
    const vars = this.env(`${ref}/${envName}`);

    if (req.method === "GET" && tail === undefined) {
      const list = [...vars].map(([name, v]) =>
        v.isSecret ? { name, isSecret: true } : { name, value: v.value, isSecret: false },
      );
      return { status: 200, body: list };
    }
    if (req.method === "POST" && tail === "import") {
      const b = (req.body ?? {}) as { variables?: unknown; override?: boolean; isSecret?: boolean };
      const entries = Array.isArray(b.variables)
        ? (b.variables as Array<{ name: string; value: string }>).map((v) => [v.name, v.value] as const)
        : b.variables && typeof b.variables === "object"
          ? Object.entries(b.variables as Record<string, unknown>)
          : undefined;
      if (!entries || entries.some(([, v]) => typeof v !== "string")) {
        return { status: 400, body: { error: "Invalid request body" } };
      }
      for (const [name, value] of entries) {
        if (vars.has(name) && !b.override) continue;
        vars.set(name, { value: value as string, isSecret: b.isSecret ?? false });
      }
      return { status: 200, body: { success: true } };
    }
    if (req.method === "DELETE" && tail !== undefined && tail !== "import") {
      if (!vars.delete(tail)) return { status: 404, body: { error: "Environment variable not found" } };
      return { status: 200, body: { success: true } };
    }
    return { status: 405, body: { error: "Method not allowed" } };
  }
}
