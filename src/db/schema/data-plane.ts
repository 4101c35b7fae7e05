import { boolean, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** Project tags and folder imports (db/migrations/0002_data_plane.sql). */
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const secretTags = pgTable("secret_tags", {
  id: uuid("id").primaryKey().defaultRandom(),
  projectId: uuid("project_id").notNull(),
  slug: text("slug").notNull(),
  color: text("color"),
  createdBy: uuid("created_by"),
  createdByActorType: text("created_by_actor_type").notNull().default("user"),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

export const secretImports = pgTable("secret_imports", {
  id: uuid("id").primaryKey().defaultRandom(),
  folderId: uuid("folder_id").notNull(),
  importEnv: uuid("import_env").notNull(),
  importPath: text("import_path").notNull(),
  position: integer("position").notNull(),
  version: integer("version").notNull().default(1),
  isReplication: boolean("is_replication").notNull().default(false),
  createdAt: ts("created_at").notNull().defaultNow(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});
