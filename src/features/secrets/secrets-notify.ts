import { sql } from "drizzle-orm";
import { type Executor, rowsOf } from "../../db/client.js";
import type { ChangeBus, ChangeKind, SecretChange } from "../events/change-bus.js";

/**
 * Change notifications for secret writes (contract in events/change-bus.ts). Callers collect one
 * `FolderChange` per affected folder while writing and call `publishChanges` only after commit. Folders
 * that import a changed folder (directly or through up to MAX_IMPORT_DEPTH hops of imports) get one
 * `import-changed` notification each.
 */
export const MAX_IMPORT_DEPTH = 5;

export type FolderPlace = {
  projectId: string;
  environment: string;
  environmentId: string;
  secretPath: string;
  folderId: string;
};

/**
 * A change notification for `place`, built field by field. Not `{ ...place, kind, … }`: on Node 20's
 * V8 an object made by spread and then given more properties survives the young-generation collections
 * it should die in (about a quarter of such copies were promoted in a loop that kept none of them;
 * bench/NOTES.md, 2026-11-25), which on the write and delete paths cost every request collector time.
 */
export function changeAt(
  place: FolderPlace,
  kind: ChangeKind,
  keys: string[],
  personal: boolean,
): SecretChange {
  return {
    projectId: place.projectId,
    environment: place.environment,
    environmentId: place.environmentId,
    secretPath: place.secretPath,
    folderId: place.folderId,
    kind,
    keys,
    personal,
  };
}

/** Accumulates changes per folder: one notification per folder per operation. */
export class ChangeSet {
  private readonly byFolder = new Map<string, SecretChange>();
  add(place: FolderPlace, kind: ChangeKind, key: string, personal = false) {
    const c = this.byFolder.get(place.folderId);
    if (c) {
      if (!c.keys.includes(key)) c.keys.push(key);
      return;
    }
    this.byFolder.set(place.folderId, changeAt(place, kind, [key], personal));
  }
  get changes(): SecretChange[] {
    return [...this.byFolder.values()];
  }
}

/**
 * Folders importing any of `changed` (directly or through up to MAX_IMPORT_DEPTH hops), in ONE query:
 * a recursive CTE `imp(folder_id, depth)` seeded from the changed folders' `(env_id, path)`.
 */
export async function importersOf(ex: Executor, changed: FolderPlace[]): Promise<FolderPlace[]> {
  if (changed.length === 0) return [];
  const src = sql.join(
    changed.map((c) => sql`SELECT ${c.environmentId}::uuid, ${c.secretPath}::text`),
    sql` UNION ALL `,
  );
  const rows = await rowsOf<{ importers: FolderPlace[] }>(
    sql`WITH RECURSIVE imp(folder_id, depth) AS (
        SELECT si.folder_id, 1 FROM secret_imports si JOIN (${src}) AS src(env_id, path)
          ON si.import_env = src.env_id AND si.import_path = src.path
        UNION
        SELECT si.folder_id, imp.depth + 1 FROM imp
          JOIN folders fo ON fo.id = imp.folder_id
          JOIN secret_imports si ON si.import_env = fo.env_id AND si.import_path = fo.path
        WHERE imp.depth < ${sql.raw(String(MAX_IMPORT_DEPTH))}
      )
      SELECT coalesce(jsonb_agg(DISTINCT jsonb_build_object('folderId', fo.id, 'secretPath', fo.path,
          'environmentId', e.id, 'environment', e.slug, 'projectId', e.project_id)), '[]'::jsonb) AS importers
      FROM imp JOIN folders fo ON fo.id = imp.folder_id JOIN environments e ON e.id = fo.env_id`,
    ex,
  );
  return rows[0]?.importers ?? [];
}

/** Publishes the changes, then one `import-changed` per importing folder not itself changed. */
export function publishWithImporters(bus: ChangeBus, changes: SecretChange[], importers: FolderPlace[]) {
  for (const c of changes) bus.publish(c);
  const changed = new Set(changes.map((c) => c.folderId));
  for (const f of importers) {
    if (changed.has(f.folderId)) continue;
    changed.add(f.folderId);
    bus.publish(changeAt(f, "import-changed", [], false));
  }
}

export async function publishChanges(ex: Executor, bus: ChangeBus, set: ChangeSet) {
  const changes = set.changes;
  if (changes.length === 0) return;
  // Imports carry shared secrets only, so a personal override never changes what an importer sees.
  const shared = changes.filter((c) => !c.personal);
  publishWithImporters(bus, changes, await importersOf(ex, shared));
}
