import type { AppError } from "../../lib/errors.js";
import type { Actor } from "../auth/actor.js";
import type { PermissionsService, ProjectPermission } from "./permissions-service.js";

/**
 * Permission for a resource looked up by its own id (a tag, folder, environment or import), which
 * Infisical authorises against the resource's project rather than any project id in the URL. A resource
 * of another organisation gets the resource's own `notFound`, not getProjectPermission's "Project with
 * <id> not found", which would confirm that the id exists and name its project.
 */
export async function permissionForResource(
  permissions: PermissionsService,
  actor: Actor,
  projectId: string,
  notFound: AppError,
): Promise<ProjectPermission> {
  const project = await permissions.getProject(projectId);
  if (!project || project.orgId !== actor.orgId) throw notFound;
  return permissions.getProjectPermission(actor, projectId);
}
