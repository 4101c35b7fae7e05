import { z } from "zod";
import { boolish } from "../../http/schemas.js";

/**
 * Request schemas for the v3 raw and v4 secret routes, with Infisical's field names and rules. Zod
 * objects are non-strict, so the extra fields real clients send (`secretName` in the SDK's query,
 * `secretId` from the web app, `includePersonalOverrides` from the CLI) are dropped. Paths are only
 * trimmed here; the service normalises them (400 on `..`, empty segments or bad characters).
 */
export type ApiVersion = "v3" | "v4";

/** Infisical's SecretNameSchema (create, rename, batch keys). */
export const secretNameSchema = z
  .string()
  .trim()
  .min(1)
  .refine((n) => !n.includes(":") && !n.includes("/"), "Secret name cannot contain colon or forward slash.");

/** Values are trimmed, but a single trailing newline survives (Infisical does the same). */
const secretValue = z.string().transform((v) => (v.endsWith("\n") ? `${v.trim()}\n` : v.trim()));
const secretType = z.enum(["shared", "personal"]).default("shared");
const secretPath = z.string().trim().default("/");
const optionalPath = z.string().trim().optional();
const environment = z.string().trim().min(1);

const metadataIn = z.array(
  z.object({ key: z.string().trim().min(1), value: z.string(), isEncrypted: z.boolean().optional() }),
);
const writeFields = {
  secretComment: z.string().trim().optional(),
  skipMultilineEncoding: boolish.nullable().optional(),
  // Terraform sends `tagIds: null` when no tags are set.
  tagIds: z.array(z.string().trim()).nullable().optional(),
  secretMetadata: metadataIn.optional(),
  secretReminderNote: z.string().max(1024).nullable().optional(),
  // Terraform sends 0 for "no reminder".
  secretReminderRepeatDays: z.number().int().min(0).max(365).nullable().optional(),
};

/**
 * The project reference: `workspaceId` (or a slug) on v3, `projectId` on v4. Every spelling is accepted on
 * both versions (clients mix them up; unknown fields would be ignored anyway).
 */
const projectShape = {
  workspaceId: z.string().trim().optional(),
  workspaceSlug: z.string().trim().optional(),
  projectSlug: z.string().trim().optional(),
  projectId: z.string().trim().optional(),
};
export const projectFields = (_v: ApiVersion) => projectShape;

export type ProjectRefInput = {
  workspaceId?: string;
  workspaceSlug?: string;
  projectSlug?: string;
  projectId?: string;
};
export const projectRef = (i: ProjectRefInput) => ({
  id: i.projectId ?? i.workspaceId,
  slug: i.workspaceSlug ?? i.projectSlug,
});

export const nameParam = z.object({ secretName: z.string().trim().min(1) });
export const idParam = z.object({ secretId: z.string().trim().min(1) });

export const listQuery = (v: ApiVersion) =>
  z.object({
    ...projectFields(v),
    environment: z.string().trim().optional(),
    secretPath,
    recursive: boolish.default(false),
    include_imports: boolish.optional(),
    includeImports: boolish.optional(),
    tagSlugs: z.string().optional(),
    // The Node SDK always sends it (default true); v4 defaults to false as in Infisical.
    expandSecretReferences: boolish.default(v === "v3"),
    viewSecretValue: boolish.default(true),
  });

export const getQuery = (v: ApiVersion) =>
  z.object({
    ...projectFields(v),
    environment: z.string().trim().optional(),
    secretPath,
    version: z.coerce.number().int().min(1).optional(),
    type: secretType,
    viewSecretValue: boolish.default(true),
    expandSecretReferences: boolish.default(false),
    include_imports: boolish.optional(),
    includeImports: boolish.optional(),
  });

export const createBody = (v: ApiVersion) =>
  z.object({
    ...projectFields(v),
    environment,
    secretPath,
    secretValue,
    type: secretType,
    ...writeFields,
  });

export const updateBody = (v: ApiVersion) =>
  z.object({
    ...projectFields(v),
    environment,
    secretPath,
    secretValue: secretValue.optional(),
    newSecretName: secretNameSchema.optional(),
    type: secretType,
    ...writeFields,
  });

export const deleteBody = (v: ApiVersion) =>
  z
    .object({ ...projectFields(v), environment, secretPath, type: secretType })
    // v4's delete requires projectId in the body (422 when missing), as the seed's endpoint does.
    .extend(v === "v4" ? { projectId: z.string().trim().min(1) } : {});

const batchScope = (v: ApiVersion) => ({ ...projectFields(v), environment, secretPath });

export const batchCreateBody = (v: ApiVersion) =>
  z.object({
    ...batchScope(v),
    secrets: z
      .array(z.object({ secretKey: secretNameSchema, secretValue, secretPath: optionalPath, ...writeFields }))
      .min(1),
  });

export const batchUpdateBody = (v: ApiVersion) =>
  z.object({
    ...batchScope(v),
    secrets: z
      .array(
        z.object({
          secretKey: secretNameSchema,
          newSecretName: secretNameSchema.optional(),
          secretValue: secretValue.optional(),
          secretPath: optionalPath,
          ...writeFields,
        }),
      )
      .min(1),
  });

export const batchDeleteBody = (v: ApiVersion) =>
  z.object({
    ...batchScope(v),
    secrets: z
      .array(z.object({ secretKey: z.string().trim().min(1), type: secretType, secretPath: optionalPath }))
      .min(1),
  });

export const tagSlugsOf = (s: string | undefined) =>
  s
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
