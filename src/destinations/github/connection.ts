import { DestinationError, isDestinationError } from "../errors.js";
import { defineConnectionApp } from "../types.js";
import { githubError, openGitHub } from "./client.js";
import { githubMethods } from "./config.js";

export const githubConnection = defineConnectionApp({
  app: "github",
  name: "GitHub",
  methods: githubMethods,
  publicFields: { pat: ["instanceType", "host"], "github-app": ["instanceType", "host"] },

  async validate(credentials, ctx) {
    try {
      const { octokit, token } = await openGitHub(credentials, ctx);
      try {
        if (credentials.method === "pat") await octokit.rest.users.getAuthenticated();
        else await octokit.rest.apps.listReposAccessibleToInstallation({ per_page: 1 });
      } catch (err) {
        throw githubError(err, "GitHub credential check", [token]);
      }
    } catch (err) {
      if (isDestinationError(err) && (err.retryable || err.code === "INVALID_CONFIG")) throw err;
      throw new DestinationError({
        code: isDestinationError(err) ? err.code : "UNAUTHORIZED",
        message:
          credentials.method === "pat"
            ? "Unable to validate Personal Access Token: verify token has proper permissions"
            : "Unable to validate GitHub App installation: verify the installation ID and app permissions",
        retryable: false,
        cause: err,
      });
    }
  },
});
