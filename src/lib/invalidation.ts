import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { Logger } from "pino";

/**
 * Cache invalidation across instances. Every instance caches token rows and permissions for a few
 * seconds; a write that changes them (revoke, role change, identity deletion) drops the entry locally at
 * once and announces it here. With REDIS_URL the announcement reaches every other instance through
 * pub/sub; without it only this instance is affected and the cache TTL bounds staleness elsewhere.
 */
export type Invalidation =
  | { kind: "token"; id: string }
  | { kind: "identity"; id: string }
  | { kind: "project"; id: string }
  | { kind: "all" };

export interface InvalidationChannel {
  publish(msg: Invalidation): void;
  subscribe(fn: (msg: Invalidation) => void): void;
  close(): Promise<void>;
}

const CHANNEL = "ferry:invalidate";

export function createInvalidationChannel(opts: { redisUrl?: string; log: Logger }): InvalidationChannel {
  const listeners: ((m: Invalidation) => void)[] = [];
  const local = (m: Invalidation) => {
    for (const l of listeners) l(m);
  };
  if (!opts.redisUrl) {
    return { publish: local, subscribe: (fn) => void listeners.push(fn), close: async () => {} };
  }
  const me = randomUUID();
  const pub = new Redis(opts.redisUrl, {
    lazyConnect: false,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  const sub = new Redis(opts.redisUrl, { lazyConnect: false, maxRetriesPerRequest: null });
  pub.on("error", (err: Error) => opts.log.warn({ err: err.message }, "redis invalidation publisher error"));
  sub.on("error", (err: Error) => opts.log.warn({ err: err.message }, "redis invalidation subscriber error"));
  sub.subscribe(CHANNEL).catch((err: Error) => opts.log.warn({ err: err.message }, "redis subscribe failed"));
  sub.on("message", (_ch: string, raw: string) => {
    try {
      const { source, msg } = JSON.parse(raw) as { source: string; msg: Invalidation };
      if (source !== me) local(msg);
    } catch {
      // Not ours; ignore.
    }
  });
  return {
    publish(msg) {
      local(msg);
      pub.publish(CHANNEL, JSON.stringify({ source: me, msg })).catch(() => {
        // Redis is down: other instances fall back to the cache TTL.
      });
    },
    subscribe: (fn) => void listeners.push(fn),
    async close() {
      sub.disconnect();
      pub.disconnect();
    },
  };
}
