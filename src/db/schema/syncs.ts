import { boolean, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { bytea } from "./foundation.js";

/** App connections and secret syncs (db/migrations/0004_syncs.sql is the DDL source of truth). */
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const appConnections = pgTable("app_connections", {
  id: uuid("id").primaryKey().defaultRandom(),
  orgId: uuid("org_id").notNull(),
  name: text("name").notNull(),
  description: text("description"),
  app: text("app").notNull(),
  method: text("method").notNull(),
  encryptedCredentials: bytea("encrypted_credentials").notNull(),
  version: integer("version").notNull().default(1),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export type SyncCreator = { type: "identity" | "user"; id: string; orgId: string; name: string };

export const secretSyncs = pgTable("secret_syncs", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  description: text("description"),
  destination: text("destination").notNull(),
  isAutoSyncEnabled: boolean("is_auto_sync_enabled").notNull().default(true),
  version: integer("version").notNull().default(1),
  destinationConfig: jsonb("destination_config").$type<Record<string, unknown>>().notNull(),
  syncOptions: jsonb("sync_options").$type<Record<string, unknown>>().notNull(),
  projectId: uuid("project_id").notNull(),
  folderId: uuid("folder_id"),
  connectionId: uuid("connection_id").notNull(),
  createdBy: jsonb("created_by").$type<SyncCreator>(),
  syncStatus: text("sync_status"),
  lastSyncJobId: text("last_sync_job_id"),
  lastSyncMessage: text("last_sync_message"),
  lastSyncedAt: ts("last_synced_at"),
  importStatus: text("import_status"),
  lastImportJobId: text("last_import_job_id"),
  lastImportMessage: text("last_import_message"),
  lastImportedAt: ts("last_imported_at"),
  removeStatus: text("remove_status"),
  lastRemoveJobId: text("last_remove_job_id"),
  lastRemoveMessage: text("last_remove_message"),
  lastRemovedAt: ts("last_removed_at"),
  ownedKeys: jsonb("owned_keys").$type<string[]>().notNull().default([]),
  keyFingerprints: jsonb("key_fingerprints").$type<Record<string, string>>().notNull().default({}),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
