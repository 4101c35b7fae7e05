import { DestinationError, isDestinationError } from "../errors.js";
import { defineConnectionApp } from "../types.js";
import { createVaultClient } from "./client.js";
import { hashicorpVaultMethods } from "./config.js";

export const hashicorpVaultConnection = defineConnectionApp({
  app: "hashicorp-vault",
  name: "HashiCorp Vault",
  methods: hashicorpVaultMethods,
  // Infisical's sanitized Vault connection returns no credential fields.
  publicFields: { "access-token": [], "app-role": [] },

  async validate(credentials, ctx) {
    const vault = createVaultClient(credentials, ctx);
    try {
      await vault.login();
    } catch (err) {
      if (isDestinationError(err) && err.retryable) throw err;
      throw new DestinationError({
        code: "UNAUTHORIZED",
        message: "Unable to validate connection: verify credentials",
        retryable: false,
        cause: err,
      });
    }
    try {
      await vault.lookupSelf();
    } catch (err) {
      if (!isDestinationError(err) || err.retryable) throw err;
      throw new DestinationError({
        ...err.toJSON(),
        message: `Failed to validate credentials: ${err.message}`,
      });
    }
  },
});
