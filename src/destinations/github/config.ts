import { z } from "zod";

/** Infisical's github-sync-schemas / github-connection-schemas, with their messages. */

const organizationScope = z.object({
  scope: z.literal("organization"),
  org: z.string().trim().min(1, "Organization name required"),
  visibility: z.enum(["all", "private", "selected"]),
  selectedRepositoryIds: z.number().array().optional(),
});

const repositoryScope = z.object({
  scope: z.literal("repository"),
  owner: z.string().trim().min(1, "Repository owner name required"),
  repo: z.string().trim().min(1, "Repository name required"),
});

const repositoryEnvironmentScope = z.object({
  scope: z.literal("repository-environment"),
  owner: z.string().trim().min(1, "Repository owner name required"),
  repo: z.string().trim().min(1, "Repository name required"),
  env: z.string().trim().min(1, "Environment name required"),
});

export const githubConfigSchema = z
  .discriminatedUnion("scope", [organizationScope, repositoryScope, repositoryEnvironmentScope])
  .superRefine((c, ctx) => {
    if (c.scope !== "organization") return;
    const ids = c.selectedRepositoryIds ?? [];
    if (c.visibility === "selected" && ids.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["selectedRepositoryIds"],
        message: "Select at least 1 repository",
      });
    }
    if (c.visibility !== "selected" && ids.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["selectedRepositoryIds"],
        message: 'Selected repositories is only supported for visibility "Selected"',
      });
    }
  });

export type GitHubConfig = z.infer<typeof githubConfigSchema>;

/** GitHub Enterprise Server hosts: a hostname with an optional port; a scheme or trailing slash is dropped. */
const host = z
  .string()
  .trim()
  .transform((h) => h.replace(/^https?:\/\//, "").replace(/\/+$/, ""))
  .refine((h) => /^[A-Za-z0-9.-]+(?::\d{1,5})?$/.test(h), { message: "Invalid host" })
  .optional();

const instance = { instanceType: z.enum(["cloud", "server"]).default("cloud"), host };

const hostRequiredForServer = (c: { instanceType: string; host?: string }, ctx: z.RefinementCtx) => {
  if (c.instanceType === "server" && !c.host) {
    ctx.addIssue({ code: "custom", path: ["host"], message: "Host is required for server instance type" });
  }
};

export const githubMethods = {
  pat: z
    .object({ personalAccessToken: z.string().trim().min(1, "Personal Access Token required"), ...instance })
    .superRefine(hostRequiredForServer),
  /** The server's GitHub App (GITHUB_APP_ID / GITHUB_APP_PRIVATE_KEY) acting through this installation. */
  "github-app": z
    .object({ installationId: z.string().trim().min(1, "Installation ID required"), ...instance })
    .superRefine(hostRequiredForServer),
};
