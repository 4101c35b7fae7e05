import { type SQL, sql } from "drizzle-orm";
import { type Executor, rowsOf } from "../../db/client.js";
import type { StoredMetadata } from "../../db/schema/index.js";
import type { Prepared, Statement } from "./prepared.js";

/**
 * Secret reads as raw SQL: each read is one statement that also carries the folder path and the tags,
 * so the hot paths (get by name, list) make exactly one round trip. Writes use Drizzle in the service.
 */
export type TagRef = { id: string; slug: string; color: string | null };

export type SecretRow = {
  id: string;
  folderId: string;
  key: string;
  type: "shared" | "personal";
  userId: string | null;
  version: number;
  encryptedValue: Buffer;
  encryptedComment: Buffer | null;
  skipMultilineEncoding: boolean;
  encryptedReminderNote: Buffer | null;
  reminderRepeatDays: number | null;
  metadata: StoredMetadata[];
  actorType: string | null;
  actorId: string | null;
  actorName: string | null;
  actorMembershipId: string | null;
  createdAt: Date;
  updatedAt: Date;
};

/** A secret row as the routes need it: plus its folder path, environment and tags. */
export type SecretWithPlace = SecretRow & { secretPath: string; environment: string; tags: TagRef[] };

type Raw = Record<string, unknown>;
const buf = (v: unknown): Buffer | null =>
  v == null ? null : Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array);
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

/** Maps a `secrets` row read through raw SQL (snake_case; PGlite returns bytea as Uint8Array). */
export function fromRaw(r: Raw): SecretRow {
  return {
    id: r.id as string,
    folderId: r.folder_id as string,
    key: r.key as string,
    type: r.type as "shared" | "personal",
    userId: (r.user_id as string | null) ?? null,
    version: Number(r.version),
    encryptedValue: buf(r.encrypted_value) ?? Buffer.alloc(0),
    encryptedComment: buf(r.encrypted_comment),
    skipMultilineEncoding: Boolean(r.skip_multiline_encoding),
    encryptedReminderNote: buf(r.encrypted_reminder_note),
    reminderRepeatDays: r.reminder_repeat_days == null ? null : Number(r.reminder_repeat_days),
    metadata: (r.metadata as StoredMetadata[] | null) ?? [],
    actorType: (r.actor_type as string | null) ?? null,
    actorId: (r.actor_id as string | null) ?? null,
    actorName: (r.actor_name as string | null) ?? null,
    actorMembershipId: (r.actor_membership_id as string | null) ?? null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
  };
}

/**
 * Reads pack a secret's columns into ONE `json` array column (bytea as hex). Both drivers then parse a
 * single field with JSON.parse instead of describing, naming and converting ~20 columns per row, which
 * was the largest single cost of a get by name in the bench profiles (pg's per-field setup, PGlite's
 * result decoding). `fromPacked` is the only reader of this layout; `extra` expressions follow the
 * secret's 18 columns.
 */
export const packedText = (a: string, extra: string[] = []) =>
  `json_build_array(${[
    `${a}.id, ${a}.folder_id, ${a}.key, ${a}.type, ${a}.user_id, ${a}.version`,
    `encode(${a}.encrypted_value, 'hex'), encode(${a}.encrypted_comment, 'hex'), ${a}.skip_multiline_encoding`,
    `encode(${a}.encrypted_reminder_note, 'hex'), ${a}.reminder_repeat_days, ${a}.metadata`,
    `${a}.actor_type, ${a}.actor_id, ${a}.actor_name, ${a}.actor_membership_id, ${a}.created_at, ${a}.updated_at`,
    ...extra,
  ].join(", ")})`;

const hex = (v: unknown): Buffer | null => (v == null ? null : Buffer.from(v as string, "hex"));

/** A row packed by `packedText`: its first 18 elements. */
export function fromPacked(p: unknown[]): SecretRow {
  return {
    id: p[0] as string,
    folderId: p[1] as string,
    key: p[2] as string,
    type: p[3] as "shared" | "personal",
    userId: (p[4] as string | null) ?? null,
    version: Number(p[5]),
    encryptedValue: hex(p[6]) ?? Buffer.alloc(0),
    encryptedComment: hex(p[7]),
    skipMultilineEncoding: Boolean(p[8]),
    encryptedReminderNote: hex(p[9]),
    reminderRepeatDays: p[10] == null ? null : Number(p[10]),
    metadata: (p[11] as StoredMetadata[] | null) ?? [],
    actorType: (p[12] as string | null) ?? null,
    actorId: (p[13] as string | null) ?? null,
    actorName: (p[14] as string | null) ?? null,
    actorMembershipId: (p[15] as string | null) ?? null,
    createdAt: new Date(p[16] as string),
    updatedAt: new Date(p[17] as string),
  };
}

