import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import { batched } from "../../db/batched.js";
import { type Db, rowsOf } from "../../db/client.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { AppError } from "../../lib/errors.js";
import { toRow } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ChangeBus } from "../events/change-bus.js";
import { findFolder } from "../folders/folder-lookup.js";
import { normalizePath } from "../folders/paths.js";
import { assertCan, can } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import type { Prepared, Statement } from "./prepared.js";
import { canReadValue, folderNotFound } from "./secrets-access.js";
import { changeAt, type FolderPlace, importersOf, publishWithImporters } from "./secrets-notify.js";
import { FOLDER_OF_Q, fromPacked, packedText } from "./secrets-repo.js";
import { decryptRow, type SecretView, toView } from "./secrets-view.js";

/**
 * `DELETE /api/v4/secrets/{name}` (and the v3 raw delete): a benchmarked hot path, so the folder
 * lookup, the delete and the audit record are ONE statement (autocommit makes them atomic), and a
 * folder that no import names needs no other. Permission is decided in memory first; only a denied or
 * failing request pays for the extra queries that pick Infisical's exact error (folder 404 → personal
 * 400 → secret 404 → CASL 403).
 *
 * Shared deletes remove the key's personal overrides in that folder too; personal deletes remove only
 * the caller's override.
 */
export type DeleteQuery = {
  projectId: string;
  environment: string;
  secretPath?: string;
  secretName: string;
  type?: "shared" | "personal";
};

type Raw = Record<string, unknown>;

/**
 * $1 project, $2 env slug, $3 path, $4 key, $5..$11 the audit row, ($12 the caller, personal only).
 * Statement: folder lookup → DELETE … RETURNING → audit INSERT (only when something was deleted; it
 * names the deleted secret and version, shared first, as Infisical's `delete-secret` event does) → the
 * deleted rows, shared first, with whether any import names this folder (one index probe). Only then
 * does the caller look up the importers at every depth, in a second query: PostgreSQL initialises a
 * plan's every node on each execution, so carrying the recursive importer CTE in this statement cost
 * every delete about as much as its audit insert, for folders nobody imports.
 */
const deleteText = (which: string, withImporters: boolean) => `WITH f AS (
    SELECT fo.id, fo.env_id, fo.path FROM folders fo JOIN environments e ON e.id = fo.env_id
    WHERE e.project_id = $1 AND e.slug = $2 AND fo.path = $3
  ), d AS (
    DELETE FROM secrets s WHERE s.folder_id = (SELECT f.id FROM f) AND s.key = $4 AND ${which}
    RETURNING s.*
  ), a AS (
    INSERT INTO audit_logs (org_id, project_id, actor_type, actor_id, actor_name, event_type, resource, ip, user_agent, outcome)
    SELECT $5, $1, $6, $7, $8, 'delete-secret',
      $9::jsonb || jsonb_build_object('secretId', d.id, 'secretVersion', d.version), $10, $11, 'success'
    FROM d ORDER BY (d.type = 'shared') DESC LIMIT 1
  )
  SELECT f.id AS f_id, f.env_id AS e_id, ${withImporters ? IMPORTED_F : "false"} AS imported,
    CASE WHEN d.id IS NULL THEN NULL ELSE ${packedText("d")} END AS p
  FROM f LEFT JOIN d ON true
  ORDER BY (d.type = 'shared') DESC NULLS LAST
  LIMIT 1`;
const IMPORTED_F = `EXISTS (SELECT 1 FROM secret_imports si0 WHERE si0.import_env = f.env_id AND si0.import_path = f.path)`;
const AUDIT_TYPES = ["uuid", "text", "text", "text", "text", "text", "text"];
export const DELETE_SHARED: Statement = {
  name: "ferry_secret_delete_shared",
  text: deleteText("true", true),
  types: ["uuid", "text", "text", "text", ...AUDIT_TYPES],
};
export const DELETE_PERSONAL: Statement = {
  name: "ferry_secret_delete_personal",
  text: deleteText("s.type = 'personal' AND s.user_id = $12", false),
  types: ["uuid", "text", "text", "text", ...AUDIT_TYPES, "uuid"],
};

/**
 * Several shared deletes in ONE statement (one round trip and one commit for all of them): the
 * requests are a JSON array of `{i, p: project, e: env slug, f: path, k: key}` plus each one's audit
 * row, and every answer row carries its request's `i`, shaped as the single statement's. Each request
 * keeps its own all-or-nothing delete and audit record; two requests for the same secret delete it
 * once, and the other finds nothing, as it would one after the other.
 */
