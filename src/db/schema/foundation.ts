import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

/**
 * Typed table definitions for the typed SQL layer. The SQL migrations in db/migrations are the
 * source of truth for DDL (hand-written, forward-only, one file per feature so features can land
 * independently); tests/db/schema-drift.test.ts checks that these definitions match the migrated
 * database column for column.
 */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v)),
});

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const created = () => ts("created_at").notNull().defaultNow();
const updated = () => ts("updated_at").notNull().defaultNow();
const int64 = (name: string) => bigint(name, { mode: "number" });

export const organizations = pgTable("organizations", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  slug: text("slug").notNull(),
  createdAt: created(),
  updatedAt: updated(),
});

export const serverConfig = pgTable("server_config", {
  id: integer("id").primaryKey(),
  initialized: boolean("initialized").notNull().default(false),
  adminIdentityIds: uuid("admin_identity_ids").array().notNull().default(sql`'{}'`),
});

export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull(),
  username: text("username").notNull(),
  firstName: text("first_name"),
  lastName: text("last_name"),
  passwordHash: text("password_hash").notNull(),
  superAdmin: boolean("super_admin").notNull().default(false),
  createdAt: created(),
  updatedAt: updated(),
});

export const orgMemberships = pgTable("org_memberships", {
  id: uuid("id").primaryKey().defaultRandom(),
  orgId: uuid("org_id").notNull(),
  userId: uuid("user_id").notNull(),
  role: text("role").notNull(),
  createdAt: created(),
});

export const userSessions = pgTable("user_sessions", {
  id: uuid("id").primaryKey().defaultRandom(),
  userId: uuid("user_id").notNull(),
  orgId: uuid("org_id").notNull(),
  isRevoked: boolean("is_revoked").notNull().default(false),
  expiresAt: ts("expires_at").notNull(),
  createdAt: created(),
});

export const identities = pgTable("identities", {
  id: uuid("id").primaryKey().defaultRandom(),
  orgId: uuid("org_id").notNull(),
  name: text("name").notNull(),
  orgRole: text("org_role").notNull(),
  authMethod: text("auth_method"),
  createdAt: created(),
  updatedAt: updated(),
});

export type TrustedIp = { ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number };

export const identityUniversalAuths = pgTable("identity_universal_auths", {
  id: uuid("id").primaryKey().defaultRandom(),
  identityId: uuid("identity_id").notNull(),
  clientId: uuid("client_id").notNull().defaultRandom(),
  accessTokenTTL: int64("access_token_ttl").notNull().default(2592000),
  accessTokenMaxTTL: int64("access_token_max_ttl").notNull().default(2592000),
  accessTokenNumUsesLimit: int64("access_token_num_uses_limit").notNull().default(0),
  accessTokenPeriod: int64("access_token_period").notNull().default(0),
  clientSecretTrustedIps: jsonb("client_secret_trusted_ips").$type<TrustedIp[]>().notNull(),
  accessTokenTrustedIps: jsonb("access_token_trusted_ips").$type<TrustedIp[]>().notNull(),
  lockoutEnabled: boolean("lockout_enabled").notNull().default(true),
  lockoutThreshold: integer("lockout_threshold").notNull().default(3),
  lockoutDurationSeconds: integer("lockout_duration_seconds").notNull().default(300),
  lockoutCounterResetSeconds: integer("lockout_counter_reset_seconds").notNull().default(30),
  createdAt: created(),
  updatedAt: updated(),
});

export const identityUaClientSecrets = pgTable("identity_ua_client_secrets", {
  id: uuid("id").primaryKey().defaultRandom(),
  identityUAId: uuid("identity_ua_id").notNull(),
  description: text("description").notNull().default(""),
  clientSecretPrefix: text("client_secret_prefix").notNull(),
  clientSecretHash: text("client_secret_hash").notNull(),
  clientSecretTTL: int64("client_secret_ttl").notNull().default(0),
  clientSecretNumUses: int64("client_secret_num_uses").notNull().default(0),
  clientSecretNumUsesLimit: int64("client_secret_num_uses_limit").notNull().default(0),
  isClientSecretRevoked: boolean("is_client_secret_revoked").notNull().default(false),
  createdAt: created(),
  updatedAt: updated(),
});

