import type { HttpClient, HttpMethod } from "../../lib/http-client.js";
import { DestinationError } from "../errors.js";
import type { CredentialsOf, IoCtx } from "../types.js";
import type { hashicorpVaultMethods } from "./config.js";

export type VaultCredentials = CredentialsOf<typeof hashicorpVaultMethods>;
export type KvVersion = 1 | 2;

const encodePath = (p: string) => p.split("/").filter(Boolean).map(encodeURIComponent).join("/");

interface MountEntry {
  type?: string;
  options?: { version?: string } | null;
}

function kvVersionOf(mount: string, entry: MountEntry | undefined): KvVersion {
  if (!entry) {
    throw new DestinationError({
      code: "INVALID_CONFIG",
      message: `Mount '${mount}' not found`,
      retryable: false,
    });
  }
  if (entry.type !== undefined && entry.type !== "kv" && entry.type !== "generic") {
    throw new DestinationError({
      code: "INVALID_CONFIG",
      message: `Mount '${mount}' is a '${entry.type}' engine, not a KV secrets engine`,
      retryable: false,
    });
  }
  return entry.options?.version === "2" ? 2 : 1;
}

/**
 * Thin Vault HTTP client. One instance per run: AppRole logs in afresh every time (as Infisical does),
 * so a revoked secret id takes effect on the next run.
 */
export function createVaultClient(creds: VaultCredentials, io: Pick<IoCtx, "http" | "signal">) {
  const base = creds.instanceUrl.replace(/\/+$/, "");
  const http: HttpClient = io.http;
  let token = creds.method === "access-token" ? creds.accessToken : undefined;

  const headers = (withToken: boolean) => ({
    ...(withToken && token ? { "x-vault-token": token } : {}),
    ...(creds.namespace ? { "x-vault-namespace": creds.namespace } : {}),
  });

  async function login(): Promise<void> {
    if (token !== undefined || creds.method !== "app-role") return;
    const res = await http.request<{ auth?: { client_token?: string } }>({
      method: "POST",
      url: `${base}/v1/auth/approle/login`,
      headers: headers(false),
      json: { role_id: creds.roleId, secret_id: creds.secretId },
      signal: io.signal,
    });
    const clientToken = res.data?.auth?.client_token;
    if (!clientToken) {
      throw new DestinationError({
        code: "UNAUTHORIZED",
        message: "Vault AppRole login returned no client token",
        retryable: false,
      });
    }
    token = clientToken;
  }

  async function call<T>(
    method: HttpMethod,
    path: string,
    opts: { json?: unknown; allowStatus?: number[] } = {},
  ) {
    await login();
    return http.request<T>({
      method,
      url: `${base}/v1/${path}`,
      headers: headers(true),
      json: opts.json,
      allowStatus: opts.allowStatus,
      signal: io.signal,
    });
  }

  return {
    login,

    lookupSelf: () => call("GET", "auth/token/lookup-self"),

    /** KV version of a mount: sys/mounts first, then the UI preflight endpoint for narrowly scoped tokens. */
    async kvVersion(mount: string): Promise<KvVersion> {
      const res = await call<{ data?: Record<string, MountEntry> } & Record<string, unknown>>(
        "GET",
        "sys/mounts",
        {
          allowStatus: [403],
        },
      );
      if (res.status === 200) {
        const table = (res.data?.data ?? res.data ?? {}) as Record<string, MountEntry | undefined>;
        return kvVersionOf(mount, table[`${mount}/`]);
      }
      // A token that may use one mount usually cannot read sys/mounts; this endpoint only needs access
      // to the mount itself.
      const ui = await call<{ data?: MountEntry }>("GET", `sys/internal/ui/mounts/${encodePath(mount)}`, {
        allowStatus: [400, 403, 404],
      });
      return kvVersionOf(mount, ui.status === 200 ? ui.data?.data : undefined);
    },

    /** The fields of the secret at mount/path; {} when it does not exist yet. */
    async read(mount: string, path: string, version: KvVersion): Promise<Record<string, unknown>> {
      const p =
        version === 2
          ? `${encodePath(mount)}/data/${encodePath(path)}`
          : `${encodePath(mount)}/${encodePath(path)}`;
      const res = await call<{ data?: { data?: Record<string, unknown> | null } & Record<string, unknown> }>(
        "GET",
        p,
        { allowStatus: [404] },
      );
      if (res.status === 404) return {};
      const data = version === 2 ? res.data?.data?.data : res.data?.data;
      return data && typeof data === "object" ? (data as Record<string, unknown>) : {};
    },

    async write(
      mount: string,
      path: string,
      version: KvVersion,
      fields: Record<string, unknown>,
    ): Promise<void> {
      if (version === 2)
        await call("POST", `${encodePath(mount)}/data/${encodePath(path)}`, { json: { data: fields } });
      else await call("POST", `${encodePath(mount)}/${encodePath(path)}`, { json: fields });
    },

    /** KV v1 only: v1 cannot hold an empty secret, so "no fields" means deleting the entry. */
    async remove(mount: string, path: string): Promise<void> {
      await call("DELETE", `${encodePath(mount)}/${encodePath(path)}`, { allowStatus: [404] });
    },
  };
}
