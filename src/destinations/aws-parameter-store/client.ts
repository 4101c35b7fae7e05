import { randomUUID } from "node:crypto";
import {
  AddTagsToResourceCommand,
  DeleteParametersCommand,
  GetParametersByPathCommand,
  PutParameterCommand,
  SSMClient,
} from "@aws-sdk/client-ssm";
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import { collectPages } from "../../lib/http-client.js";
import { DestinationError, type DestinationErrorCode, scrub } from "../errors.js";
import type { CredentialsOf, IoCtx } from "../types.js";
import type { awsMethods } from "./config.js";

export type AwsCredentials = CredentialsOf<typeof awsMethods>;
type StaticCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string };

const THROTTLING = new Set([
  "ThrottlingException",
  "Throttling",
  "TooManyUpdates",
  "TooManyRequestsException",
  "RequestLimitExceeded",
]);
const AUTH = new Set([
  "UnrecognizedClientException",
  "InvalidClientTokenId",
  "InvalidSignatureException",
  "SignatureDoesNotMatch",
  "IncompleteSignature",
  "ExpiredTokenException",
  "ExpiredToken",
]);
// AWS sends no Retry-After; Infisical waits 1 s between throttled SSM calls, so we suggest the same.
const THROTTLE_RETRY_AFTER_MS = 1000;

/** Maps an AWS SDK v3 error to a DestinationError (the SDK's own retries are off: maxAttempts 1). */
export function awsError(
  err: unknown,
  what: string,
  sensitive: string[],
  secretKey?: string,
): DestinationError {
  if (err instanceof DestinationError) return err;
  const e = err as {
    name?: string;
    message?: string;
    $fault?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.name ?? "Error";
  const status = e.$metadata?.httpStatusCode;
  let code: DestinationErrorCode;
  let retryable = false;
  if (name === "AbortError") code = "ABORTED";
  else if (name === "TimeoutError" || name === "RequestTimeout") [code, retryable] = ["TIMEOUT", true];
  else if (status === undefined) [code, retryable] = ["NETWORK", true];
  else if (THROTTLING.has(name) || status === 429) [code, retryable] = ["RATE_LIMITED", true];
  else if (status >= 500 || e.$fault === "server") [code, retryable] = ["UNAVAILABLE", true];
  else if (AUTH.has(name) || status === 401) code = "UNAUTHORIZED";
  else if (name.startsWith("AccessDenied") || status === 403) code = "FORBIDDEN";
  else if (name === "ParameterNotFound" || status === 404) code = "NOT_FOUND";
  else code = "REJECTED";
  const detail =
    status === undefined && e.message ? e.message : `${name}${e.message ? `: ${e.message}` : ""}`;
  return new DestinationError({
    code,
    message: scrub(`${what} failed: ${detail}`, sensitive),
    retryable,
    ...(status === undefined ? {} : { status }),
    ...(code === "RATE_LIMITED" ? { retryAfterMs: THROTTLE_RETRY_AFTER_MS } : {}),
    ...(secretKey === undefined ? {} : { secretKey }),
    cause: err,
  });
}

const sdkOptions = (io: IoCtx) => ({
  maxAttempts: 1, // the sync worker owns retries
  requestHandler: {
    requestTimeout: io.http.timeoutMs,
    connectionTimeout: Math.min(io.http.timeoutMs, 10_000),
  },
});

/** The server's own identity (for AssumeRole): explicit env keys, else the SDK default chain. */
function platformCredentials(io: IoCtx): StaticCredentials | undefined {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = io.env;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return {
    accessKeyId,
    secretAccessKey,
    ...(io.env.AWS_SESSION_TOKEN ? { sessionToken: io.env.AWS_SESSION_TOKEN } : {}),
  };
}

function stsClient(io: IoCtx, region: string, credentials: StaticCredentials | undefined): STSClient {
  const endpoint = io.env.AWS_ENDPOINT_URL_STS ?? io.env.AWS_ENDPOINT_URL;
  return new STSClient({
    region,
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    ...sdkOptions(io),
  });
}

/**
 * Static credentials for this run. assume-role calls STS AssumeRole every run (15 min session) with the
 * organization id as ExternalId, which is the trust-policy condition Infisical documents.
 */
export async function resolveCredentials(
  creds: AwsCredentials,
  io: IoCtx,
  region: string,
): Promise<StaticCredentials> {
  if (creds.method === "access-key") {
    return { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey };
  }
  try {
    const command = new AssumeRoleCommand({
      RoleArn: creds.roleArn,
      RoleSessionName: `ferry-app-connection-${randomUUID()}`,
      DurationSeconds: 900,
      ...(io.orgId ? { ExternalId: io.orgId } : {}),
    });
    const sts = stsClient(io, region, platformCredentials(io));
    const out = await timed(io, (abortSignal) => sts.send(command, { abortSignal }));
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey) throw new Error("no credentials returned");
    return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken };
  } catch (err) {
    const mapped = awsError(err, "STS AssumeRole", []);
    if (mapped.retryable) throw mapped;
    throw new DestinationError({
      ...mapped.toJSON(),
      message: `Failed to assume role - verify credentials and role configuration (${mapped.message})`,
    });
  }
}

