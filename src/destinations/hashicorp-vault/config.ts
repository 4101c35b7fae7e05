import { z } from "zod";

/** Infisical's hc-vault-sync-schemas / hc-vault-connection-schemas, with their messages. */

const VAULT_PATH = /^[a-zA-Z0-9._-]+(?:\/[a-zA-Z0-9._-]+)*$/;

export const hashicorpVaultConfigSchema = z.object({
  mount: z.string().trim().min(1, "Secrets Engine Mount required").max(128),
  path: z
    .string()
    .trim()
    .min(1, "Path required")
    .max(128)
    .transform((p) => p.replace(/^\/+|\/+$/g, ""))
    .refine((p) => VAULT_PATH.test(p), {
      message:
        "Invalid Vault path format. Use alphanumerics, dots, dashes, underscores, and single slashes between segments.",
    }),
});

export type HashicorpVaultConfig = z.infer<typeof hashicorpVaultConfigSchema>;

const instanceUrl = z.string().trim().min(1, "Instance URL required").url("Invalid Instance URL");
const namespace = z.string().trim().optional();

export const hashicorpVaultMethods = {
  "access-token": z.object({
    instanceUrl,
    namespace,
    accessToken: z.string().trim().min(1, "Access Token required"),
  }),
  "app-role": z.object({
    instanceUrl,
    namespace,
    roleId: z.string().trim().min(1, "Role ID required"),
    secretId: z.string().trim().min(1, "Secret ID required"),
  }),
};
