import { createHmac } from "node:crypto";
import type { RemoteSecrets, SyncPlan } from "../../destinations/types.js";

/**
 * The only diff in Ferry. Adapters do I/O; everything about WHICH keys to write or delete lives here:
 * key schema rendering and matching, ownership, `disableSecretDeletion`, incremental writes (against
 * listed values, or against the HMAC fingerprints of the last successful run for write-only APIs).
 *
 * Ownership (stricter than Infisical on purpose, see syncs.md §6: syncs deleting hand-made keys is the
 * most reported bug): a destination key is OWNED when it matches the key schema AND this sync wrote it
 * in a successful run (`ownedKeys`). Source keys are always written (that is what the user asked the sync
 * to hold); only owned keys are ever deleted. Anything else is reported as foreign and never touched.
 */

export const KEY_SCHEMA_MESSAGE =
  "Key schema must include exactly one {{secretKey}} placeholder. It can also include {{environment}} placeholders. Only alphanumeric characters (a-z, A-Z, 0-9), dashes (-), underscores (_), and slashes (/) are allowed besides the placeholders.";

const SECRET_KEY = "{{secretKey}}";
const ENVIRONMENT = /\{\{environment\}\}/g;

export function isValidKeySchema(schema: string): boolean {
  if (schema.split(SECRET_KEY).length !== 2) return false;
  const rest = schema.replace(SECRET_KEY, "").replace(ENVIRONMENT, "");
  return /^[a-zA-Z0-9_\-/]*$/.test(rest);
}

/** Prefix and suffix around `{{secretKey}}` once `{{environment}}` is filled in. */
function schemaParts(schema: string | undefined, environment: string): { prefix: string; suffix: string } {
  if (!schema) return { prefix: "", suffix: "" };
  const filled = schema.replace(ENVIRONMENT, environment);
  const i = filled.indexOf(SECRET_KEY);
  return { prefix: filled.slice(0, i), suffix: filled.slice(i + SECRET_KEY.length) };
}

export function renderKey(schema: string | undefined, key: string, environment: string): string {
  const { prefix, suffix } = schemaParts(schema, environment);
  return `${prefix}${key}${suffix}`;
}

/**
 * Infisical's `matchesSchema`: starts with the prefix, ends with the suffix, and when the schema
 * contains a slash the middle may not (so `/a/{{secretKey}}` does not match `/a/b/KEY`).
 */
export function matchesSchema(destKey: string, schema: string | undefined, environment: string): boolean {
  if (!schema) return true;
  const { prefix, suffix } = schemaParts(schema, environment);
  if (destKey.length < prefix.length + suffix.length + 1) return false;
  if (!destKey.startsWith(prefix) || !destKey.endsWith(suffix)) return false;
  const middle = destKey.slice(prefix.length, destKey.length - suffix.length);
  return !((prefix.includes("/") || suffix.includes("/")) && middle.includes("/"));
}

/** The source name of a matching destination key (for import). */
export function stripSchema(destKey: string, schema: string | undefined, environment: string): string {
  const { prefix, suffix } = schemaParts(schema, environment);
  return destKey.slice(prefix.length, destKey.length - suffix.length);
}

/** HMAC of (key, value) under a per-sync key: lets write-only destinations skip unchanged keys. */
export function fingerprint(hmacKey: Buffer, destKey: string, value: string): string {
  return createHmac("sha256", hmacKey).update(destKey).update("\u0000").update(value).digest("base64url");
}

export interface PlanInput {
  /** Source key → value (already merged with imports, references expanded). */
  source: Map<string, string>;
  keySchema?: string;
  environment: string;
  normalizeKey?: (k: string) => string;
  /** Live destination state, or undefined when the adapter cannot list. */
  remote?: RemoteSecrets;
  /** The destination returns values: compare them. Otherwise fingerprints decide. */
  listValues: boolean;
  ownedKeys: readonly string[];
  fingerprints: Readonly<Record<string, string>>;
  fingerprintOf: (destKey: string, value: string) => string;
  disableSecretDeletion?: boolean;
}

export interface Plan extends SyncPlan {
  /** Destination key → value the sync wants to hold (after key schema and normalisation). */
  desired: Map<string, string>;
  unchanged: string[];
  /** Remote keys the sync does not own: never written, never deleted. */
  foreign: string[];
  /** Owned keys after a successful apply of this plan. */
  nextOwned: string[];
  /** Fingerprints after a successful apply of this plan. */
  nextFingerprints: Record<string, string>;
}

/** Source keys → destination keys. Two source keys colliding on one destination key: the first wins. */
export function desiredKeys(
  source: Map<string, string>,
  keySchema: string | undefined,
  environment: string,
  normalizeKey: (k: string) => string = (k) => k,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of source) {
    const dk = normalizeKey(renderKey(keySchema, k, environment));
    if (!out.has(dk)) out.set(dk, v);
  }
  return out;
}

export function planSync(input: PlanInput): Plan {
  const desired = desiredKeys(input.source, input.keySchema, input.environment, input.normalizeKey);
  const owned = new Set(input.ownedKeys.filter((k) => matchesSchema(k, input.keySchema, input.environment)));
  const upsert: Record<string, string> = {};
  const unchanged: string[] = [];
  const nextFingerprints: Record<string, string> = {};
  for (const [dk, value] of desired) {
    const fp = input.fingerprintOf(dk, value);
    nextFingerprints[dk] = fp;
    const present = input.remote ? input.remote.has(dk) : true;
    const same =
      present &&
      (input.listValues && input.remote
        ? input.remote.get(dk) === value
        : input.fingerprints[dk] === fp && (input.remote !== undefined || owned.has(dk)));
    if (same) unchanged.push(dk);
    else upsert[dk] = value;
  }
  const remoteKeys = input.remote ? [...input.remote.keys()] : [...owned];
  const del: string[] = [];
  const foreign: string[] = [];
  for (const rk of remoteKeys) {
    if (desired.has(rk)) continue;
    if (owned.has(rk)) {
      if (!input.disableSecretDeletion) del.push(rk);
    } else foreign.push(rk);
  }
  // Owned keys that are gone from the destination are forgotten; kept ones (deletion disabled) stay owned.
  const stillThere = (k: string) => !input.remote || input.remote.has(k);
  const kept = [...owned].filter((k) => !desired.has(k) && !del.includes(k) && stillThere(k));
  return {
    upsert,
    delete: del,
    desired,
    unchanged,
    foreign: foreign.sort(),
    nextOwned: [...new Set([...desired.keys(), ...kept])].sort(),
    nextFingerprints,
  };
}

/** Removal (remove-secrets / delete with removeSecrets): every owned key that is still there. */
export function planRemove(input: {
  ownedKeys: readonly string[];
  keySchema?: string;
  environment: string;
  remote?: RemoteSecrets;
}): SyncPlan {
  const del = input.ownedKeys.filter(
    (k) => matchesSchema(k, input.keySchema, input.environment) && (!input.remote || input.remote.has(k)),
  );
  return { upsert: {}, delete: del };
}

/**
 * What import would take from the destination: keys matching the schema, stripped to source names.
 * Values that are null (unreadable) or empty never overwrite anything.
 */
export function importable(
  remote: RemoteSecrets,
  keySchema: string | undefined,
  environment: string,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of remote) {
    if (v === null || v === "" || !matchesSchema(k, keySchema, environment)) continue;
    out.set(stripSchema(k, keySchema, environment), v);
  }
  return out;
}

const MAX_MESSAGE = 1024;

/** A stored `last*Message`: values and tokens scrubbed by the caller's list, at most 1024 characters. */
export function truncateMessage(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text;
}
