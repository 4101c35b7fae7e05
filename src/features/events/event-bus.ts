import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import { z } from "zod";

/**
 * Project event bus: carries "secrets changed in (project, environment, folder)" notifications from
 * the instance that committed a write to every SSE stream, on this instance and, with Redis, on every
 * other instance. Delivery is at most once and there is no replay, as upstream (events-auth.md §1.7).
 *
 * Contract:
 * - `publish` never throws and never waits: local listeners run synchronously, in subscription order,
 *   before it returns; a throwing listener is logged and does not affect the others.
 * - Listeners are indexed by project, so publishing to project P touches only P's listeners.
 * - Every listener sees each event once, whichever instance published it.
 * - The event object handed to listeners is frozen and shared by all of them, so per-event work
 *   (e.g. SSE encoding, see sse-format.ts) can be cached on it and done once, not once per listener.
 */

/** Upstream's event names, used as the SSE `event:` field and in `register[].event`. */
export const PROJECT_EVENT_TYPES = [
  "secret:create",
  "secret:update",
  "secret:delete",
  "secret:import-mutation",
] as const;
export type ProjectEventType = (typeof PROJECT_EVENT_TYPES)[number];

export interface ProjectEvent {
  projectId: string;
  type: ProjectEventType;
  environment: string; // environment slug
  secretPath: string; // folder path, "/" for root
  keys: readonly string[]; // empty for secret:import-mutation
}

export type ProjectEventListener = (event: ProjectEvent) => void;

export interface ProjectEventBus {
  publish(event: ProjectEvent): void;
  /** Returns the unsubscribe function; calling it twice is harmless. */
  subscribe(projectId: string, listener: ProjectEventListener): () => void;
  close(): Promise<void>;
}

export type BusLog = Pick<Logger, "info" | "warn" | "error">;

/** Per-project listener sets, shared by both implementations. */
function createListenerIndex(log: BusLog | undefined) {
  const byProject = new Map<string, Set<ProjectEventListener>>();
  return {
    add(projectId: string, listener: ProjectEventListener): () => void {
      let set = byProject.get(projectId);
      if (!set) {
        set = new Set();
        byProject.set(projectId, set);
      }
      // Wrap so the same function subscribed twice gets two independent subscriptions.
      const entry: ProjectEventListener = (e) => listener(e);
      set.add(entry);
      return () => {
        const current = byProject.get(projectId);
        if (!current?.delete(entry)) return;
        if (current.size === 0) byProject.delete(projectId); // don't leak one Map entry per project ever seen
      };
    },
    deliver(event: ProjectEvent): void {
      const set = byProject.get(event.projectId);
      if (!set) return;
      for (const listener of set) {
        try {
          listener(event);
        } catch (err) {
          log?.error({ err, projectId: event.projectId }, "project event listener failed");
        }
      }
    },
    clear(): void {
      byProject.clear();
    },
  };
}

// One defensive copy per publish (not per listener) so a listener cannot change what the next one sees.
function freezeEvent(e: ProjectEvent): ProjectEvent {
  return Object.freeze({
    projectId: e.projectId,
    type: e.type,
    environment: e.environment,
    secretPath: e.secretPath,
    keys: Object.freeze([...e.keys]),
  });
}

/** The embedded default: one process, no Redis. */
export function createInProcessEventBus(opts: { log?: BusLog } = {}): ProjectEventBus {
  const index = createListenerIndex(opts.log);
  return {
    publish: (event) => index.deliver(freezeEvent(event)),
    subscribe: (projectId, listener) => index.add(projectId, listener),
    close: async () => index.clear(),
  };
}

/** How long published events wait to share one Redis message. */
export const PUBLISH_WINDOW_MS = 2;

export const DEFAULT_EVENT_CHANNEL = "ferry:project-events";

export interface RedisEventBusOptions {
  url: string;
  log: BusLog;
  /** Identifies this instance in published messages; random by default. */
  instanceId?: string;
  /** Pub/sub channel; every instance of one deployment must use the same one. */
  channel?: string;
}

export interface RedisProjectEventBus extends ProjectEventBus {
  /** Resolves once the publisher is connected and the channel subscription is active (for startup/tests). */
  ready(): Promise<void>;
}

const wireEvent = z.object({
  projectId: z.string(),
  type: z.enum(PROJECT_EVENT_TYPES),
  environment: z.string(),
  secretPath: z.string(),
  keys: z.array(z.string()),
});
/** One message carries the events published within PUBLISH_WINDOW_MS (`event`: a single one, older form). */
const wireMessage = z.object({
  source: z.string(),
  events: z.array(wireEvent).optional(),
  event: wireEvent.optional(),
});

