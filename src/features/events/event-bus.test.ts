import { describe, expect, it, vi } from "vitest";
import { createInProcessEventBus, type ProjectEvent, type ProjectEventListener } from "./event-bus.js";

const event = (projectId: string, keys: string[] = ["A"]): ProjectEvent => ({
  projectId,
  type: "secret:update",
  environment: "dev",
  secretPath: "/app",
  keys,
});

describe("in-process event bus", () => {
  it("fans out to every listener of the project and only that project", () => {
    const bus = createInProcessEventBus();
    const p1a = vi.fn<ProjectEventListener>();
    const p1b = vi.fn<ProjectEventListener>();
    const p2 = vi.fn<ProjectEventListener>();
    bus.subscribe("p1", p1a);
    bus.subscribe("p1", p1b);
    bus.subscribe("p2", p2);

    bus.publish(event("p1", ["DB_URL"]));
    // Synchronous: delivered before publish returns.
    expect(p1a).toHaveBeenCalledTimes(1);
    expect(p1b).toHaveBeenCalledTimes(1);
    expect(p2).not.toHaveBeenCalled();
    expect(p1a.mock.calls[0]?.[0]).toEqual(event("p1", ["DB_URL"]));
    // One shared, frozen object per event, so per-event encoding can be cached on it.
    expect(p1a.mock.calls[0]?.[0]).toBe(p1b.mock.calls[0]?.[0]);
    expect(Object.isFrozen(p1a.mock.calls[0]?.[0])).toBe(true);
    expect(Object.isFrozen(p1a.mock.calls[0]?.[0].keys)).toBe(true);
  });

  it("copies the published event so later caller mutations don't leak", () => {
    const bus = createInProcessEventBus();
    const seen: ProjectEvent[] = [];
    bus.subscribe("p1", (e) => seen.push(e));
    const keys = ["A"];
    bus.publish(event("p1", keys));
    keys.push("B");
    expect(seen[0]?.keys).toEqual(["A"]);
  });

  it("stops delivering after unsubscribe; unsubscribing twice is harmless", () => {
    const bus = createInProcessEventBus();
    const listener = vi.fn<ProjectEventListener>();
    const unsubscribeFirst = bus.subscribe("p1", listener);
    const unsubscribeSecond = bus.subscribe("p1", listener); // same function, independent subscription
    bus.publish(event("p1"));
    expect(listener).toHaveBeenCalledTimes(2);

    unsubscribeFirst();
    unsubscribeFirst();
    bus.publish(event("p1"));
    expect(listener).toHaveBeenCalledTimes(3);

    unsubscribeSecond();
    bus.publish(event("p1"));
    expect(listener).toHaveBeenCalledTimes(3);
  });

  it("lets a listener unsubscribe itself while being called", () => {
    const bus = createInProcessEventBus();
    const other = vi.fn<ProjectEventListener>();
    const unsubscribe = bus.subscribe("p1", () => unsubscribe());
    bus.subscribe("p1", other);
    bus.publish(event("p1"));
    bus.publish(event("p1"));
    expect(other).toHaveBeenCalledTimes(2);
  });

  it("logs a throwing listener and still delivers to the rest", () => {
    const log = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const bus = createInProcessEventBus({ log });
    const after = vi.fn<ProjectEventListener>();
    bus.subscribe("p1", () => {
      throw new Error("boom");
    });
    bus.subscribe("p1", after);
    expect(() => bus.publish(event("p1"))).not.toThrow();
    expect(after).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledTimes(1);
  });

  it("close() drops all listeners", async () => {
    const bus = createInProcessEventBus();
    const listener = vi.fn<ProjectEventListener>();
    bus.subscribe("p1", listener);
    await bus.close();
    bus.publish(event("p1"));
    expect(listener).not.toHaveBeenCalled();
  });
});
