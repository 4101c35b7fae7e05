import { afterEach, describe, expect, it, vi } from "vitest";
import type { Actor } from "../../src/features/auth/actor.js";
import { createInProcessEventBus, type ProjectEvent } from "../../src/features/events/event-bus.js";
import {
  createStreamHub,
  type HubOptions,
  type RevalidateResult,
  type StreamSink,
} from "../../src/features/events/stream-hub.js";
import { buildAbility } from "../../src/features/permissions/can.js";

/** The hub on its own, with fake sinks and fake timers: timers, matching, backpressure, lifetime. */

const ACTIONS = [
  "subscribe-on-created",
  "subscribe-on-updated",
  "subscribe-on-deleted",
  "subscribe-on-import-mutations",
];
const allowAll = buildAbility([{ subject: "secret-events", action: ACTIONS }]);
const denyAll = buildAbility([]);

/** `slowMs`: each write holds the event loop that long, as a write to a real socket does. */
function fakeSink(opts: { stalled?: boolean; slowMs?: number } = {}) {
  const chunks: string[] = [];
  let buffered = 0;
  let closeFn: (() => void) | undefined;
  const sink: StreamSink & { chunks: string[]; ended: boolean; destroyed: boolean } = {
    chunks,
    ended: false,
    destroyed: false,
    closed: false,
    write(c) {
      if (opts.slowMs) for (const until = performance.now() + opts.slowMs; performance.now() < until; );
      chunks.push(c.toString());
      if (opts.stalled) buffered += c.length;
    },
    bufferedBytes: () => buffered,
    end(last) {
      if (last) chunks.push(last.toString());
      sink.ended = true;
      closeFn?.();
    },
    destroy() {
      sink.destroyed = true;
      closeFn?.();
    },
    onClose(fn) {
      closeFn = fn;
    },
  };
  return sink;
}

const actor = (tokenId = "tok-1"): Actor => ({
  type: "identity",
  id: "id-1",
  orgId: "org-1",
  name: "n",
  orgRole: "member",
  tokenId,
  authMethod: "universal-auth",
  ip: "127.0.0.1",
});

const event = (over: Partial<ProjectEvent> = {}): ProjectEvent => ({
  projectId: "p1",
  type: "secret:create",
  environment: "dev",
  secretPath: "/",
  keys: ["K"],
  ...over,
});

