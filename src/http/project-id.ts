import { ZodError, z } from "zod";

/**
 * Infisical's v1 routes name the project `workspaceId`, v2 routes `projectId`, and clients mix them (the
 * Node SDK sends both on some calls). Data-plane routes accept either spelling: both are optional in the
 * schema and `projectIdFrom` picks the route's own name first. A request with neither gets the same 422
 * Zod would have given for the route's own name.
 */
export const projectIdFields = {
  workspaceId: z.string().trim().min(1).optional(),
  projectId: z.string().trim().min(1).optional(),
};

export type ProjectKey = "workspaceId" | "projectId";

export function projectIdFrom(b: { workspaceId?: string; projectId?: string }, key: ProjectKey): string {
  const v = key === "workspaceId" ? (b.workspaceId ?? b.projectId) : (b.projectId ?? b.workspaceId);
  if (v) return v;
  throw new ZodError([
    { code: "invalid_type", expected: "string", received: "undefined", path: [key], message: "Required" },
  ]);
}