export const identityAccessTokens = pgTable("identity_access_tokens", {
  id: uuid("id").primaryKey().defaultRandom(),
  identityId: uuid("identity_id").notNull(),
  clientSecretId: uuid("client_secret_id"),
  authMethod: text("auth_method").notNull(),
  accessTokenTTL: int64("access_token_ttl").notNull(),
  accessTokenMaxTTL: int64("access_token_max_ttl").notNull(),
  accessTokenNumUses: int64("access_token_num_uses").notNull().default(0),
  accessTokenNumUsesLimit: int64("access_token_num_uses_limit").notNull().default(0),
  accessTokenPeriod: int64("access_token_period").notNull().default(0),
  isRevoked: boolean("is_revoked").notNull().default(false),
  lastRenewedAt: ts("last_renewed_at"),
  createdAt: created(),
});

export const projects = pgTable("projects", {
  id: uuid("id").primaryKey().defaultRandom(),
  orgId: uuid("org_id").notNull(),
  name: text("name").notNull(),
  slug: text("slug").notNull(),
  description: text("description"),
  type: text("type").notNull().default("secret-manager"),
  hasDeleteProtection: boolean("has_delete_protection").notNull().default(false),
  createdAt: created(),
  updatedAt: updated(),
});

export const encryptionKeys = pgTable("encryption_keys", {
  ownerId: uuid("owner_id").primaryKey(),
  encryptedKey: bytea("encrypted_key").notNull(),
  createdAt: created(),
});

export type PermissionRule = {
  subject: string;
  action: string | string[];
  conditions?: Record<string, unknown>;
  inverted?: boolean;
};

export const projectRoles = pgTable("project_roles", {
  id: uuid("id").primaryKey().defaultRandom(),
  projectId: uuid("project_id").notNull(),
  slug: text("slug").notNull(),
  name: text("name").notNull(),
  description: text("description"),
  permissions: jsonb("permissions").$type<PermissionRule[]>().notNull(),
  createdAt: created(),
  updatedAt: updated(),
});

export const projectMemberships = pgTable("project_memberships", {
  id: uuid("id").primaryKey().defaultRandom(),
  projectId: uuid("project_id").notNull(),
  actorType: text("actor_type").$type<"identity" | "user">().notNull(),
  actorId: uuid("actor_id").notNull(),
  roles: jsonb("roles").$type<string[]>().notNull(),
  createdAt: created(),
  updatedAt: updated(),
});

export const environments = pgTable("environments", {
  id: uuid("id").primaryKey().defaultRandom(),
  projectId: uuid("project_id").notNull(),
  name: text("name").notNull(),
  slug: text("slug").notNull(),
  position: integer("position").notNull(),
  createdAt: created(),
  updatedAt: updated(),
});

export const folders = pgTable("folders", {
  id: uuid("id").primaryKey().defaultRandom(),
  envId: uuid("env_id").notNull(),
  parentId: uuid("parent_id"),
  name: text("name").notNull(),
  path: text("path").notNull(),
  description: text("description"),
  version: integer("version").notNull().default(1),
  isReserved: boolean("is_reserved").notNull().default(false),
  lastSecretModified: ts("last_secret_modified"),
  createdAt: created(),
  updatedAt: updated(),
});

/**
 * A time-ordered UUID (the UUIDv7 layout) in SQL that PostgreSQL 15+ and PGlite both run: the first 48
 * bits of a random v4 UUID replaced by the Unix time in milliseconds, the version nibble set to 7. The
 * audit log's id default since migration 0006 (which spells the same expression out).
 */
const TIME_ORDERED_UUID_SQL = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid`;

export const auditLogs = pgTable("audit_logs", {
  id: uuid("id").primaryKey().default(sql.raw(TIME_ORDERED_UUID_SQL)),
  orgId: uuid("org_id"),
  projectId: uuid("project_id"),
  actorType: text("actor_type").notNull(),
  actorId: text("actor_id"),
  actorName: text("actor_name"),
  eventType: text("event_type").notNull(),
  resource: jsonb("resource").$type<Record<string, unknown>>().notNull().default({}),
  ip: text("ip"),
  userAgent: text("user_agent"),
  outcome: text("outcome").notNull().default("success"),
  createdAt: created(),
});