function setup(over: Partial<HubOptions> = {}) {
  const bus = createInProcessEventBus();
  const subscribeSpy = vi.spyOn(bus, "subscribe");
  let next: RevalidateResult = { ability: allowAll };
  const revalidate = vi.fn(async () => next);
  const hub = createStreamHub({
    bus,
    log: { warn: vi.fn(), error: vi.fn(), debug: vi.fn() },
    revalidate,
    pingIntervalMs: 1_000,
    refreshIntervalMs: 5_000,
    maxPerProject: 10,
    maxBufferedBytes: 16 * 1024,
    ...over,
  });
  const open = (o: { sink?: ReturnType<typeof fakeSink>; tokenId?: string; expiresAt?: number } = {}) => {
    const sink = o.sink ?? fakeSink();
    hub.open({
      projectId: "p1",
      actor: actor(o.tokenId),
      token: "jwt",
      registrations: [{ event: "secret:create" }],
      ability: allowAll,
      expiresAt: o.expiresAt ?? Number.POSITIVE_INFINITY,
      sink,
    });
    return sink;
  };
  return { bus, hub, open, revalidate, subscribeSpy, setNext: (r: RevalidateResult) => (next = r) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("stream hub", () => {
  it("delivers to many streams in slices, yielding to the event loop, without reordering events", async () => {
    const { bus, open } = setup({ maxPerProject: 2_000 });
    const sinks = Array.from({ length: 1_000 }, () => open());
    for (const key of ["A", "B", "C"]) bus.publish(event({ keys: [key] }));
    // Synchronously only the first slice has been written: other requests get a turn in between.
    const early = sinks.filter((s) => s.chunks.length > 0).length;
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(sinks.length);
    await vi.waitFor(() => expect(sinks.every((s) => s.chunks.length === 3)).toBe(true));
    for (const s of sinks) {
      const keys = s.chunks.map((c) => /"secretKey":"(\w)"/.exec(c)?.[1]);
      expect(keys).toEqual(["A", "B", "C"]);
    }
  });

  it("ends a slice on time when writes are slow, before its 128 streams", async () => {
    const { bus, open } = setup({ maxPerProject: 500 });
    const sinks = Array.from({ length: 300 }, () => open({ sink: fakeSink({ slowMs: 0.1 }) }));
    bus.publish(event());
    // The slice first reads the clock before its 16th stream: 15 writes of 0.1 ms are past its 0.5 ms.
    const early = sinks.filter((s) => s.chunks.length > 0).length;
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(32);
    await vi.waitFor(() => expect(sinks.every((s) => s.chunks.length === 1)).toBe(true));
  });

  it("uses one bus listener per project and one ping timer for all streams", () => {
    vi.useFakeTimers();
    const { hub, open, subscribeSpy } = setup();
    const sinks = [open(), open(), open()];
    expect(subscribeSpy).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(2); // ping + refresh, whatever the number of streams
    vi.advanceTimersByTime(1_000);
    for (const s of sinks) expect(s.chunks).toEqual(["event: ping\n\n"]);
    for (const s of sinks) s.destroy();
    expect(hub.stats()).toMatchObject({ connections: 0, projects: 0 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("pings many streams in slices, yielding to the event loop between them", () => {
    vi.useFakeTimers();
    const { open } = setup({ maxPerProject: 2_000 });
    const sinks = Array.from({ length: 1_000 }, () => open());
    const pinged = () => sinks.filter((s) => s.chunks.length > 0).length;
    vi.advanceTimersToNextTimer(); // the ping timer: the first slice only
    expect(pinged()).toBeGreaterThan(0);
    expect(pinged()).toBeLessThan(sinks.length);
    for (let turns = 0; pinged() < sinks.length && turns < 100; turns++) vi.advanceTimersToNextTimer();
    for (const s of sinks) expect(s.chunks).toEqual(["event: ping\n\n"]);
  });

  it("re-checks many streams in batches, yielding to the event loop between them", async () => {
    const { hub, open, revalidate } = setup({ maxPerProject: 2_000 });
    for (let i = 0; i < 100; i++) open();
    // Queued before the refresh starts: it runs at the refresh's first yield, not after all 100.
    const seenAtFirstTurn = new Promise<number>((ok) => setImmediate(() => ok(revalidate.mock.calls.length)));
    const done = hub.refresh();
    expect(await seenAtFirstTurn).toBeLessThan(100);
    await done;
    expect(revalidate).toHaveBeenCalledTimes(100);
  });

  it("writes one shared encoding to every matching stream and nothing to the others", () => {
    const { bus, open, hub } = setup();
    const a = open();
    const b = open();
    const other = fakeSink();
    hub.open({
      projectId: "p1",
      actor: actor(),
      token: "jwt",
      registrations: [{ event: "secret:delete" }],
      ability: allowAll,
      expiresAt: Number.POSITIVE_INFINITY,
      sink: other,
    });
    bus.publish(event());
    bus.publish(event({ projectId: "p2" }));
    expect(a.chunks).toHaveLength(1);
    expect(a.chunks).toEqual(b.chunks);
    expect(other.chunks).toEqual([]);
  });

  it("applies a refreshed ability to later events and closes streams whose access is gone", async () => {
    const { bus, hub, open, setNext } = setup();
    const s = open();
    bus.publish(event({ keys: ["BEFORE"] }));
    setNext({ ability: denyAll });
    await hub.refresh();
    bus.publish(event({ keys: ["HIDDEN"] }));
    expect(s.chunks.join("")).toContain("BEFORE");
    expect(s.chunks.join("")).not.toContain("HIDDEN");
    setNext({ reason: "Permission denied or refresh failed" });
    await hub.refresh();
    expect(s.ended).toBe(true);
    expect(s.chunks.at(-1)).toBe('event: error\ndata: {"message":"Permission denied or refresh failed"}\n\n');
  });

  it("re-checks only the streams of a token when that token is invalidated", async () => {
    const { hub, open, revalidate, setNext } = setup();
    const mine = open({ tokenId: "revoked" });
    const theirs = open({ tokenId: "other" });
    setNext({ reason: "Permission denied or refresh failed" });
    await hub.refreshToken("revoked");
    expect(revalidate).toHaveBeenCalledTimes(1);
    expect(mine.ended).toBe(true);
    expect(theirs.ended).toBe(false);
  });

  it("closes a stream whose refresh throws", async () => {
    const { hub, open, revalidate } = setup();
    const s = open();
    revalidate.mockRejectedValueOnce(new Error("db down"));
    await hub.refresh();
    expect(s.ended).toBe(true);
  });

  it("ends a stream with an error frame once its token expires", () => {
    vi.useFakeTimers({ now: 0 });
    const { open } = setup();
    const s = open({ expiresAt: 1_500 });
    vi.advanceTimersByTime(1_000);
    expect(s.ended).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(s.ended).toBe(true);
    expect(s.chunks.at(-1)).toContain("event: error");
  });

  it("disconnects a stalled client before its buffer passes the bound", () => {
    const { bus, hub, open } = setup({ maxBufferedBytes: 16 * 1024 });
    const stalled = open({ sink: fakeSink({ stalled: true }) });
    const healthy = open();
    const keys = Array.from({ length: 30 }, (_, i) => `K${i}_${"y".repeat(40)}`);
    for (let i = 0; i < 50; i++) bus.publish(event({ keys }));
    expect(stalled.destroyed).toBe(true);
    expect(healthy.chunks).toHaveLength(50);
    expect(hub.stats().droppedSlow).toBe(1);
    expect(hub.stats().peakBufferedBytes).toBeLessThanOrEqual(16 * 1024);
  });

  it("enforces the per-project cap and refuses streams after close()", () => {
    const { hub, open } = setup({ maxPerProject: 2 });
    open();
    open();
    expect(() => hub.assertCapacity("p1")).toThrow(/maximum concurrent event subscriptions/);
    expect(() => hub.assertCapacity("p2")).not.toThrow();
    hub.close();
    expect(hub.stats().connections).toBe(0);
    expect(() => hub.assertCapacity("p2")).toThrow(/shutting down/);
  });
});
