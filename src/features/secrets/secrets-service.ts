import { and, eq } from "drizzle-orm";
import type { Logger } from "pino";
import type { Db, DbHandle } from "../../db/client.js";
import { projects } from "../../db/schema/index.js";
import type { Keyring } from "../../lib/crypto/keyring.js";
import { AppError } from "../../lib/errors.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import type { ChangeBus } from "../events/change-bus.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import { createPrepared } from "./prepared.js";
import { createSecretDeleter } from "./secrets-delete.js";
import { createSecretsReader } from "./secrets-read.js";
import { createSecretsWriter } from "./secrets-write.js";

/** The secrets feature: reads (list/get, references, imports), writes, and the fast single delete. */
export function createSecretsService(deps: {
  db: Db;
  dbh: DbHandle;
  keyring: Keyring;
  audit: AuditLog;
  permissions: PermissionsService;
  changes: ChangeBus;
  log: Logger;
}) {
  const run = createPrepared(deps.dbh);
  const reader = createSecretsReader({ ...deps, run });
  const writer = createSecretsWriter(deps);
  const remove = createSecretDeleter({ ...deps, run });

  /**
   * v3 routes name the project by `workspaceId` or by slug (`workspaceSlug` on reads, `projectSlug` on
   * writes); v4 by `projectId`. A slug is looked up within the caller's organisation only.
   */
  async function projectIdOf(actor: Actor, ref: { id?: string; slug?: string }): Promise<string> {
    if (ref.id) return ref.id;
    if (!ref.slug) throw new AppError("BAD_REQUEST", "You must provide projectSlug or workspaceId");
    const [p] = await deps.db
      .select({ id: projects.id })
      .from(projects)
      .where(and(eq(projects.orgId, actor.orgId), eq(projects.slug, ref.slug)));
    if (!p) throw new AppError("NOT_FOUND", `Project with slug '${ref.slug}' not found`);
    return p.id;
  }

  return { ...reader, ...writer, remove, projectIdOf };
}

export type SecretsService = ReturnType<typeof createSecretsService>;
