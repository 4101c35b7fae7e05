import type { Logger } from "pino";
import { AppError } from "../../lib/errors.js";
import type { Invalidation } from "../../lib/invalidation.js";
import type { Actor } from "../auth/actor.js";
import type { AuthService } from "../auth/auth-service.js";
import type { LicenseService } from "../license/license-service.js";
import { type Ability, assertCan, can } from "../permissions/can.js";
import type { PermissionsService } from "../permissions/permissions-service.js";
import type { ChangeBus } from "./change-bus.js";
import { createInProcessEventBus, createRedisEventBus, type ProjectEventBus } from "./event-bus.js";
import { CLOSE_MESSAGES, createStreamHub, type RevalidateResult, type StreamInfo } from "./stream-hub.js";
import {
  EVENT_PERMISSION_ACTIONS,
  type EventRegistration,
  projectEventFromChange,
} from "./subscription-match.js";

/**
 * Event subscriptions, app-level wiring:
 * - the project event bus (Redis pub/sub when REDIS_URL is set, so every instance's streams see every
 *   instance's writes exactly once; in-process otherwise);
 * - the fan-out: ONE change-bus subscription turns each committed, shared (non-personal) secret change
 *   into a project event on that bus;
 * - the subscribe-time checks, in upstream's order: membership → per-registration permission →
 *   licence → per-project connection cap (events-auth.md §1.2);
 * - the stream hub, and what it needs to re-check a stream: token still valid, still a member, every
 *   registration still permitted.
 */

export const PLAN_MESSAGE =
  "Event subscriptions are not available on your current plan. Please upgrade to access this feature.";

export interface SubscribeRequest {
  projectId: string;
  register: EventRegistration[];
}

export interface EventsConfig {
  REDIS_URL?: string | undefined;
  SSE_REDIS_CHANNEL: string;
  SSE_PING_INTERVAL_MS: number;
  SSE_PERMISSION_REFRESH_MS: number;
  SSE_MAX_CONNECTIONS_PER_PROJECT: number;
  SSE_MAX_BUFFER_BYTES: number;
}

/** The `secret-events` subject fields a registration is checked against at subscribe time (upstream). */
function registrationFields(reg: EventRegistration) {
  return {
    environment: reg.conditions?.environmentSlug ?? "",
    secretPath: reg.conditions?.secretPath ?? "/",
  };
}

export function createEventsService(deps: {
  config: EventsConfig;
  log: Logger;
  changes: ChangeBus;
  permissions: Pick<PermissionsService, "getProjectPermission">;
  auth: Pick<AuthService, "stillValid" | "verify">;
  license: Pick<LicenseService, "has">;
}) {
  const { config, log, permissions, license } = deps;
  const redisBus = config.REDIS_URL
    ? createRedisEventBus({ url: config.REDIS_URL, log, channel: config.SSE_REDIS_CHANNEL })
    : undefined;
  const bus: ProjectEventBus = redisBus ?? createInProcessEventBus({ log });

  // As upstream, nothing is published while the feature is off: no stream could receive it anyway, and
  // it spares Redis one message per write.
  const stopFanOut = deps.changes.subscribe((change) => {
    if (!license.has("eventSubscriptions")) return;
    const event = projectEventFromChange(change);
    if (event) bus.publish(event);
  });

  function permitted(ability: Ability, registrations: readonly EventRegistration[]): boolean {
    return registrations.every((r) =>
      can(ability, EVENT_PERMISSION_ACTIONS[r.event], "secret-events", registrationFields(r)),
    );
  }

  async function revalidate(s: StreamInfo): Promise<RevalidateResult> {
    if (!(await deps.auth.stillValid(s.token, s.actor.ip))) return { reason: CLOSE_MESSAGES.permission };
    const { ability } = await permissions.getProjectPermission(s.actor, s.projectId);
    return permitted(ability, s.registrations) ? { ability } : { reason: CLOSE_MESSAGES.permission };
  }

  const hub = createStreamHub({
    bus,
    log,
    revalidate,
    pingIntervalMs: config.SSE_PING_INTERVAL_MS,
    refreshIntervalMs: config.SSE_PERMISSION_REFRESH_MS,
    maxPerProject: config.SSE_MAX_CONNECTIONS_PER_PROJECT,
    maxBufferedBytes: config.SSE_MAX_BUFFER_BYTES,
  });

  return {
    bus,
    hub,

    /**
     * Every check before a stream may open; throws the error the client gets. The capacity check comes
     * last and is synchronous, so the caller can open the stream in the same tick.
     */
    async authorize(
      actor: Actor,
      token: string,
      req: SubscribeRequest,
    ): Promise<{ ability: Ability; expiresAt: number }> {
      const { ability } = await permissions.getProjectPermission(actor, req.projectId);
      for (const r of req.register) {
        assertCan(ability, EVENT_PERMISSION_ACTIONS[r.event], "secret-events", registrationFields(r));
      }
      if (!license.has("eventSubscriptions")) throw new AppError("BAD_REQUEST", PLAN_MESSAGE);
      // The token was verified by the auth plugin; this only reads its `exp` for the stream's lifetime,
      // from the auth service's cache of verified tokens (a signature check per stream cost ~10% of the
      // CPU of opening 10,000 streams).
      const claims = await deps.auth.verify(token);
      hub.assertCapacity(req.projectId);
      return { ability, expiresAt: claims.exp ? claims.exp * 1000 : Number.POSITIVE_INFINITY };
    },

    /**
     * Cache invalidations (app.ts forwards them, from this instance and, with Redis, from the others):
     * re-check the affected streams now instead of at the next periodic refresh, so a revoked token or
     * a removed membership closes its streams at once. A token message also follows a renewal, which is
     * why this re-checks rather than closing outright.
     */
    onInvalidation(m: Invalidation): void {
      const done = (p: Promise<void>) =>
        p.catch((err: unknown) => log.error({ err }, "event stream re-check failed"));
      if (m.kind === "token") void done(hub.refreshToken(m.id));
      else if (m.kind === "identity") void done(hub.refresh((s) => s.actor.id === m.id));
      else if (m.kind === "project") void done(hub.refresh((s) => s.projectId === m.id));
      else void done(hub.refresh());
    },

    /** Resolves once the cross-instance bridge is subscribed (immediately without Redis). */
    ready: async (): Promise<void> => redisBus?.ready(),

    async close(): Promise<void> {
      stopFanOut();
      hub.close();
      await bus.close();
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
