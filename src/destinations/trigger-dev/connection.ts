import { DestinationError, isDestinationError } from "../errors.js";
import { defineConnectionApp } from "../types.js";
import { createTriggerDevClient } from "./client.js";
import { triggerDevMethods } from "./config.js";

export const triggerDevConnection = defineConnectionApp({
  app: "trigger-dev",
  name: "Trigger.dev",
  methods: triggerDevMethods,
  publicFields: { "api-key": ["instanceUrl"] },

  async validate(credentials, ctx) {
    try {
      await createTriggerDevClient(credentials, ctx).listProjects();
    } catch (err) {
      if (!isDestinationError(err) || err.retryable) throw err;
      throw new DestinationError({
        ...err.toJSON(),
        message: `Failed to validate credentials: ${err.message}`,
      });
    }
  },
});
