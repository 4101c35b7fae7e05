import { sql } from "drizzle-orm";
import { batched } from "../../db/batched.js";
import { type Db, type Executor, rowsOf } from "../../db/client.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { findFolder } from "../folders/folder-lookup.js";
import { normalizePath } from "../folders/paths.js";
import type { Ability } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import type { Prepared } from "./prepared.js";
import { expandReferences, hasReferences } from "./secret-references.js";
import { assertDescribe, canDescribe, canReadValue, folderNotFound } from "./secrets-access.js";
import {
  findSecretById,
  findSecretByName,
  findSharedSecretsByName,
  listSecrets,
  type NameLookup,
  type NameLookupResult,
  type SecretWithPlace,
  sharedSecretsOfFolders,
} from "./secrets-repo.js";
import { decryptRow, type SecretView, toView } from "./secrets-view.js";

export type ListQuery = {
  projectId: string;
  environment: string;
  secretPath?: string;
  recursive?: boolean;
  includeImports?: boolean;
  tagSlugs?: string[];
  expandSecretReferences?: boolean;
  viewSecretValue?: boolean;
};
export type GetQuery = {
  projectId: string;
  environment: string;
  secretPath?: string;
  secretName: string;
  type?: "shared" | "personal";
  version?: number;
  expandSecretReferences?: boolean;
  viewSecretValue?: boolean;
  includeImports?: boolean;
};
export type ImportView = {
  secretPath: string;
  environment: string;
  folderId?: string;
  secrets: SecretView[];
};

const MAX_IMPORT_DEPTH = 5;

