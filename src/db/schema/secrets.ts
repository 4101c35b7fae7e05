import { boolean, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { bytea } from "./foundation.js";

/** Secrets and their tag links (migration 0003_secrets.sql is the DDL source of truth). */
export type StoredMetadata = { key: string; value?: string; encryptedValue?: string; isEncrypted: boolean };

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const secrets = pgTable("secrets", {
  id: uuid("id").primaryKey().defaultRandom(),
  folderId: uuid("folder_id").notNull(),
  key: text("key").notNull(),
  type: text("type").$type<"shared" | "personal">().notNull().default("shared"),
  userId: uuid("user_id"),
  version: integer("version").notNull().default(1),
  encryptedValue: bytea("encrypted_value").notNull(),
  encryptedComment: bytea("encrypted_comment"),
  skipMultilineEncoding: boolean("skip_multiline_encoding").notNull().default(false),
  encryptedReminderNote: bytea("encrypted_reminder_note"),
  reminderRepeatDays: integer("reminder_repeat_days"),
  metadata: jsonb("metadata").$type<StoredMetadata[]>().notNull().default([]),
  actorType: text("actor_type"),
  actorId: uuid("actor_id"),
  actorName: text("actor_name"),
  actorMembershipId: uuid("actor_membership_id"),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const secretTagLinks = pgTable(
  "secret_tag_links",
  {
    secretId: uuid("secret_id").notNull(),
    tagId: uuid("tag_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.secretId, t.tagId] })],
);
