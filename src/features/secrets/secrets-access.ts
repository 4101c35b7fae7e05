import { sql } from "drizzle-orm";
import { type Executor, rowsOf } from "../../db/client.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { Actor } from "../auth/actor.js";
import { type FolderRef, findFolder } from "../folders/folder-lookup.js";
import { normalizePath } from "../folders/paths.js";
import { type Ability, assertCan, can } from "../permissions/can.js";
import type { TagRef } from "./secrets-repo.js";

/**
 * Permission, folder and tag helpers shared by the secret read and write services.
 *
 * Infisical's legacy `read` action means "describe and read the value", so either spelling grants each.
 */
type Fields = { environment: string; secretPath: string; secretName?: string };

export const canDescribe = (a: Ability, f: Fields) =>
  can(a, "describeSecret", "secrets", f) || can(a, "read", "secrets", f);
export const canReadValue = (a: Ability, f: Fields) =>
  can(a, "readValue", "secrets", f) || can(a, "read", "secrets", f);

export function assertDescribe(a: Ability, f: Fields) {
  if (!canDescribe(a, f)) assertCan(a, "describeSecret", "secrets", f);
}

/** Secret names: trimmed by the schema; Infisical refuses `:` and `/`. */
export function assertSecretName(name: string) {
  if (name.length === 0) throw new AppError("BAD_REQUEST", "Secret name cannot be empty");
  if (name.includes(":") || name.includes("/")) {
    throw new AppError("BAD_REQUEST", "Secret name cannot contain colon or forward slash.");
  }
}

export const folderNotFound = (path: string, env: string, name: string) =>
  new AppError("NOT_FOUND", `Folder with path '${path}' in environment with slug '${env}' not found`, {
    name,
  });

/** Resolves folders once per (path) within an operation; a missing one is a 404 named after the op. */
export function folderResolver(ex: Executor, projectId: string, environment: string, errorName: string) {
  const cache = new Map<string, FolderRef>();
  return async (rawPath: string | undefined): Promise<FolderRef> => {
    const path = normalizePath(rawPath);
    const hit = cache.get(path);
    if (hit) return hit;
    const f = await findFolder(ex, projectId, environment, path);
    if (!f) throw folderNotFound(path, environment, errorName);
    cache.set(path, f);
    return f;
  };
}

/** Tags by id within a project; Infisical's 404 "Tag not found. Found <slugs>" when any is missing. */
export async function resolveTags(ex: Executor, projectId: string, tagIds: string[]): Promise<TagRef[]> {
  const ids = [...new Set(tagIds)];
  if (ids.length === 0) return [];
  const valid = ids.filter(isUuid);
  const rows =
    valid.length === 0
      ? []
      : await rowsOf<TagRef>(
          sql`SELECT id, slug, color FROM secret_tags WHERE project_id = ${projectId} AND id IN (${sql.join(
            valid.map((v) => sql`${v}`),
            sql`, `,
          )})`,
          ex,
        );
  if (rows.length !== ids.length) {
    throw new AppError("NOT_FOUND", `Tag not found. Found ${rows.map((r) => r.slug).join(",")}`);
  }
  return rows;
}

/** The caller as recorded on the secret row (`actor` in responses). */
export const writerOf = (actor: Actor, membershipId: string) => ({
  actorType: actor.type,
  actorId: actor.id,
  actorName: actor.name,
  actorMembershipId: membershipId,
});

/** Postgres unique violations (23505) surface as Infisical's 400, never as a 500. */
export function isUniqueViolation(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 3 && e; i++) {
    if ((e as { code?: string }).code === "23505") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
