import { z } from "zod";
import type { StoredMetadata } from "../../db/schema/index.js";
import { type Aad, open, seal } from "../../lib/crypto/envelope.js";
import type { SecretRow, SecretWithPlace, TagRef } from "./secrets-repo.js";

/**
 * Infisical's secret wire shapes (`secretRawSchema` and its per-route extensions, api.md §4.1) and the
 * one place where a stored row is decrypted and reshaped. Response schemas strip anything not listed.
 */
export const HIDDEN_VALUE = "<hidden-by-infisical>";

const date = z.date().or(z.string());
const actorSchema = z
  .object({
    actorId: z.string().nullable().optional(),
    actorType: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    membershipId: z.string().nullable().optional(),
    groupId: z.string().nullable().optional(),
  })
  .nullable()
  .optional();

export const secretRawSchema = z.object({
  id: z.string(),
  _id: z.string(),
  workspace: z.string(),
  environment: z.string(),
  version: z.number().int(),
  type: z.string(),
  secretKey: z.string(),
  secretValue: z.string(),
  secretComment: z.string(),
  secretReminderNote: z.string().nullable().optional(),
  secretReminderRepeatDays: z.number().int().nullable().optional(),
  skipMultilineEncoding: z.boolean().nullable().optional(),
  createdAt: date,
  updatedAt: date,
  actor: actorSchema,
  isRotatedSecret: z.boolean().optional(),
  rotationId: z.string().nullable().optional(),
});

const tagSchema = z.object({
  id: z.string(),
  slug: z.string(),
  color: z.string().nullable(),
  name: z.string(),
});
const metadataSchema = z.object({ key: z.string(), value: z.string(), isEncrypted: z.boolean() });

/** update and delete responses */
export const secretWithHiddenSchema = secretRawSchema.extend({ secretValueHidden: z.boolean() });
/** list, get by name, get by id */
export const secretReadSchema = secretWithHiddenSchema.extend({
  secretPath: z.string(),
  tags: z.array(tagSchema).optional(),
  secretMetadata: z.array(metadataSchema).optional(),
});

export type SecretView = z.infer<typeof secretReadSchema>;

export const secretAad = (id: string, column: string): Aad => ({ table: "secrets", column, id });
const metaAad = (id: string, key: string) => secretAad(`${id}:${key}`, "metadata");

export type MetadataInput = { key: string; value: string; isEncrypted?: boolean };

/** Seals the entries flagged `isEncrypted`; plain ones stay readable (Infisical's metadata is not secret). */
export function sealMetadata(dk: Buffer, id: string, items: MetadataInput[]): StoredMetadata[] {
  return items.map((m) =>
    m.isEncrypted
      ? {
          key: m.key,
          isEncrypted: true,
          encryptedValue: seal(dk, m.value, metaAad(id, m.key)).toString("base64"),
        }
      : { key: m.key, value: m.value, isEncrypted: false },
  );
}

export type ViewContext = {
  projectId: string;
  /** Decrypted project data key. */
  dk: Buffer;
  /** Whether the caller may read shared values (`readValue`); personal values are always shown. */
  canReadValue: (s: SecretWithPlace | (SecretRow & { secretPath: string })) => boolean;
};

export type PlainSecret = {
  value: string;
  comment: string;
  reminderNote: string | null;
  metadata: { key: string; value: string; isEncrypted: boolean }[];
};

export function decryptRow(dk: Buffer, s: SecretRow): PlainSecret {
  const dec = (b: Buffer | null, col: string) =>
    b ? open(dk, b, secretAad(s.id, col)).toString("utf8") : null;
  return {
    value: dec(s.encryptedValue, "encrypted_value") ?? "",
    comment: dec(s.encryptedComment, "encrypted_comment") ?? "",
    reminderNote: dec(s.encryptedReminderNote, "encrypted_reminder_note"),
    metadata: s.metadata.map((m) => ({
      key: m.key,
      isEncrypted: m.isEncrypted,
      value:
        m.isEncrypted && m.encryptedValue
          ? open(dk, Buffer.from(m.encryptedValue, "base64"), metaAad(s.id, m.key)).toString("utf8")
          : (m.value ?? ""),
    })),
  };
}

/** Where a secret sits, for its view (a row read with its folder can be passed as both arguments). */
export type ViewPlace = { secretPath: string; environment: string; tags?: TagRef[] };

/**
 * The full read shape. `plain` is passed in so callers that expand references can substitute the value;
 * values the caller may not read are masked (and never decrypted into the response). The place comes
 * apart from the row so that no caller copies the row with `{ ...row, secretPath, … }` (see changeAt in
 * secrets-notify.ts for what such a copy costs).
 */
export function toView(
  s: SecretRow,
  at: ViewPlace,
  plain: PlainSecret,
  projectId: string,
  canRead: boolean,
): SecretView {
  const hidden = s.type === "shared" && !canRead;
  return {
    id: s.id,
    _id: s.id,
    workspace: projectId,
    environment: at.environment,
    version: s.version,
    type: s.type,
    secretKey: s.key,
    secretValue: hidden ? HIDDEN_VALUE : plain.value,
    secretComment: plain.comment,
    secretReminderNote: plain.reminderNote,
    secretReminderRepeatDays: s.reminderRepeatDays,
    skipMultilineEncoding: s.skipMultilineEncoding,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    actor: s.actorId
      ? {
          actorId: s.actorId,
          actorType: s.actorType,
          name: s.actorName,
          membershipId: s.actorMembershipId,
          groupId: null,
        }
      : null,
    isRotatedSecret: false,
    rotationId: null,
    secretValueHidden: hidden,
    secretPath: at.secretPath,
    tags: (at.tags ?? []).map((t) => ({ id: t.id, slug: t.slug, color: t.color, name: t.slug })),
    secretMetadata: hidden ? plain.metadata.filter((m) => !m.isEncrypted) : plain.metadata,
  };
}
