import { AppError } from "../lib/errors.js";
import { awsParameterStore } from "./aws-parameter-store/index.js";
import { github } from "./github/index.js";
import { hashicorpVault } from "./hashicorp-vault/index.js";
import { triggerDev } from "./trigger-dev/index.js";
import type { AnyConnectionApp, DestinationAdapter } from "./types.js";

/** The list. Adding a destination = one folder + one entry here + one fake in tests/fakes. */
export const destinations = [hashicorpVault, triggerDev, github, awsParameterStore] as const;

export type DestinationSlug = (typeof destinations)[number]["slug"];

/** Map by key, refusing duplicates (exported so the rule itself is testable). */
export function indexUnique<T>(items: readonly T[], key: (t: T) => string, what: string): Map<string, T> {
  const map = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    if (map.has(k)) throw new Error(`Duplicate ${what} '${k}' in the destination registry`);
    map.set(k, item);
  }
  return map;
}

// Built once at import: a duplicate slug fails startup, not a request.
const bySlug = indexUnique<DestinationAdapter>(destinations, (d) => d.slug, "destination slug");

/** Connection apps, one per kind (several destinations may share one, e.g. both AWS syncs → "aws"). */
export const connectionApps: readonly AnyConnectionApp[] = [
  ...new Map(destinations.map((d) => [d.connection.app, d.connection as AnyConnectionApp])).values(),
];
const byApp = new Map(connectionApps.map((a) => [a.app, a]));

export function isDestinationSlug(slug: string): slug is DestinationSlug {
  return bySlug.has(slug);
}

export function getDestination(slug: string): DestinationAdapter {
  const d = bySlug.get(slug);
  if (!d) throw new AppError("NOT_FOUND", `Unknown secret sync destination '${slug}'`);
  return d;
}

export function getConnectionApp(app: string): AnyConnectionApp {
  const a = byApp.get(app);
  if (!a) throw new AppError("NOT_FOUND", `Unknown app connection '${app}'`);
  return a;
}