export async function callerIdentity(io: IoCtx, credentials: StaticCredentials): Promise<void> {
  const sts = stsClient(io, "us-east-1", credentials);
  await timed(io, (abortSignal) => sts.send(new GetCallerIdentityCommand({}), { abortSignal }));
}

/**
 * Per-call deadline. The SDK's own requestTimeout only watches socket inactivity after connect, so a
 * server that accepts and never answers is cut off here instead, and reported as TIMEOUT (not ABORTED).
 */
async function timed<T>(io: IoCtx, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = AbortSignal.timeout(io.http.timeoutMs);
  try {
    return await call(AbortSignal.any([io.signal, deadline]));
  } catch (err) {
    if (deadline.aborted && !io.signal.aborted) {
      throw new DestinationError({
        code: "TIMEOUT",
        message: "AWS request timed out",
        retryable: true,
        cause: err,
      });
    }
    throw err;
  }
}

/** The SSM calls a sync needs, with paging and batch limits applied. */
export function createSsmApi(io: IoCtx, region: string, credentials: StaticCredentials) {
  const endpoint = io.env.AWS_ENDPOINT_URL_SSM ?? io.env.AWS_ENDPOINT_URL;
  const ssm = new SSMClient({ region, credentials, ...(endpoint ? { endpoint } : {}), ...sdkOptions(io) });
  const sensitive = [credentials.secretAccessKey, credentials.sessionToken ?? ""];

  return {
    /** One level under `path` (Recursive false, as Infisical), decrypted, 10 per page (the API maximum). */
    async listByPath(path: string): Promise<Array<{ name: string; value: string }>> {
      try {
        const params = await collectPages(async (next) => {
          const command = new GetParametersByPathCommand({
            Path: path,
            Recursive: false,
            WithDecryption: true,
            MaxResults: 10,
            NextToken: next,
          });
          const out = await timed(io, (abortSignal) => ssm.send(command, { abortSignal }));
          return { items: out.Parameters ?? [], next: out.NextToken };
        });
        return params.map((p) => ({ name: p.Name ?? "", value: p.Value ?? "" }));
      } catch (err) {
        throw awsError(err, "SSM GetParametersByPath", sensitive);
      }
    },

    async put(name: string, value: string, keyId: string | undefined, secretKey: string): Promise<void> {
      const command = new PutParameterCommand({
        Name: name,
        Value: value,
        Type: "SecureString",
        Overwrite: true,
        ...(keyId ? { KeyId: keyId } : {}),
      });
      try {
        await timed(io, (abortSignal) => ssm.send(command, { abortSignal }));
      } catch (err) {
        throw awsError(err, `SSM PutParameter ${name}`, [...sensitive, value], secretKey);
      }
    },

    /** PutParameter cannot carry tags together with Overwrite, hence a separate call. */
    async tag(name: string, tags: Array<{ key: string; value: string }>, secretKey: string): Promise<void> {
      const command = new AddTagsToResourceCommand({
        ResourceType: "Parameter",
        ResourceId: name,
        Tags: tags.map((t) => ({ Key: t.key, Value: t.value })),
      });
      try {
        await timed(io, (abortSignal) => ssm.send(command, { abortSignal }));
      } catch (err) {
        throw awsError(err, `SSM AddTagsToResource ${name}`, sensitive, secretKey);
      }
    },

    /** At most 10 names per call (API limit). Names that do not exist come back as InvalidParameters: fine. */
    async deleteBatch(names: string[]): Promise<void> {
      const command = new DeleteParametersCommand({ Names: names });
      try {
        await timed(io, (abortSignal) => ssm.send(command, { abortSignal }));
      } catch (err) {
        throw awsError(err, "SSM DeleteParameters", sensitive, names[0]);
      }
    },
  };
}