const TAGS_OF_S_TEXT = `(SELECT coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'slug', t.slug, 'color', t.color) ORDER BY t.slug), '[]'::jsonb)
  FROM secret_tag_links l JOIN secret_tags t ON t.id = l.tag_id WHERE l.secret_id = s.id)`;

/** Secret `s` packed with its folder path, environment slug and tags (elements 18–20). */
const PLACED_S_TEXT = packedText("s", ["f.path", "e.slug", TAGS_OF_S_TEXT]);
const PLACED_S = sql.raw(PLACED_S_TEXT);

/** Adds the place to the row object itself (a spread copy of its 18 fields cost more than the rest). */
const fromPlaced = (p: unknown[]): SecretWithPlace => {
  const s = fromPacked(p) as SecretWithPlace;
  s.secretPath = p[18] as string;
  s.environment = p[19] as string;
  s.tags = (p[20] as TagRef[] | null) ?? [];
  return s;
};

/** `s.user_id IS NULL OR s.user_id = <caller>`: shared secrets plus only the caller's own overrides. */
const visibleTo = (userId: string | null) =>
  userId ? sql`(s.user_id IS NULL OR s.user_id = ${userId})` : sql`s.user_id IS NULL`;

const inList = (values: string[]) =>
  sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  );

/**
 * The secret is a correlated scalar subquery on purpose: as a LEFT JOIN, PostgreSQL's generic plan for
 * the prepared statement probed `secrets_shared_key_uq` on `key` alone and filtered on the folder after,
 * scanning every folder's row of that key (cost grew with the table). The subquery always binds both
 * index columns. The unique indexes allow at most one row per (folder, key[, user]).
 */
const getByNameText = (typeCond: string) => `SELECT f.id AS f_id, e.id AS e_id,
    (SELECT ${PLACED_S_TEXT} FROM secrets s WHERE s.folder_id = f.id AND s.key = $4 AND ${typeCond}) AS p
  FROM environments e
  JOIN folders f ON f.env_id = e.id AND f.path = $3
  WHERE e.project_id = $1 AND e.slug = $2`;
export const GET_SHARED: Statement = {
  name: "ferry_secret_get_shared",
  text: getByNameText("s.type = 'shared'"),
  types: ["uuid", "text", "text", "text"],
};
export const GET_PERSONAL: Statement = {
  name: "ferry_secret_get_personal",
  text: getByNameText("s.type = 'personal' AND s.user_id = $5"),
  types: ["uuid", "text", "text", "text", "uuid"],
};

/**
 * The folder of lookup `q` (project `q.p`, env slug `q.e`, path `q.f`) for the batched statements, as
 * a LATERAL subquery: `OFFSET 0` keeps PostgreSQL from flattening it into a join, which the generic
 * plan then ran as a probe on the environment alone with the path as a filter (every folder of the
 * environment read per lookup). Kept apart, each lookup probes both unique indexes with all columns.
 */
export const FOLDER_OF_Q = `SELECT fo.id, fo.env_id, fo.path, e.slug FROM environments e
    JOIN folders fo ON fo.env_id = e.id AND fo.path = q.f
    WHERE e.project_id = q.p AND e.slug = q.e OFFSET 0`;

/**
 * Several shared gets by name in ONE statement: the lookups are a JSON array of
 * `{i, p: project, e: env slug, f: path, k: key}` and each answer row carries its lookup's `i`. Lookups
 * whose folder does not exist return no row.
 */
export const GET_SHARED_MANY: Statement = {
  name: "ferry_secret_get_shared_many",
  text: `SELECT q.i, f.id AS f_id, f.env_id AS e_id,
    (SELECT ${packedText("s", ["f.path", "f.slug", TAGS_OF_S_TEXT])}
      FROM secrets s WHERE s.folder_id = f.id AND s.key = q.k AND s.type = 'shared') AS p
  FROM json_to_recordset($1) AS q(i int, p uuid, e text, f text, k text)
  CROSS JOIN LATERAL (${FOLDER_OF_Q}) f`,
  types: ["json"],
};

export type NameLookup = { projectId: string; environment: string; path: string; key: string };
export type NameLookupResult = { folderId: string; envId: string; secret?: SecretWithPlace } | undefined;

/** A get-by-name answer row (`f_id`, `e_id`, packed secret `p` or null) of the single or batched statement. */
function lookupResult(r: Raw): NonNullable<NameLookupResult> {
  const p = r.p as unknown[] | null;
  return { folderId: r.f_id as string, envId: r.e_id as string, secret: p ? fromPlaced(p) : undefined };
}

export async function findSharedSecretsByName(
  run: Prepared,
  qs: readonly NameLookup[],
): Promise<NameLookupResult[]> {
  const arg = JSON.stringify(
    qs.map((q, i) => ({ i, p: q.projectId, e: q.environment, f: q.path, k: q.key })),
  );
  const rows = await run(GET_SHARED_MANY, [arg]);
  const out: NameLookupResult[] = new Array(qs.length).fill(undefined);
  for (const r of rows) out[r.i as number] = lookupResult(r);
  return out;
}