export const DELETE_SHARED_MANY: Statement = {
  name: "ferry_secret_delete_shared_many",
  text: `WITH q AS (
    SELECT * FROM json_to_recordset($1)
      AS q(i int, p uuid, e text, f text, k text, o uuid, at text, ai text, an text, r text, ip text, ua text)
  ), f AS (
    SELECT q.i, q.k, fo.id, fo.env_id, fo.path FROM q
    CROSS JOIN LATERAL (${FOLDER_OF_Q}) fo
  ), t AS (
    SELECT f.i, x.id FROM f
    CROSS JOIN LATERAL (SELECT s.id FROM secrets s WHERE s.folder_id = f.id AND s.key = f.k OFFSET 0) x
  ), dd AS (
    DELETE FROM secrets s WHERE s.id = ANY (ARRAY(SELECT t.id FROM t))
    RETURNING s.*
  ), d AS (
    SELECT DISTINCT ON (dd.id) dd.*, t.i AS qi FROM dd JOIN t ON t.id = dd.id ORDER BY dd.id, t.i
  ), a AS (
    INSERT INTO audit_logs (org_id, project_id, actor_type, actor_id, actor_name, event_type, resource, ip, user_agent, outcome)
    SELECT DISTINCT ON (d.qi) q.o, q.p, q.at, q.ai, q.an, 'delete-secret',
      q.r::jsonb || jsonb_build_object('secretId', d.id, 'secretVersion', d.version), q.ip, q.ua, 'success'
    FROM d JOIN q ON q.i = d.qi ORDER BY d.qi, (d.type = 'shared') DESC
  )
  SELECT DISTINCT ON (f.i) f.i, f.id AS f_id, f.env_id AS e_id, ${IMPORTED_F} AS imported,
    CASE WHEN d.id IS NULL THEN NULL ELSE ${packedText("d")} END AS p
  FROM f LEFT JOIN d ON d.qi = f.i
  ORDER BY f.i, (d.type = 'shared') DESC NULLS LAST`,
  types: ["json"],
};

export function createSecretDeleter(deps: {
  db: Db;
  keyring: Keyring;
  permissions: PermissionsService;
  changes: ChangeBus;
  run: Prepared;
  log: Logger;
}) {
  const { db, keyring, permissions, changes, run, log } = deps;
  const deleteShared = batched<unknown[], Raw | undefined>(
    async (params) => (await run(DELETE_SHARED, params))[0],
    async (all) => {
      const arg = JSON.stringify(
        all.map(([p, e, f, k, o, at, ai, an, r, ip, ua], i) => ({ i, p, e, f, k, o, at, ai, an, r, ip, ua })),
      );
      const out: (Raw | undefined)[] = new Array(all.length).fill(undefined);
      for (const r of await run(DELETE_SHARED_MANY, [arg])) out[r.i as number] = r;
      return out;
    },
  );

  /** Only reached when the request will fail: finds the error Infisical would give first. */
  async function reject(actor: Actor, q: DeleteQuery, secretPath: string, personal: boolean): Promise<never> {
    const f = await findFolder(db, q.projectId, q.environment, secretPath);
    if (!f) throw folderNotFound(secretPath, q.environment, "DeleteSecret");
    if (personal) throw new AppError("BAD_REQUEST", "Must be user to delete personal secret");
    const rows = await rowsOf<Raw>(
      sql`SELECT 1 FROM secrets WHERE folder_id = ${f.folderId} AND key = ${q.secretName} LIMIT 1`,
      db,
    );
    if (rows.length === 0) throw new AppError("NOT_FOUND", "Secret not found");
    const { ability } = await permissions.getProjectPermission(actor, q.projectId);
    assertCan(ability, "delete", "secrets", {
      environment: q.environment,
      secretPath,
      secretName: q.secretName,
    });
    throw new AppError("INTERNAL", "Secret delete was refused");
  }

  return async function deleteSecret(actor: Actor, q: DeleteQuery): Promise<SecretView> {
    const secretPath = normalizePath(q.secretPath);
    const personal = q.type === "personal";
    const { ability } =
      permissions.cachedProjectPermission(actor, q.projectId) ??
      (await permissions.getProjectPermission(actor, q.projectId));
    const fields = { environment: q.environment, secretPath, secretName: q.secretName };
    const allowed = personal ? actor.type === "user" : can(ability, "delete", "secrets", fields);
    if (!allowed) return reject(actor, q, secretPath, personal);

    const a = toRow({
      eventType: "delete-secret",
      actor,
      projectId: q.projectId,
      resource: {
        environment: q.environment,
        secretPath,
        secretName: q.secretName,
        type: personal ? "personal" : "shared",
      },
    });
    const params: unknown[] = [q.projectId, q.environment, secretPath, q.secretName];
    params.push(a.orgId, a.actorType, a.actorId, a.actorName, JSON.stringify(a.resource), a.ip, a.userAgent);
    const rows = personal
      ? await run(DELETE_PERSONAL, [...params, actor.id])
      : [await deleteShared.load(params)];
    const r = rows[0];
    if (!r) throw folderNotFound(secretPath, q.environment, "DeleteSecret");
    if (!r.p) throw new AppError("NOT_FOUND", "Secret not found");

    const row = fromPacked(r.p as unknown[]);
    const place: FolderPlace = {
      projectId: q.projectId,
      environment: q.environment,
      environmentId: r.e_id as string,
      secretPath,
      folderId: r.f_id as string,
    };
    // The delete has committed: an importer lookup that fails costs only the import notifications
    // (delivery is at most once), never the answer.
    const importers =
      r.imported === true
        ? await importersOf(db, [place]).catch((err: unknown) => {
            log.error({ err, projectId: q.projectId }, "importer lookup failed after a secret delete");
            return [];
          })
        : [];
    publishWithImporters(changes, [changeAt(place, "deleted", [q.secretName], personal)], importers);
    const dk = keyring.cachedKey(q.projectId) ?? (await keyring.key(q.projectId));
    const canRead = personal || canReadValue(ability, fields);
    return toView(row, { secretPath, environment: q.environment }, decryptRow(dk, row), q.projectId, canRead);
  };
}
