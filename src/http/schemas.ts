import { z } from "zod";

/**
 * Shared wire schemas used by several route files. Response schemas are always declared, so columns that
 * a route does not list (hashes, `encrypted*`) are stripped on the way out.
 */

/** `"true"`/`"false"` in query strings (and real booleans in JSON bodies). */
export const boolish = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);

/** Infisical's slug rules (newest version): lowercase letters, digits and single hyphens. */
export const slugSchema = (field: string, max = 64) =>
  z
    .string()
    .trim()
    .min(1, `${field} field must be at least 1 lowercase character`)
    .max(max, `${field} field must be at most ${max} lowercase characters`)
    .regex(
      /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
      `${field} field can only contain lowercase letters, numbers, and hyphens`,
    );

export const date = z.date().or(z.string());

export const errorEnvelope = z.object({
  reqId: z.string(),
  statusCode: z.number(),
  message: z.any(),
  error: z.string(),
  details: z.any().optional(),
});

export const projectSchema = z.object({
  id: z.string(),
  _id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.string(),
  defaultProduct: z.string(),
  slug: z.string(),
  autoCapitalization: z.boolean(),
  orgId: z.string(),
  createdAt: date,
  updatedAt: date,
  version: z.number(),
  upgradeStatus: z.string().nullable(),
  pitVersionLimit: z.number(),
  kmsCertificateKeyId: z.string().nullable(),
  auditLogsRetentionDays: z.number().nullable(),
  hasDeleteProtection: z.boolean(),
  secretSharing: z.boolean(),
  showSnapshotsLegacy: z.boolean(),
  environments: z.array(z.object({ name: z.string(), slug: z.string(), id: z.string() })),
});

export const identitySchema = z.object({
  id: z.string(),
  name: z.string(),
  orgId: z.string(),
  role: z.string(),
  authMethod: z.string().nullable(),
  authMethods: z.array(z.string()),
  hasDeleteProtection: z.boolean(),
  createdAt: date,
  updatedAt: date,
});

const trustedIp = z.object({ ipAddress: z.string(), type: z.string(), prefix: z.number().optional() });

export const universalAuthSchema = z.object({
  id: z.string(),
  clientId: z.string(),
  identityId: z.string(),
  accessTokenTTL: z.number(),
  accessTokenMaxTTL: z.number(),
  accessTokenNumUsesLimit: z.number(),
  accessTokenPeriod: z.number(),
  clientSecretTrustedIps: z.array(trustedIp),
  accessTokenTrustedIps: z.array(trustedIp),
  lockoutEnabled: z.boolean(),
  lockoutThreshold: z.number(),
  lockoutDurationSeconds: z.number(),
  lockoutCounterResetSeconds: z.number(),
  createdAt: date,
  updatedAt: date,
});

export const clientSecretDataSchema = z.object({
  id: z.string(),
  identityUAId: z.string(),
  description: z.string(),
  clientSecretPrefix: z.string(),
  clientSecretTTL: z.number(),
  clientSecretNumUses: z.number(),
  clientSecretNumUsesLimit: z.number(),
  isClientSecretRevoked: z.boolean(),
  createdAt: date,
  updatedAt: date,
});

export const tokenResponse = z.object({
  accessToken: z.string(),
  expiresIn: z.number(),
  accessTokenMaxTTL: z.number(),
  tokenType: z.literal("Bearer"),
});

export const ruleSchema = z.object({
  subject: z.string(),
  action: z.union([z.string(), z.array(z.string()).min(1)]),
  conditions: z.record(z.unknown()).optional(),
  inverted: z.boolean().optional(),
});

export const roleSchema = z.object({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  projectId: z.string(),
  permissions: z.array(ruleSchema),
  createdAt: date.nullable(),
  updatedAt: date.nullable(),
});

const membershipRole = z.object({
  id: z.string(),
  role: z.string(),
  customRoleSlug: z.string().nullable(),
  isTemporary: z.boolean(),
  createdAt: date,
  updatedAt: date,
});

export const identityMembershipSchema = z.object({
  id: z.string(),
  identityId: z.string(),
  projectId: z.string(),
  createdAt: date,
  updatedAt: date,
  roles: z.array(membershipRole),
  identity: z.object({ id: z.string(), name: z.string(), authMethods: z.array(z.string()) }),
});

export const userMembershipSchema = z.object({
  id: z.string(),
  userId: z.string(),
  projectId: z.string(),
  roles: z.array(membershipRole),
  createdAt: date,
  updatedAt: date,
});
