import { DestinationError } from "../errors.js";
import { defineConnectionApp } from "../types.js";
import { awsError, callerIdentity, resolveCredentials } from "./client.js";
import { awsMethods } from "./config.js";

export const awsConnection = defineConnectionApp({
  app: "aws",
  name: "AWS",
  methods: awsMethods,
  publicFields: { "access-key": ["accessKeyId"], "assume-role": [] },

  /** STS GetCallerIdentity needs no IAM permission, so it checks the credentials and nothing else. */
  async validate(credentials, ctx) {
    try {
      const resolved = await resolveCredentials(credentials, ctx, "us-east-1");
      await callerIdentity(ctx, resolved);
    } catch (err) {
      const mapped = awsError(err, "STS GetCallerIdentity", []);
      if (mapped.retryable) throw mapped;
      throw new DestinationError({
        ...mapped.toJSON(),
        message: "Unable to validate connection: verify credentials",
        cause: err,
      });
    }
  },
});
