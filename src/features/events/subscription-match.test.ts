import picomatch from "picomatch";
import { describe, expect, it, vi } from "vitest";
import type { SecretChange } from "./change-bus.js";
import { PROJECT_EVENT_TYPES } from "./event-bus.js";
import {
  compileRegistrations,
  EVENT_PERMISSION_ACTIONS,
  type EventRegistration,
  eventTypeForChange,
  projectEventFromChange,
} from "./subscription-match.js";

vi.mock("picomatch", { spy: true });

const at = (secretPath: string, environment = "dev", type: EventRegistration["event"] = "secret:update") => ({
  type,
  environment,
  secretPath,
});

const onPath = (secretPath: string) =>
  compileRegistrations([{ event: "secret:update", conditions: { environmentSlug: "dev", secretPath } }]);

describe("path globs (events-auth.md §1.4 table)", () => {
  // [condition, event path, expected]; "–" cells of the table are not asserted.
  const table: [string, string, boolean][] = [
    ["/", "/", true],
    ["/", "/app", false],
    ["/", "/app/x", false],
    ["/", "/app/x/y", false],
    ["/", "/apple", false],
    ["/**", "/", true],
    ["/**", "/app", true],
    ["/**", "/app/x", true],
    ["/**", "/app/x/y", true],
    ["/**", "/apple", true],
    ["/app", "/app", true],
    ["/app", "/app/", false],
    ["/app", "/app/x", false],
    ["/app", "/app/x/y", false],
    ["/app", "/apple", false],
    ["/app/*", "/app", false],
    ["/app/*", "/app/x", true],
    ["/app/*", "/app/x/y", false],
    ["/app/**", "/", false],
    ["/app/**", "/app", true],
    ["/app/**", "/app/", true],
    ["/app/**", "/app/x", true],
    ["/app/**", "/app/x/y", true],
    ["/app/**", "/apple", false],
    ["/app**", "/app", true],
    ["/app**", "/app/x", false],
    ["/app**", "/app/x/y", false],
    ["/app**", "/apple", true],
  ];

  it.each(table)("condition %s, event at %s → %s", (condition, path, expected) => {
    expect(onPath(condition)(at(path))).toBe(expected);
    // Same answer as upstream's literal call.
    expect(picomatch.isMatch(path, condition, { strictSlashes: false })).toBe(expected);
  });

  it("defaults secretPath to / when conditions are given", () => {
    const m = compileRegistrations([{ event: "secret:update", conditions: { environmentSlug: "dev" } }]);
    expect(m(at("/"))).toBe(true);
    expect(m(at("/app"))).toBe(false);
  });

  it("never matches an empty path pattern", () => {
    expect(onPath("")(at("/"))).toBe(false);
  });
});

describe("registrations", () => {
  it("matches on event type and exact environment", () => {
    const m = compileRegistrations([
      { event: "secret:create", conditions: { environmentSlug: "prod", secretPath: "/**" } },
    ]);
    expect(m(at("/a", "prod", "secret:create"))).toBe(true);
    expect(m(at("/a", "prod", "secret:update"))).toBe(false);
    expect(m(at("/a", "production", "secret:create"))).toBe(false);
    expect(m(at("/a", "Prod", "secret:create"))).toBe(false);
  });

  it("without conditions matches every environment and path of that event", () => {
    const m = compileRegistrations([{ event: "secret:delete" }]);
    expect(m(at("/", "dev", "secret:delete"))).toBe(true);
    expect(m(at("/x/y", "prod", "secret:delete"))).toBe(true);
    expect(m(at("/", "dev", "secret:create"))).toBe(false);
  });

  it("matches when any registration for the type matches", () => {
    const m = compileRegistrations([
      { event: "secret:update", conditions: { environmentSlug: "dev", secretPath: "/a" } },
      { event: "secret:update", conditions: { environmentSlug: "prod", secretPath: "/b/**" } },
    ]);
    expect(m(at("/a", "dev"))).toBe(true);
    expect(m(at("/b/c", "prod"))).toBe(true);
    expect(m(at("/b/c", "dev"))).toBe(false);
    expect(compileRegistrations([])(at("/"))).toBe(false);
  });

  it("compiles globs once per subscription, not per event", () => {
    const calls = vi.mocked(picomatch).mock.calls.length;
    const m = compileRegistrations([
      { event: "secret:update", conditions: { environmentSlug: "dev", secretPath: "/app/**" } },
      { event: "secret:create", conditions: { environmentSlug: "dev", secretPath: "/other" } },
    ]);
    expect(vi.mocked(picomatch).mock.calls.length).toBe(calls + 2);
    for (let i = 0; i < 100; i++) m(at(`/app/${i}`));
    expect(vi.mocked(picomatch).mock.calls.length).toBe(calls + 2);
  });
});

describe("mappings", () => {
  it("maps each event to its secret-events permission action", () => {
    expect(EVENT_PERMISSION_ACTIONS).toEqual({
      "secret:create": "subscribe-on-created",
      "secret:update": "subscribe-on-updated",
      "secret:delete": "subscribe-on-deleted",
      "secret:import-mutation": "subscribe-on-import-mutations",
    });
    expect(Object.keys(EVENT_PERMISSION_ACTIONS).sort()).toEqual([...PROJECT_EVENT_TYPES].sort());
  });

  const change = (over: Partial<SecretChange>): SecretChange => ({
    projectId: "p1",
    environment: "dev",
    environmentId: "env-1",
    secretPath: "/app",
    folderId: "f-1",
    kind: "created",
    keys: ["A", "B"],
    personal: false,
    ...over,
  });

  it("maps domain changes to SSE events and skips personal overrides", () => {
    expect(eventTypeForChange(change({ kind: "created" }))).toBe("secret:create");
    expect(eventTypeForChange(change({ kind: "updated" }))).toBe("secret:update");
    expect(eventTypeForChange(change({ kind: "deleted" }))).toBe("secret:delete");
    expect(eventTypeForChange(change({ kind: "import-changed" }))).toBe("secret:import-mutation");
    expect(eventTypeForChange(change({ kind: "updated", personal: true }))).toBeUndefined();

    expect(projectEventFromChange(change({ kind: "updated" }))).toEqual({
      projectId: "p1",
      type: "secret:update",
      environment: "dev",
      secretPath: "/app",
      keys: ["A", "B"],
    });
    expect(projectEventFromChange(change({ kind: "import-changed", keys: [] }))?.keys).toEqual([]);
    expect(projectEventFromChange(change({ personal: true }))).toBeUndefined();
  });
});