export function createSecretsReader(deps: {
  db: Db;
  keyring: Keyring;
  audit: AuditLog;
  permissions: PermissionsService;
  /** Prepared statements for the get-by-name hot path. */
  run: Prepared;
}) {
  const { db, keyring, audit, permissions, run } = deps;
  const sharedByName = batched<NameLookup, NameLookupResult>(
    (q) => findSecretByName(run, q, null),
    (qs) => findSharedSecretsByName(run, qs),
  );

  /** Per-request reshaping: decrypt, mask without readValue, expand references when asked and allowed. */
  function shaper(projectId: string, ability: Ability, dk: Buffer, expand: boolean, view: boolean) {
    const folderValues = new Map<string, Promise<Map<string, string>>>();
    const values = (environment: string, path: string) => {
      const k = `${environment}:${path}`;
      let p = folderValues.get(k);
      if (!p) {
        p = (async () => {
          const f = await findFolder(db, projectId, environment, path);
          const rows = f ? await sharedSecretsOfFolders(db, [f.folderId]) : [];
          return new Map(rows.map((r) => [r.key, decryptRow(dk, r).value]));
        })();
        folderValues.set(k, p);
      }
      return p;
    };
    const canRead = (environment: string, secretPath: string, secretName: string) => {
      const f = { environment, secretPath, secretName };
      return canDescribe(ability, f) && canReadValue(ability, f);
    };
    /** Shapes `s` whose readability the caller has already decided. */
    const shapeAs = async (s: SecretWithPlace, readable: boolean): Promise<SecretView> => {
      const plain = decryptRow(dk, s);
      if (expand && readable && hasReferences(plain.value)) {
        plain.value = await expandReferences(
          plain.value,
          { environment: s.environment, secretPath: s.secretPath, key: s.key },
          { values, canRead },
        );
      }
      return toView(s, s, plain, projectId, readable);
    };
    const shape = (s: SecretWithPlace): Promise<SecretView> =>
      shapeAs(
        s,
        s.type === "personal" ||
          (view &&
            canReadValue(ability, {
              environment: s.environment,
              secretPath: s.secretPath,
              secretName: s.key,
            })),
      );
    return { shape, shapeAs };
  }

  async function importsOf(folderId: string, shape: (s: SecretWithPlace) => Promise<SecretView>, a: Ability) {
    const out: ImportView[] = [];
    const seen = new Set([folderId]);
    let frontier = [folderId];
    for (let depth = 0; depth < MAX_IMPORT_DEPTH && frontier.length > 0; depth++) {
      const rows = await rowsOf<{ folder_id: string | null; slug: string; import_path: string }>(
        sql`SELECT f.id AS folder_id, e.slug, si.import_path FROM secret_imports si
          JOIN environments e ON e.id = si.import_env
          LEFT JOIN folders f ON f.env_id = si.import_env AND f.path = si.import_path
          WHERE si.folder_id IN (${sql.join(
            frontier.map((f) => sql`${f}`),
            sql`, `,
          )}) ORDER BY si.position`,
        db,
      );
      const next: string[] = [];
      for (const r of rows) {
        if (r.folder_id && seen.has(r.folder_id)) continue;
        if (!canDescribe(a, { environment: r.slug, secretPath: r.import_path })) continue;
        const secrets = r.folder_id ? await sharedSecretsOfFolders(db, [r.folder_id]) : [];
        const visible = secrets.filter((s) =>
          canDescribe(a, { environment: s.environment, secretPath: s.secretPath, secretName: s.key }),
        );
        out.push({
          secretPath: r.import_path,
          environment: r.slug,
          ...(r.folder_id ? { folderId: r.folder_id } : {}),
          secrets: await Promise.all(visible.map(shape)),
        });
        if (r.folder_id) {
          seen.add(r.folder_id);
          next.push(r.folder_id);
        }
      }
      frontier = next;
    }
    return out;
  }

  function recordRead(actor: Actor, projectId: string, resource: Record<string, unknown>, eventType: string) {
    audit.recordLater({ eventType, actor, projectId, resource });
  }

  return {
    async list(actor: Actor, q: ListQuery) {
      const secretPath = normalizePath(q.secretPath);
      const { ability } = await permissions.getProjectPermission(actor, q.projectId);
      assertDescribe(ability, { environment: q.environment, secretPath });
      const folder = await findFolder(db, q.projectId, q.environment, secretPath);
      if (!folder) {
        throw new AppError(
          "NOT_FOUND",
          `Folder with path '${secretPath}' in environment '${q.environment}' was not found. Please ensure the environment slug and secret path is correct.`,
          { name: "SecretPathNotFound" },
        );
      }
      const rows = await listSecrets(db, {
        envId: folder.envId,
        path: secretPath,
        recursive: q.recursive ?? false,
        userId: actor.type === "user" ? actor.id : null,
        tagSlugs: q.tagSlugs,
      });
      const dk = await keyring.key(q.projectId);
      const view = q.viewSecretValue ?? true;
      const { shape } = shaper(q.projectId, ability, dk, q.expandSecretReferences ?? false, view);
      const visible = rows.filter((s) =>
        canDescribe(ability, { environment: s.environment, secretPath: s.secretPath, secretName: s.key }),
      );
      const secrets = await Promise.all(visible.map(shape));
      const imports = q.includeImports ? await importsOf(folder.folderId, shape, ability) : undefined;
      recordRead(
        actor,
        q.projectId,
        { environment: q.environment, secretPath, numberOfSecrets: secrets.length, recursive: !!q.recursive },
        "get-secrets",
      );
      return imports ? { secrets, imports } : { secrets };
    },

    async getByName(actor: Actor, q: GetQuery) {
      const secretPath = normalizePath(q.secretPath);
      const { ability } =
        permissions.cachedProjectPermission(actor, q.projectId) ??
        (await permissions.getProjectPermission(actor, q.projectId));
      const personal = q.type === "personal";
      const lookup = {
        projectId: q.projectId,
        environment: q.environment,
        path: secretPath,
        key: q.secretName,
      };
      const found = personal
        ? await findSecretByName(run, lookup, actor.id)
        : await sharedByName.load(lookup);
      if (!found) throw folderNotFound(secretPath, q.environment, "GetSecretByName");
      const view = q.viewSecretValue ?? true;
      let secret = found.secret;
      if (secret && q.version !== undefined && q.version !== secret.version) secret = undefined;
      const dk = keyring.cachedKey(q.projectId) ?? (await keyring.key(q.projectId));
      const { shape, shapeAs } = shaper(q.projectId, ability, dk, q.expandSecretReferences ?? false, view);
      if (!secret && q.includeImports && !personal) {
        // Slow path only: look through the folder's imports, nearest first.
        const imports = await importsOf(found.folderId, shape, ability);
        const hit = imports.flatMap((i) => i.secrets).find((s) => s.secretKey === q.secretName);
        if (hit) return hit;
      }
      if (!secret) throw new AppError("NOT_FOUND", `Secret with name '${q.secretName}' not found`);
      const fields = { environment: q.environment, secretPath, secretName: q.secretName };
      assertDescribe(ability, fields);
      if (view && !personal && !canReadValue(ability, fields)) {
        throw new AppError("PERMISSION_DENIED", "You are not allowed to readValue on secrets", {
          name: "ForbiddenReadSecretError",
        });
      }
      // Readability was checked just above (a personal secret is its owner's own).
      const out = await shapeAs(secret, personal || view);
      // Built field by field, not `{ ...fields, … }` (see changeAt in secrets-notify.ts).
      const resource = {
        environment: q.environment,
        secretPath,
        secretName: q.secretName,
        secretId: secret.id,
        secretVersion: secret.version,
      };
      recordRead(actor, q.projectId, resource, "get-secret");
      return out;
    },

    async getById(actor: Actor, id: string) {
      const secret = isUuid(id) ? await findSecretById(db as Executor, id) : undefined;
      const notFound = () => new AppError("NOT_FOUND", `Secret with ID '${id}' not found`);
      if (!secret) throw notFound();
      const { ability } = await permissions.getProjectPermission(actor, secret.projectId);
      if (secret.type === "personal" && secret.userId !== actor.id) throw notFound();
      const fields = {
        environment: secret.environment,
        secretPath: secret.secretPath,
        secretName: secret.key,
      };
      assertDescribe(ability, fields);
      const dk = await keyring.key(secret.projectId);
      const out = await shaper(secret.projectId, ability, dk, false, true).shape(secret);
      const resource = {
        environment: secret.environment,
        secretPath: secret.secretPath,
        secretName: secret.key,
        secretId: secret.id,
      };
      recordRead(actor, secret.projectId, resource, "get-secret");
      return out;
    },
  };
}

export type SecretsReader = ReturnType<typeof createSecretsReader>;
