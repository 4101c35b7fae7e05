import { describe, expect, it } from "vitest";
import { AppError } from "../lib/errors.js";
import { connectionApps, destinations, getConnectionApp, getDestination, indexUnique } from "./registry.js";
import { parseCredentials, publicCredentials } from "./types.js";

describe("registry", () => {
  it("finds destinations by slug and refuses unknown ones with NOT_FOUND", () => {
    expect(getDestination("github").name).toBe("GitHub");
    const err = (() => {
      try {
        getDestination("nope");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "NOT_FOUND", status: 404 });
  });

  it("refuses duplicate keys when the index is built", () => {
    expect(() => indexUnique([{ slug: "a" }, { slug: "a" }], (d) => d.slug, "destination slug")).toThrow(
      /Duplicate destination slug 'a'/,
    );
  });

  it("lists one connection app per kind, matching every destination's connectionApp", () => {
    expect(connectionApps.map((a) => a.app).sort()).toEqual([
      "aws",
      "github",
      "hashicorp-vault",
      "trigger-dev",
    ]);
    for (const d of destinations) expect(getConnectionApp(d.connectionApp)).toBe(d.connection);
    expect(() => getConnectionApp("nope")).toThrow(AppError);
  });

  it("uses Infisical's slugs, names and capability flags", () => {
    const summary = destinations.map((d) => [d.slug, d.name, d.connectionApp, d.capabilities.import]);
    expect(summary).toEqual([
      ["hashicorp-vault", "Hashicorp Vault", "hashicorp-vault", true],
      ["trigger-dev", "Trigger.dev", "trigger-dev", false],
      ["github", "GitHub", "github", false],
      ["aws-parameter-store", "AWS Parameter Store", "aws", true],
    ]);
  });
});

describe("connection credentials helpers", () => {
  it("parses per method with Infisical's messages and exposes only public fields", () => {
    const trigger = getConnectionApp("trigger-dev");
    const creds = parseCredentials(trigger, "api-key", {
      apiKey: " tr_prod_x ",
      instanceUrl: "https://trigger.example.com",
    });
    expect(creds).toEqual({
      method: "api-key",
      apiKey: "tr_prod_x",
      instanceUrl: "https://trigger.example.com",
    });
    expect(publicCredentials(trigger, creds)).toEqual({ instanceUrl: "https://trigger.example.com" });
    expect(() => parseCredentials(trigger, "api-key", { apiKey: "" })).toThrow(/API Key required/);
    expect(() => parseCredentials(trigger, "oauth", {})).toThrow(/Unsupported/);
    const aws = getConnectionApp("aws");
    const key = parseCredentials(aws, "access-key", { accessKeyId: "AKIA1", secretAccessKey: "s" });
    expect(publicCredentials(aws, key)).toEqual({ accessKeyId: "AKIA1" });
    expect(publicCredentials(getConnectionApp("hashicorp-vault"), { method: "access-token" })).toEqual({});
  });
});
