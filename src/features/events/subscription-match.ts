import picomatch from "picomatch";
import type { SecretChange } from "./change-bus.js";
import type { ProjectEvent, ProjectEventType } from "./event-bus.js";

/**
 * Which events an SSE subscription receives (events-auth.md §1.4, upstream's `$canReceiveEvent`):
 * some registration with the same event name whose conditions hold, where
 * - `conditions.environmentSlug` must equal the event's environment exactly, and
 * - `conditions.secretPath` (default "/") is a picomatch glob over the event's folder path with
 *   `strictSlashes: false`. So "/app/**" covers "/app" and everything under it but not "/apple", and "/"
 *   alone covers only the root folder. The k8s operator's "/app**" matches "/app" and "/apple" but not
 *   "/app/x"; we mirror that exactly rather than "fixing" it, because clients were written against it.
 * A registration without conditions matches every environment and path.
 *
 * The per-event permission check (CASL, at delivery time) is the route's job; this module is pure.
 */

export interface EventRegistration {
  event: ProjectEventType;
  conditions?: { environmentSlug: string; secretPath?: string };
}

/** The part of an event that matching looks at. */
export type EventTarget = Pick<ProjectEvent, "type" | "environment" | "secretPath">;

export type SubscriptionMatcher = (event: EventTarget) => boolean;

/** Permission action (subject `secret-events`) needed to subscribe to, and receive, each event. */
export const EVENT_PERMISSION_ACTIONS = Object.freeze({
  "secret:create": "subscribe-on-created",
  "secret:update": "subscribe-on-updated",
  "secret:delete": "subscribe-on-deleted",
  "secret:import-mutation": "subscribe-on-import-mutations",
} as const satisfies Record<ProjectEventType, string>);

export type SecretEventAction = (typeof EVENT_PERMISSION_ACTIONS)[ProjectEventType];

const GLOB_OPTIONS = { strictSlashes: false } as const;

function compileOne(reg: EventRegistration): SubscriptionMatcher {
  if (!reg.conditions) return (e) => e.type === reg.event;
  const env = reg.conditions.environmentSlug;
  const pattern = reg.conditions.secretPath ?? "/";
  // picomatch throws on an empty pattern; upstream's CASL $glob treats it as "never matches".
  if (pattern === "") return () => false;
  const pathMatches = picomatch(pattern, GLOB_OPTIONS);
  return (e) => e.type === reg.event && e.environment === env && pathMatches(e.secretPath);
}

/**
 * Compile a subscription's registrations once, when the stream opens; the returned function is then
 * called per event and does no glob parsing.
 */
export function compileRegistrations(registrations: readonly EventRegistration[]): SubscriptionMatcher {
  const byType = new Map<ProjectEventType, SubscriptionMatcher[]>();
  for (const reg of registrations) {
    const list = byType.get(reg.event) ?? [];
    list.push(compileOne(reg));
    byType.set(reg.event, list);
  }
  return (event) => byType.get(event.type)?.some((m) => m(event)) ?? false;
}

/** The SSE event for a domain change, or undefined when streams must not see it (personal overrides). */
export function eventTypeForChange(
  change: Pick<SecretChange, "kind" | "personal">,
): ProjectEventType | undefined {
  if (change.personal) return undefined;
  switch (change.kind) {
    case "created":
      return "secret:create";
    case "updated":
      return "secret:update";
    case "deleted":
      return "secret:delete";
    case "import-changed":
      return "secret:import-mutation";
    default: {
      const unreachable: never = change.kind;
      return unreachable;
    }
  }
}

/** Adapts a committed domain change (change-bus.ts) into the event the project bus carries. */
export function projectEventFromChange(change: SecretChange): ProjectEvent | undefined {
  const type = eventTypeForChange(change);
  if (!type) return undefined;
  return {
    projectId: change.projectId,
    type,
    environment: change.environment,
    secretPath: change.secretPath,
    keys: type === "secret:import-mutation" ? [] : change.keys,
  };
}
