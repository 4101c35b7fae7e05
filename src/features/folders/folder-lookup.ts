import { and, eq } from "drizzle-orm";
import type { Executor } from "../../db/client.js";
import { environments, folders } from "../../db/schema/index.js";

export type FolderRef = {
  folderId: string;
  envId: string;
  environment: string; // slug
  environmentName: string;
  path: string;
  projectId: string;
};

/**
 * Resolves (project, environment slug, normalised path) to a folder in one indexed query (folders store
 * their full path). Returns undefined when the environment or the folder does not exist; callers pick
 * the error message, which differs by route in Infisical.
 */
export async function findFolder(
  ex: Executor,
  projectId: string,
  environment: string,
  path: string,
): Promise<FolderRef | undefined> {
  const [row] = await ex
    .select({
      folderId: folders.id,
      envId: environments.id,
      environment: environments.slug,
      environmentName: environments.name,
      path: folders.path,
      projectId: environments.projectId,
    })
    .from(folders)
    .innerJoin(environments, eq(environments.id, folders.envId))
    .where(
      and(eq(environments.projectId, projectId), eq(environments.slug, environment), eq(folders.path, path)),
    );
  return row;
}

export async function findEnvironment(ex: Executor, projectId: string, slug: string) {
  const [row] = await ex
    .select()
    .from(environments)
    .where(and(eq(environments.projectId, projectId), eq(environments.slug, slug)));
  return row;
}
