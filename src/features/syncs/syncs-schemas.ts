import { z } from "zod";
import { destinations } from "../../destinations/registry.js";
import type { DestinationAdapter } from "../../destinations/types.js";
import { date, slugSchema } from "../../http/schemas.js";
import { isValidKeySchema, KEY_SCHEMA_MESSAGE } from "./sync-engine.js";

/**
 * Base shapes once, with Infisical's names and bounds (api.md §2.2–2.3); per-destination schemas are
 * derived from each registry entry (STYLE §2.3), so adding a destination touches no file here.
 */
export const SYNC_STATUSES = ["pending", "running", "succeeded", "failed"] as const;
export const INITIAL_SYNC_BEHAVIORS = [
  "overwrite-destination",
  "import-prioritize-source",
  "import-prioritize-destination",
] as const;
export const IMPORT_BEHAVIORS = ["prioritize-source", "prioritize-destination"] as const;

const keySchema = z
  .string()
  .trim()
  .max(255)
  .refine(isValidKeySchema, { message: KEY_SCHEMA_MESSAGE })
  .optional();

export const baseSyncOptions = z.object({
  initialSyncBehavior: z.enum(INITIAL_SYNC_BEHAVIORS),
  keySchema,
  disableSecretDeletion: z.boolean().optional(),
});

/** Shared + destination options; destinations that cannot import accept only overwrite-destination. */
export function syncOptionsSchema(d: DestinationAdapter) {
  const extra = d.syncOptionsSchema instanceof z.ZodObject ? d.syncOptionsSchema.shape : {};
  return baseSyncOptions
    .extend(extra as z.ZodRawShape)
    .strict()
    .superRefine((o, ctx) => {
      if (!d.capabilities.import && o.initialSyncBehavior !== "overwrite-destination") {
        ctx.addIssue({
          code: "custom",
          path: ["initialSyncBehavior"],
          message: `${d.name} only supports "overwrite-destination" as the initial sync behavior`,
        });
      }
    });
}

/** Seed: "no additional properties" on destinationConfig for the create request. */
const strictConfig = (d: DestinationAdapter) =>
  d.configSchema instanceof z.ZodObject ? (d.configSchema as z.AnyZodObject).strict() : d.configSchema;

const secretPath = (msg: string) =>
  z
    .string()
    .trim()
    .min(1, msg)
    .transform((p) => (p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p));

const description = z
  .string()
  .trim()
  .max(256, "Description cannot exceed 256 characters")
  .nullable()
  .optional();

export const baseCreateSync = z.object({
  name: slugSchema("name", 256),
  projectId: z.string().trim().min(1, "Project ID required"),
  description,
  connectionId: z.string().uuid(),
  environment: slugSchema("environment", 64),
  secretPath: secretPath("Secret path required"),
  isAutoSyncEnabled: z.boolean().default(true),
});

export const baseUpdateSync = z.object({
  name: slugSchema("name", 256).optional(),
  description,
  connectionId: z.string().uuid().optional(),
  environment: slugSchema("environment", 64).optional(),
  secretPath: secretPath("Invalid secret path").optional(),
  isAutoSyncEnabled: z.boolean().optional(),
});

export const createBody = (d: DestinationAdapter) =>
  baseCreateSync.extend({ syncOptions: syncOptionsSchema(d), destinationConfig: strictConfig(d) });

export const updateBody = (d: DestinationAdapter) =>
  baseUpdateSync.extend({
    syncOptions: syncOptionsSchema(d).optional(),
    destinationConfig: strictConfig(d).optional(),
  });

export type CreateSyncInput = z.infer<typeof baseCreateSync> & {
  syncOptions: Record<string, unknown>;
  destinationConfig: unknown;
};
export type UpdateSyncInput = z.infer<typeof baseUpdateSync> & {
  syncOptions?: Record<string, unknown>;
  destinationConfig?: unknown;
};

const status = z.enum(SYNC_STATUSES).nullable();

/** Exactly the seed's `secretSync` fields. */
export const baseSyncView = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  isAutoSyncEnabled: z.boolean(),
  version: z.number(),
  projectId: z.string(),
  folderId: z.string().uuid().nullable(),
  connectionId: z.string().uuid(),
  createdAt: date,
  updatedAt: date,
  syncStatus: status,
  lastSyncJobId: z.string().nullable(),
  lastSyncMessage: z.string().nullable(),
  lastSyncedAt: date.nullable(),
  importStatus: status,
  lastImportJobId: z.string().nullable(),
  lastImportMessage: z.string().nullable(),
  lastImportedAt: date.nullable(),
  removeStatus: status,
  lastRemoveJobId: z.string().nullable(),
  lastRemoveMessage: z.string().nullable(),
  lastRemovedAt: date.nullable(),
  connection: z.object({ app: z.string(), name: z.string(), id: z.string().uuid() }),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string().uuid() }).nullable(),
  folder: z.object({ id: z.string(), path: z.string() }).nullable(),
});

export const syncView = (d: DestinationAdapter) =>
  baseSyncView.extend({
    destination: z.literal(d.slug),
    destinationConfig: d.configSchema,
    syncOptions: syncOptionsSchema(d),
  });

const views = destinations.map((d) => syncView(d as DestinationAdapter));
export const anySyncView = z.discriminatedUnion(
  "destination",
  views as unknown as [(typeof views)[number], ...(typeof views)[number][]],
);

export const syncOptionEntry = z.object({
  name: z.string(),
  destination: z.string(),
  connection: z.string(),
  canImportSecrets: z.boolean(),
  canRemoveSecretsOnDeletion: z.boolean(),
});

export const syncOptionsList = () =>
  destinations
    .map((d) => ({
      name: d.name,
      destination: d.slug,
      connection: d.connectionApp,
      canImportSecrets: d.capabilities.import,
      canRemoveSecretsOnDeletion: d.capabilities.removeOnDelete,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

/** Preview (Ferry only): key names, never values. */
export const previewView = z.object({
  preview: z.object({
    create: z.array(z.string()),
    update: z.array(z.string()),
    delete: z.array(z.string()),
    unchanged: z.array(z.string()),
    foreign: z.array(z.string()),
  }),
});
