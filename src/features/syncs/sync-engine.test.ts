import { describe, expect, it } from "vitest";
import {
  importable,
  isValidKeySchema,
  matchesSchema,
  planRemove,
  planSync,
  renderKey,
} from "./sync-engine.js";

const fp = (k: string, v: string) => `${k}=${v.length}:${v}`;
const base = { environment: "dev", listValues: true, fingerprints: {}, fingerprintOf: fp };

describe("key schema", () => {
  it("validates, renders and matches like Infisical (slash rule included)", () => {
    expect(isValidKeySchema("FERRY_{{secretKey}}")).toBe(true);
    expect(isValidKeySchema("{{environment}}/{{secretKey}}")).toBe(true);
    expect(isValidKeySchema("NO_PLACEHOLDER")).toBe(false);
    expect(isValidKeySchema("{{secretKey}}{{secretKey}}")).toBe(false);
    expect(isValidKeySchema("bad space {{secretKey}}")).toBe(false);
    expect(renderKey("{{environment}}_{{secretKey}}", "A", "dev")).toBe("dev_A");
    expect(matchesSchema("FERRY_A", "FERRY_{{secretKey}}", "dev")).toBe(true);
    expect(matchesSchema("OTHER", "FERRY_{{secretKey}}", "dev")).toBe(false);
    expect(matchesSchema("FERRY_", "FERRY_{{secretKey}}", "dev")).toBe(false);
    expect(matchesSchema("/a/KEY", "/a/{{secretKey}}", "dev")).toBe(true);
    expect(matchesSchema("/a/b/KEY", "/a/{{secretKey}}", "dev")).toBe(false);
  });
});

describe("planSync", () => {
  it("writes only changed keys and deletes only owned keys", () => {
    const remote = new Map<string, string | null>([
      ["A", "1"],
      ["B", "old"],
      ["GONE", "x"],
      ["HAND_MADE", "h"],
    ]);
    const p = planSync({
      ...base,
      source: new Map([
        ["A", "1"],
        ["B", "new"],
        ["C", "3"],
      ]),
      remote,
      ownedKeys: ["A", "B", "GONE"],
    });
    expect(p.upsert).toEqual({ B: "new", C: "3" });
    expect(p.delete).toEqual(["GONE"]);
    expect(p.unchanged).toEqual(["A"]);
    expect(p.foreign).toEqual(["HAND_MADE"]);
    expect(p.nextOwned).toEqual(["A", "B", "C"]);
  });

  it("never deletes with disableSecretDeletion, and keeps ownership of what it left", () => {
    const remote = new Map<string, string | null>([["OLD", "x"]]);
    const p = planSync({
      ...base,
      source: new Map(),
      remote,
      ownedKeys: ["OLD"],
      disableSecretDeletion: true,
    });
    expect(p.delete).toEqual([]);
    expect(p.nextOwned).toEqual(["OLD"]);
  });

  it("applies the key schema and normalisation, and a key outside the schema is never owned", () => {
    const remote = new Map<string, string | null>([
      ["FERRY_X", "1"],
      ["LEGACY", "z"],
    ]);
    const p = planSync({
      ...base,
      source: new Map([["a", "1"]]),
      keySchema: "FERRY_{{secretKey}}",
      normalizeKey: (k) => k.toUpperCase(),
      remote,
      ownedKeys: ["LEGACY", "FERRY_X"],
    });
    expect(p.upsert).toEqual({ FERRY_A: "1" });
    expect(p.delete).toEqual(["FERRY_X"]);
    expect(p.foreign).toEqual(["LEGACY"]);
  });

  it("write-only destinations diff against fingerprints of the last successful run", () => {
    const remote = new Map<string, string | null>([
      ["A", null],
      ["B", null],
    ]);
    const fingerprints = { A: fp("A", "1"), B: fp("B", "2") };
    const p = planSync({
      ...base,
      listValues: false,
      fingerprints,
      source: new Map([
        ["A", "1"],
        ["B", "changed"],
      ]),
      remote,
      ownedKeys: ["A", "B"],
    });
    expect(p.upsert).toEqual({ B: "changed" });
    expect(p.nextFingerprints.B).toBe(fp("B", "changed"));
    expect(JSON.stringify(p.nextFingerprints)).not.toContain('"changed"');
  });
});

describe("remove and import", () => {
  it("removes owned keys that are still there; imports schema keys stripped, skipping empty values", () => {
    const remote = new Map<string, string | null>([
      ["FERRY_A", "1"],
      ["FERRY_E", ""],
      ["OTHER", "o"],
    ]);
    expect(
      planRemove({
        ownedKeys: ["FERRY_A", "FERRY_GONE"],
        keySchema: "FERRY_{{secretKey}}",
        environment: "dev",
        remote,
      }),
    ).toEqual({
      upsert: {},
      delete: ["FERRY_A"],
    });
    expect([...importable(remote, "FERRY_{{secretKey}}", "dev")]).toEqual([["A", "1"]]);
  });
});