/**
 * Redis pub/sub fan-out across instances. Each instance delivers its own events locally first (so a
 * Redis outage never stops same-instance streams), then PUBLISHes `{source, events}`: the events of a
 * PUBLISH_WINDOW_MS window go out as one message. Under write load that saves this instance, Redis and
 * every other instance a message per write (a PUBLISH per delete was a tenth of the delete path's CPU);
 * other instances' streams get each event at most that much later. Every instance re-delivers messages
 * from other sources, in order, and drops its own before parsing them, so nothing is seen twice.
 *
 * Two connections because a subscribed Redis connection cannot issue PUBLISH. ioredis reconnects both
 * by itself and re-subscribes the subscriber (`autoResubscribe`).
 */
export function createRedisEventBus(opts: RedisEventBusOptions): RedisProjectEventBus {
  const { log } = opts;
  const instanceId = opts.instanceId ?? randomUUID();
  const channel = opts.channel ?? DEFAULT_EVENT_CHANNEL;
  const index = createListenerIndex(log);

  // No offline queue on the publisher: events are live notifications, so queueing them during an outage
  // would grow memory without bound and replay stale news later. Failing fast makes PUBLISH reject at
  // once, and we log it. The subscriber keeps the queue so its initial SUBSCRIBE waits for a connection.
  const pub = new Redis(opts.url, { enableOfflineQueue: false });
  const sub = new Redis(opts.url, { maxRetriesPerRequest: null });

  // ioredis emits "error" on every failed reconnect attempt and may reconnect before any error at all,
  // so log once per outage: on losing a ready connection or on the first error, then once on recovery.
  let closed = false;
  for (const [role, conn] of [
    ["publisher", pub],
    ["subscriber", sub],
  ] as const) {
    let wasReady = false;
    let reported = false;
    conn.on("close", () => {
      if (closed || reported || !wasReady) return;
      reported = true;
      log.warn({ role, channel }, "event bus lost its Redis connection; cross-instance events paused");
    });
    conn.on("error", (err: Error) => {
      if (closed || reported) return;
      reported = true;
      log.warn({ err, role, channel }, "event bus Redis connection error; cross-instance events paused");
    });
    conn.on("ready", () => {
      if (reported) log.info({ role, channel }, "event bus reconnected to Redis");
      wasReady = true;
      reported = false;
    });
  }

  let publishFailing = false;

  // Messages are serialised with `source` first, so our own echo is recognised without parsing it.
  const ownPrefix = JSON.stringify({ source: instanceId }).slice(0, -1);
  sub.on("message", (ch: string, raw: string) => {
    if (ch !== channel || closed || raw.startsWith(ownPrefix)) return;
    let parsed: z.infer<typeof wireMessage>;
    try {
      parsed = wireMessage.parse(JSON.parse(raw));
    } catch (err) {
      log.warn({ err, channel }, "event bus dropped a malformed Redis message");
      return;
    }
    if (parsed.source === instanceId) return; // already delivered locally by publish()
    for (const e of parsed.events ?? (parsed.event ? [parsed.event] : [])) index.deliver(freezeEvent(e));
  });

  const subscribed = sub.subscribe(channel).then(
    () => undefined,
    (err: unknown) => {
      if (!closed) log.error({ err, channel }, "event bus could not subscribe to its Redis channel");
    },
  );

  const pubReady = new Promise<void>((resolve) => {
    if (pub.status === "ready") resolve();
    else pub.once("ready", () => resolve());
  });

  let outbox: ProjectEvent[] = [];
  const flush = () => {
    const events = outbox;
    outbox = [];
    if (closed || events.length === 0) return;
    const message = JSON.stringify({ source: instanceId, events });
    pub.publish(channel, message).then(
      () => {
        if (publishFailing) log.info({ channel }, "event bus publishing to Redis again");
        publishFailing = false;
      },
      (err: unknown) => {
        if (!publishFailing) {
          log.warn({ err, channel }, "event bus could not publish to Redis; other instances miss events");
        }
        publishFailing = true;
      },
    );
  };

  return {
    publish(event) {
      if (closed) return;
      const frozen = freezeEvent(event);
      index.deliver(frozen);
      if (outbox.length === 0) setTimeout(flush, PUBLISH_WINDOW_MS);
      outbox.push(frozen);
    },
    subscribe: (projectId, listener) => index.add(projectId, listener),
    async ready() {
      await Promise.all([pubReady, subscribed]);
    },
    async close() {
      closed = true;
      index.clear();
      // disconnect() rather than quit(): quit waits for a reply that never comes while Redis is down.
      pub.disconnect();
      sub.disconnect();
    },
  };
}
