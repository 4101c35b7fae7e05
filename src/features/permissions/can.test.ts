import { describe, expect, it } from "vitest";
import { assertCan, buildAbility, can } from "./can.js";
import { BUILT_IN_ROLES } from "./roles.js";

describe("can()", () => {
  const scoped = buildAbility([
    {
      subject: "secret-events",
      action: ["subscribe-on-updated"],
      conditions: { environment: { $eq: "prod" }, secretPath: { $glob: "/app/**" } },
    },
    { subject: "secrets", action: ["read"], conditions: { environment: { $in: ["dev", "staging"] } } },
    { subject: "secrets", action: ["edit"], conditions: { environment: { $neq: "prod" } } },
  ]);

  it("applies $glob with picomatch semantics", () => {
    const ev = (environment: string, secretPath: string) =>
      can(scoped, "subscribe-on-updated", "secret-events", { environment, secretPath });
    expect(ev("prod", "/app")).toBe(true);
    expect(ev("prod", "/app/db")).toBe(true);
    expect(ev("prod", "/app/db/x")).toBe(true);
    expect(ev("prod", "/apple")).toBe(false);
    expect(ev("staging", "/app")).toBe(false);
  });

  it("applies $in and $neq", () => {
    expect(can(scoped, "read", "secrets", { environment: "dev", secretPath: "/" })).toBe(true);
    expect(can(scoped, "read", "secrets", { environment: "prod", secretPath: "/" })).toBe(false);
    expect(can(scoped, "edit", "secrets", { environment: "dev", secretPath: "/" })).toBe(true);
    expect(can(scoped, "edit", "secrets", { environment: "prod", secretPath: "/" })).toBe(false);
  });

  it("tells subjects apart by type and leaves the caller's fields as they were", () => {
    const a = buildAbility([{ subject: "secret-syncs", action: ["read"] }]);
    const fields = { environment: "dev", secretPath: "/" };
    expect(can(a, "read", "secret-syncs", fields)).toBe(true);
    // The same object checked against another subject type: it was never tagged with the first one.
    expect(can(a, "read", "secrets", fields)).toBe(false);
    expect(can(a, "read", "secret-syncs", fields)).toBe(true);
    expect(fields).toEqual({ environment: "dev", secretPath: "/" });
    expect(Object.getOwnPropertyNames(fields)).toEqual(["environment", "secretPath"]);
  });

  it("honours inverted rules after allow rules", () => {
    const a = buildAbility([
      { subject: "secrets", action: ["delete"] },
      {
        subject: "secrets",
        action: ["delete"],
        inverted: true,
        conditions: { secretPath: { $glob: "/locked/**" } },
      },
    ]);
    expect(can(a, "delete", "secrets", { environment: "dev", secretPath: "/open" })).toBe(true);
    expect(can(a, "delete", "secrets", { environment: "dev", secretPath: "/locked/x" })).toBe(false);
  });

  it("assertCan throws Infisical's PermissionDenied with the matching rules as details", () => {
    const viewer = buildAbility(BUILT_IN_ROLES.viewer?.rules ?? []);
    expect(() => assertCan(viewer, "create", "identity")).toThrowError(
      expect.objectContaining({
        status: 403,
        name: "PermissionDenied",
        message: "You are not allowed to create on identity",
      }),
    );
    expect(() => assertCan(viewer, "read", "secrets", { environment: "dev", secretPath: "/" })).not.toThrow();
  });
});
