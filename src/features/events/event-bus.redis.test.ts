import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createRedisEventBus, type ProjectEvent, type RedisProjectEventBus } from "./event-bus.js";

// CI sets TEST_REDIS_URL (redis://127.0.0.1:6379). The shared server is only ever used through a
// unique channel per test; the outage test starts and kills its own private redis-server instead.
const REDIS_URL = process.env.TEST_REDIS_URL ?? "";

const opened: RedisProjectEventBus[] = [];
const children: ChildProcess[] = [];
const clients: Redis[] = [];

afterAll(async () => {
  await Promise.all(opened.map((b) => b.close()));
  for (const c of clients) c.disconnect();
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

function quietLog() {
  return { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
}

function openBus(url: string, channel: string, instanceId: string, log = quietLog()) {
  const bus = createRedisEventBus({ url, channel, instanceId, log });
  opened.push(bus);
  return bus;
}

/** Records what one subscriber saw, by secret key (every test event carries one unique key). */
function recorder(bus: RedisProjectEventBus, projectId = "p1") {
  const seen: string[] = [];
  bus.subscribe(projectId, (e) => seen.push(...e.keys));
  return { seen, count: (key: string) => seen.filter((k) => k === key).length };
}

const evt = (key: string, projectId = "p1"): ProjectEvent => ({
  projectId,
  type: "secret:create",
  environment: "dev",
  secretPath: "/",
  keys: [key],
});

const waitFor = (check: () => void, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 20 });

describe.runIf(Boolean(process.env.TEST_REDIS_URL))("Redis event bus (shared Redis)", () => {
  it("delivers across instances exactly once and never echoes an instance's own events", async () => {
    const channel = `ferry:test:${randomUUID()}`;
    const a = openBus(REDIS_URL, channel, "instance-a");
    const b = openBus(REDIS_URL, channel, "instance-b");
    await Promise.all([a.ready(), b.ready()]);
    const onA = recorder(a);
    const onB = recorder(b);
    const otherProjectOnA = recorder(a, "p2");

    // B → A: A gets it over Redis, B's own subscriber gets it locally and drops the echo.
    b.publish(evt("FROM_B"));
    expect(onB.count("FROM_B")).toBe(1); // local delivery is synchronous
    await waitFor(() => expect(onA.count("FROM_B")).toBe(1));

    // A → B: A's subscriber is served locally; the echo from Redis must be dropped.
    a.publish(evt("FROM_A"));
    expect(onA.count("FROM_A")).toBe(1);
    await waitFor(() => expect(onB.count("FROM_A")).toBe(1));
    // Barrier: B publishes only after FROM_A reached Redis, and Redis keeps channel order, so once A
    // sees BARRIER it has already processed (and dropped) its own echo of FROM_A.
    b.publish(evt("BARRIER"));
    await waitFor(() => expect(onA.count("BARRIER")).toBe(1));

    expect(onA.seen).toEqual(["FROM_B", "FROM_A", "BARRIER"]);
    expect(onB.seen).toEqual(["FROM_B", "FROM_A", "BARRIER"]);
    expect(otherProjectOnA.seen).toEqual([]);
  });

  it("sends events published together as one message and delivers them in order; reads the single-event form", async () => {
    const channel = `ferry:test:${randomUUID()}`;
    const a = openBus(REDIS_URL, channel, "instance-a");
    const b = openBus(REDIS_URL, channel, "instance-b");
    await Promise.all([a.ready(), b.ready()]);
    const onB = recorder(b);
    const spy = new Redis(REDIS_URL);
    clients.push(spy);
    const messages: string[] = [];
    spy.on("message", (_ch: string, raw: string) => messages.push(raw));
    await spy.subscribe(channel);

    for (const k of ["K1", "K2", "K3"]) a.publish(evt(k));
    await waitFor(() => expect(onB.seen).toEqual(["K1", "K2", "K3"]));
    await waitFor(() => expect(messages).toHaveLength(1));
    expect(JSON.parse(messages[0] ?? "{}").events.map((e: ProjectEvent) => e.keys[0])).toEqual([
      "K1",
      "K2",
      "K3",
    ]);

    // A message in the one-event form (`event`) is still understood.
    const publisher = new Redis(REDIS_URL);
    clients.push(publisher);
    await publisher.publish(channel, JSON.stringify({ source: "instance-old", event: evt("OLD") }));
    await waitFor(() => expect(onB.seen).toEqual(["K1", "K2", "K3", "OLD"]));
  });

  it("ignores malformed messages and other channels", async () => {
    const channel = `ferry:test:${randomUUID()}`;
    const log = quietLog();
    const a = openBus(REDIS_URL, channel, "instance-a", log);
    await a.ready();
    const onA = recorder(a);
    const raw = new Redis(REDIS_URL);
    clients.push(raw);

    await raw.publish(channel, "not json");
    await raw.publish(channel, JSON.stringify({ source: "x", event: { projectId: "p1", type: "nope" } }));
    await raw.publish(`${channel}:other`, JSON.stringify({ source: "x", event: evt("OTHER_CHANNEL") }));
    await raw.publish(channel, JSON.stringify({ source: "x", event: evt("VALID") }));

    await waitFor(() => expect(onA.seen).toEqual(["VALID"]));
    expect(log.warn).toHaveBeenCalledTimes(2);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  await waitFor(() => {
    expect(child.exitCode, output).toBeNull();
    expect(output).toContain("Ready to accept connections");
  });
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL"); // a crash, not a graceful shutdown
  await exited;
}

describe.runIf(Boolean(process.env.TEST_REDIS_URL))("Redis event bus when Redis goes away", () => {
  it("keeps local delivery during an outage and resumes cross-instance delivery after", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedis(port);
    const channel = `ferry:test:${randomUUID()}`;
    const logA = quietLog();
    const a = openBus(url, channel, "instance-a", logA);
    const b = openBus(url, channel, "instance-b");
    await Promise.all([a.ready(), b.ready()]);
    const onA = recorder(a);
    const onB = recorder(b);

    b.publish(evt("BEFORE"));
    await waitFor(() => expect(onA.count("BEFORE")).toBe(1));

    await stopRedis(server);
    // Publishing with Redis gone neither throws nor blocks local subscribers.
    expect(() => a.publish(evt("DURING"))).not.toThrow();
    expect(onA.count("DURING")).toBe(1);
    await waitFor(() =>
      expect(logA.warn).toHaveBeenCalledWith(expect.anything(), expect.stringMatching(/could not publish/)),
    );

    server = await startRedis(port);
    // ioredis reconnects with backoff and re-subscribes on its own. Keep publishing fresh events from B
    // until one reaches A: that proves B's publisher and A's subscriber are both back.
    let n = 0;
    const sent: string[] = [];
    await vi.waitFor(
      () => {
        const key = `AFTER_${n++}`;
        sent.push(key);
        b.publish(evt(key));
        expect(onA.seen.some((k) => k.startsWith("AFTER_"))).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );
    b.publish(evt("BARRIER"));
    await waitFor(() => expect(onA.count("BARRIER")).toBe(1));

    // Exactly once: no key delivered twice on either side, and A never saw its own DURING echoed.
    for (const r of [onA, onB]) expect(new Set(r.seen).size).toBe(r.seen.length);
    expect(onA.count("DURING")).toBe(1);
    expect(onB.count("DURING")).toBe(0); // lost cross-instance: at-most-once, no replay
    expect(onB.seen.filter((k) => k.startsWith("AFTER_"))).toEqual(sent);
    expect(logA.warn).toHaveBeenCalledWith(
      expect.anything(),
      expect.stringMatching(/lost its Redis connection/),
    );
    expect(logA.info).toHaveBeenCalledWith(expect.anything(), expect.stringMatching(/reconnected/));
    await stopRedis(server);
  }, 60_000);
});
