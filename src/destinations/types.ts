import type { Logger } from "pino";
import type { z } from "zod";
import type { HttpClient } from "../lib/http-client.js";

/**
 * The destination contract. One `defineDestination({...})` per folder; everything else (routes, the
 * options list, dispatch) is derived from the registry list.
 *
 * Rules for adapters:
 * - I/O only. Keys arrive already in destination form (key schema applied, `normalizeKey` applied).
 *   Diffing, `disableSecretDeletion`, initial-sync behaviour live once in the sync engine.
 * - Every failure is a `DestinationError` (see ./errors.ts); never a raw fetch/SDK error, and never a
 *   value or token in a message.
 * - No retries inside an adapter: the worker retries when `retryable` and honours `retryAfterMs`.
 * - Everything external arrives through the ctx (no process.env, no imports from features/).
 */

/**
 * Server-level settings an adapter may need, passed in from Config by the caller. Endpoint overrides are
 * how tests point the SDK-based adapters at the fakes.
 */
export interface DestinationEnv {
  AWS_ENDPOINT_URL?: string;
  AWS_ENDPOINT_URL_SSM?: string;
  AWS_ENDPOINT_URL_STS?: string;
  /**
   * The server's own AWS identity for the `assume-role` method (Infisical's
   * INF_APP_CONNECTION_AWS_ACCESS_KEY_ID/SECRET_ACCESS_KEY). Unset → the AWS SDK default chain.
   */
  AWS_ACCESS_KEY_ID?: string;
  AWS_SECRET_ACCESS_KEY?: string;
  AWS_SESSION_TOKEN?: string;
  /** API base for github.com connections (GitHub Enterprise connections use their own host). */
  GITHUB_API_URL?: string;
  /** The server's GitHub App, for `github-app` connections (a PEM; PKCS#1 or PKCS#8). */
  GITHUB_APP_ID?: string;
  GITHUB_APP_PRIVATE_KEY?: string;
}

/** What every connection or destination call receives besides its own inputs. */
export interface IoCtx {
  /** Carries `allowInternal` (ALLOW_INTERNAL_DESTINATIONS) and the per-request timeout. */
  http: HttpClient;
  /** A child logger ({ syncId, destination, attempt }). Never log values or credentials. */
  log: Logger;
  signal: AbortSignal;
  env: DestinationEnv;
  /** Organization id: the STS ExternalId for AWS assume-role, as Infisical's trust policy expects. */
  orgId?: string;
}

// ---------------------------------------------------------------------------------------------------
// App connections

type MethodMap = Record<string, z.ZodTypeAny>;

/** Decrypted credentials of one connection: `method` plus that method's fields (a discriminated union). */
export type CredentialsOf<M extends MethodMap> = {
  [K in keyof M & string]: Readonly<{ method: K } & z.infer<M[K]>>;
}[keyof M & string];

export interface ConnectionApp<M extends MethodMap = MethodMap> {
  /** Wire slug (`app`): "hashicorp-vault", "trigger-dev", "github", "aws". */
  app: string;
  /** Display name used in messages and the options list. */
  name: string;
  /** method → zod schema of that method's credentials, with Infisical's messages. */
  methods: M;
  /**
   * Credential fields that may be returned in API responses, per method. Credentials are otherwise
   * never returned (they are encrypted at rest and write-only over the API).
   */
  publicFields: { [K in keyof M]: readonly string[] };
  /** "Test connection": one real call to the vendor. Throws DestinationError with a token-free message. */
  validate(credentials: CredentialsOf<M>, ctx: IoCtx): Promise<void>;
}

export type AnyConnectionApp = ConnectionApp<MethodMap>;

export const defineConnectionApp = <M extends MethodMap>(app: ConnectionApp<M>): ConnectionApp<M> => app;

/**
 * Parses `{ method, credentials }` as sent to the connection routes into the ctx form. Throws the zod
 * error (the error handler turns it into a 422) or a plain Error for an unknown method.
 */
export function parseCredentials(
  app: AnyConnectionApp,
  method: string,
  credentials: unknown,
): { method: string } & Record<string, unknown> {
  const schema = app.methods[method];
  if (!schema) throw new Error(`Unsupported ${app.name} connection method '${method}'`);
  return { ...(schema.parse(credentials) as Record<string, unknown>), method };
}

/** The fields of stored credentials that may be shown (e.g. `instanceUrl`), for connection responses. */
export function publicCredentials(
  app: AnyConnectionApp,
  credentials: { method: string },
): Record<string, unknown> {
  const fields = app.publicFields[credentials.method] ?? [];
  const source = credentials as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => source[f] !== undefined).map((f) => [f, source[f]]));
}

// ---------------------------------------------------------------------------------------------------
// Destinations

/** Remote keys in destination form → value, or null when the API does not return values. */
export type RemoteSecrets = Map<string, string | null>;

/** What to write. The engine never sends a key in both lists. */
export interface SyncPlan {
  upsert: Record<string, string>;
  delete: string[];
}

/** `writes` = mutating requests sent to the destination (for logs/metrics and tests). */
export interface ApplyResult {
  writes: number;
}

export interface DestinationCtx<
  C extends z.ZodTypeAny = z.ZodTypeAny,
  O extends z.ZodTypeAny = z.ZodTypeAny,
  M extends MethodMap = MethodMap,
> extends IoCtx {
  config: z.infer<C>;
  /** The destination-specific sync options only (parsed by `syncOptionsSchema`). */
  syncOptions: z.infer<O>;
  credentials: CredentialsOf<M>;
}

export interface DestinationCapabilities {
  /** `list` is implemented: the engine diffs against the live destination. */
  list: boolean;
  /** `list` returns values (null otherwise): unchanged keys can be skipped, import is possible. */
  listValues: boolean;
  /** Infisical's `canImportSecrets`. */
  import: boolean;
  /** Infisical's `canRemoveSecretsOnDeletion`. */
  removeOnDelete: boolean;
}

export interface DestinationAdapter<
  C extends z.ZodTypeAny = z.ZodTypeAny,
  O extends z.ZodTypeAny = z.ZodTypeAny,
  M extends MethodMap = MethodMap,
  S extends string = string,
> {
  /** Wire value, Infisical-compatible: "aws-parameter-store". */
  slug: S;
  /** Infisical display name: "AWS Parameter Store". */
  name: string;
  /** The app-connection kind this destination needs (Infisical's SECRET_SYNC_CONNECTION_MAP). */
  connectionApp: string;
  connection: ConnectionApp<M>;
  /** destinationConfig. */
  configSchema: C;
  /** Destination-specific extra syncOptions (merged into the shared base by syncs-schemas). */
  syncOptionsSchema: O;
  capabilities: DestinationCapabilities;
  /**
   * The destination's canonical spelling of a key (GitHub upper-cases names). The engine applies it
   * after the key schema so its diff compares like with like. Identity when absent.
   */
  normalizeKey?(key: string): string;
  /** Required when `capabilities.list`. */
  list?(ctx: DestinationCtx<C, O, M>): Promise<RemoteSecrets>;
  /** Writes `plan.upsert` and removes `plan.delete` (missing keys are not an error). */
  apply(ctx: DestinationCtx<C, O, M>, plan: SyncPlan): Promise<ApplyResult>;
}

/** Keeps the literal types of one definition while checking it against the contract. */
export const defineDestination = <
  C extends z.ZodTypeAny,
  O extends z.ZodTypeAny,
  M extends MethodMap,
  const S extends string,
>(
  adapter: DestinationAdapter<C, O, M, S>,
): DestinationAdapter<C, O, M, S> => adapter;
