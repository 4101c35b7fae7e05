import { z } from "zod";

/** Infisical's trigger-dev-sync-schemas / trigger-dev-connection-schemas (newest: method "api-key"). */

export const TRIGGER_DEV_CLOUD_URL = "https://api.trigger.dev";

export const triggerDevConfigSchema = z.object({
  /** The project's external ref, `proj_...`. */
  projectRef: z.string().trim().min(1, "Project reference required").max(255),
  environment: z.enum(["prod", "staging", "dev", "preview"]),
});

export type TriggerDevConfig = z.infer<typeof triggerDevConfigSchema>;

export const triggerDevSyncOptionsSchema = z.object({
  /** Sent as `isSecret`; defaults to true because the values come from a secrets manager. */
  markAsSecret: z.boolean().optional(),
});

export const triggerDevMethods = {
  "api-key": z.object({
    apiKey: z.string().trim().min(1, "API Key required").max(255),
    /** Self-hosted Trigger.dev; the cloud API when absent. */
    instanceUrl: z.string().trim().url("Invalid Instance URL").max(255).optional(),
  }),
};