/**
 * Get one secret by (project, env slug, path, key), shared or (with `personalOf`) that user's override:
 * ONE prepared statement (the get-by-name hot path). Returns undefined when the folder does not exist
 * and `{ secret: undefined }` when the folder exists but the secret does not.
 */
export async function findSecretByName(
  run: Prepared,
  q: NameLookup,
  personalOf: string | null,
): Promise<{ folderId: string; envId: string; secret?: SecretWithPlace } | undefined> {
  const base = [q.projectId, q.environment, q.path, q.key];
  const rows = personalOf ? await run(GET_PERSONAL, [...base, personalOf]) : await run(GET_SHARED, base);
  const r = rows[0];
  return r ? lookupResult(r) : undefined;
}

export async function findSecretById(ex: Executor, id: string) {
  const rows = await rowsOf<Raw>(
    sql`SELECT ${PLACED_S} AS p, e.project_id
      FROM secrets s JOIN folders f ON f.id = s.folder_id JOIN environments e ON e.id = f.env_id
      WHERE s.id = ${id}`,
    ex,
  );
  const r = rows[0];
  return r ? Object.assign(fromPlaced(r.p as unknown[]), { projectId: r.project_id as string }) : undefined;
}

/** Secrets of a folder (or of its whole subtree), shared plus the caller's overrides, optionally tag-filtered. */
export async function listSecrets(
  ex: Executor,
  q: { envId: string; path: string; recursive: boolean; userId: string | null; tagSlugs?: string[] },
): Promise<SecretWithPlace[]> {
  const prefix = q.path === "/" ? "/" : `${q.path}/`;
  const where: SQL[] = [sql`f.env_id = ${q.envId}`, visibleTo(q.userId)];
  where.push(
    q.recursive ? sql`(f.path = ${q.path} OR starts_with(f.path, ${prefix}))` : sql`f.path = ${q.path}`,
  );
  if (q.tagSlugs && q.tagSlugs.length > 0) {
    where.push(sql`EXISTS (SELECT 1 FROM secret_tag_links l JOIN secret_tags t ON t.id = l.tag_id
      WHERE l.secret_id = s.id AND t.slug IN (${inList(q.tagSlugs)}))`);
  }
  const rows = await rowsOf<Raw>(
    sql`SELECT ${PLACED_S} AS p
      FROM folders f JOIN environments e ON e.id = f.env_id JOIN secrets s ON s.folder_id = f.id
      WHERE ${sql.join(where, sql` AND `)}
      ORDER BY f.path, s.key, s.type DESC`,
    ex,
  );
  return rows.map((r) => fromPlaced(r.p as unknown[]));
}

/** Shared secrets of several folders, keyed by folder id (imports and reference expansion). */
export async function sharedSecretsOfFolders(ex: Executor, folderIds: string[]): Promise<SecretWithPlace[]> {
  if (folderIds.length === 0) return [];
  const rows = await rowsOf<Raw>(
    sql`SELECT ${PLACED_S} AS p
      FROM secrets s JOIN folders f ON f.id = s.folder_id JOIN environments e ON e.id = f.env_id
      WHERE s.folder_id IN (${inList(folderIds)}) AND s.type = 'shared'
      ORDER BY f.path, s.key`,
    ex,
  );
  return rows.map((r) => fromPlaced(r.p as unknown[]));
}

/** Every row (shared and all overrides) with these keys in a folder, for writes inside a transaction. */
export async function rowsForKeys(ex: Executor, folderId: string, keys: string[]): Promise<SecretRow[]> {
  if (keys.length === 0) return [];
  const rows = await rowsOf<Raw>(
    sql`SELECT s.* FROM secrets s WHERE s.folder_id = ${folderId} AND s.key IN (${inList(keys)}) FOR UPDATE`,
    ex,
  );
  return rows.map(fromRaw);
}

export async function tagsOfSecrets(ex: Executor, secretIds: string[]): Promise<Map<string, TagRef[]>> {
  const out = new Map<string, TagRef[]>();
  if (secretIds.length === 0) return out;
  const rows = await rowsOf<Raw>(
    sql`SELECT l.secret_id, t.id, t.slug, t.color FROM secret_tag_links l JOIN secret_tags t ON t.id = l.tag_id
      WHERE l.secret_id IN (${inList(secretIds)}) ORDER BY t.slug`,
    ex,
  );
  for (const r of rows) {
    const list = out.get(r.secret_id as string) ?? [];
    list.push({ id: r.id as string, slug: r.slug as string, color: (r.color as string | null) ?? null });
    out.set(r.secret_id as string, list);
  }
  return out;
}
