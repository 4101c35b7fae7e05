import type { CredentialsOf, IoCtx } from "../types.js";
import { TRIGGER_DEV_CLOUD_URL, type TriggerDevConfig, type triggerDevMethods } from "./config.js";

export type TriggerDevCredentials = CredentialsOf<typeof triggerDevMethods>;

export interface TriggerDevEnvVar {
  name: string;
  value?: string;
  isSecret?: boolean;
}

/** Thin client for Trigger.dev's env-var API (`/api/v1/projects/{ref}/envvars/{env}`), bearer auth. */
export function createTriggerDevClient(creds: TriggerDevCredentials, io: Pick<IoCtx, "http" | "signal">) {
  const base = (creds.instanceUrl ?? TRIGGER_DEV_CLOUD_URL).replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${creds.apiKey}` };
  const envPath = (c: TriggerDevConfig) =>
    `${base}/api/v1/projects/${encodeURIComponent(c.projectRef)}/envvars/${encodeURIComponent(c.environment)}`;

  return {
    listProjects: () =>
      io.http.request<unknown[]>({ url: `${base}/api/v1/projects`, headers, signal: io.signal }),

    async listVars(c: TriggerDevConfig): Promise<TriggerDevEnvVar[]> {
      const res = await io.http.request<TriggerDevEnvVar[]>({ url: envPath(c), headers, signal: io.signal });
      return Array.isArray(res.data) ? res.data : [];
    },

    /** One batch call for all upserts; `override: true` replaces existing values. */
    async importVars(
      c: TriggerDevConfig,
      variables: Record<string, string>,
      isSecret: boolean,
    ): Promise<void> {
      await io.http.request({
        method: "POST",
        url: `${envPath(c)}/import`,
        headers,
        json: { variables, override: true, isSecret },
        signal: io.signal,
      });
    },

    /** Deleting a variable that is already gone is success: the desired end state holds. */
    async deleteVar(c: TriggerDevConfig, name: string): Promise<void> {
      await io.http.request({
        method: "DELETE",
        url: `${envPath(c)}/${encodeURIComponent(name)}`,
        headers,
        allowStatus: [404],
        secretKey: name,
        signal: io.signal,
      });
    },
  };
}
