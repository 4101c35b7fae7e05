import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { FERRY_LICENSE_PUBLIC_KEY_PEM } from "./ferry-public-key.js";
import { describeLicense, hasFeature, type License, loadLicense } from "./license.js";

function edKeys(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { privateKey, publicPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

const issuer = edKeys();
const NOW = new Date("2025-06-01T00:00:00Z");
const secs = (d: Date) => Math.floor(d.getTime() / 1000);

async function sign(claims: Record<string, unknown>, opts: { key?: KeyObject; exp?: Date } = {}) {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
    .setIssuedAt(secs(new Date("2025-01-01T00:00:00Z")));
  if (opts.exp) jwt.setExpirationTime(secs(opts.exp));
  return jwt.sign(opts.key ?? issuer.privateKey);
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

function expectOff(lic: License, reason: RegExp) {
  expect(lic.plan).toBe("free");
  expect(lic.features).toEqual({});
  expect(lic.source).toBe("invalid");
  expect(lic.reason).toMatch(reason);
  expect(lic.reason).not.toContain("\n");
  expect(hasFeature(lic, "eventSubscriptions")).toBe(false);
}

describe("happy", () => {
  it("verifies an enterprise licence against LICENSE_PUBLIC_KEY", async () => {
    const exp = new Date("2026-01-01T00:00:00Z");
    const token = await sign({ plan: "enterprise", sub: "Acme Corp" }, { exp });
    const lic = await loadLicense({ licenseKey: `  ${token}\n`, publicKeyPem: issuer.publicPem, now: NOW });
    expect(lic).toEqual({
      plan: "enterprise",
      features: {},
      issuedTo: "Acme Corp",
      expiresAt: exp,
      source: "custom-key",
    });
    expect(hasFeature(lic, "eventSubscriptions")).toBe(true);
    expect(hasFeature(lic, "anythingElse")).toBe(true);
    expect(describeLicense(lic)).toBe(
      "Licence: plan enterprise issued to Acme Corp, valid until 2026-01-01T00:00:00.000Z.",
    );
    expect(describeLicense(lic)).not.toContain(token);
  });

  it("turns on only the listed features for a non-enterprise plan", async () => {
    const token = await sign({ plan: "team", features: { eventSubscriptions: true, rbac: false } });
    const lic = await loadLicense({ licenseKey: token, publicKeyPem: issuer.publicPem, now: NOW });
    expect(lic.reason).toBeUndefined();
    expect(lic.expiresAt).toBeUndefined();
    expect(hasFeature(lic, "eventSubscriptions")).toBe(true);
    expect(hasFeature(lic, "rbac")).toBe(false);
    expect(hasFeature(lic, "auditLogs")).toBe(false);
  });

  it("accepts a licence until its exp passes", async () => {
    const token = await sign({ plan: "enterprise" }, { exp: new Date("2025-07-01T00:00:00Z") });
    const before = await loadLicense({ licenseKey: token, publicKeyPem: issuer.publicPem, now: NOW });
    expect(hasFeature(before, "eventSubscriptions")).toBe(true);
    const after = await loadLicense({
      licenseKey: token,
      publicKeyPem: issuer.publicPem,
      now: new Date("2025-07-02T00:00:00Z"),
    });
    expectOff(after, /expired at 2025-07-01T00:00:00.000Z/);
  });
});

describe("errors", () => {
  it("runs unlicensed when no key is set", async () => {
    for (const licenseKey of [undefined, "", "   "]) {
      const lic = await loadLicense({ licenseKey });
      expect(lic).toMatchObject({ plan: "free", features: {}, source: "none" });
      expect(lic.reason).toMatch(/No LICENSE_KEY/);
      expect(hasFeature(lic, "eventSubscriptions")).toBe(false);
    }
  });

  it("ships a built-in Ed25519 key and rejects licences it did not sign", async () => {
    expect(createPublicKey(FERRY_LICENSE_PUBLIC_KEY_PEM).asymmetricKeyType).toBe("ed25519");
    const token = await sign({ plan: "enterprise" });
    expectOff(await loadLicense({ licenseKey: token, now: NOW }), /signature does not match/);
  });

  it("rejects a licence signed by another key", async () => {
    const token = await sign({ plan: "enterprise" }, { key: edKeys().privateKey });
    const lic = await loadLicense({ licenseKey: token, publicKeyPem: issuer.publicPem, now: NOW });
    expectOff(lic, /signature does not match/);
    expect(lic.reason).not.toContain(token);
  });

  it("rejects a tampered payload", async () => {
    const [h, , s] = (await sign({ plan: "team" })).split(".");
    const forged = `${h}.${b64url({ plan: "enterprise" })}.${s}`;
    const lic = await loadLicense({ licenseKey: forged, publicKeyPem: issuer.publicPem, now: NOW });
    expectOff(lic, /signature does not match/);
  });

  it("refuses alg none, HS256 (keyed with the public key) and RS256", async () => {
    const none = `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ plan: "enterprise" })}.`;
    const hs = await new SignJWT({ plan: "enterprise" })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(issuer.publicPem));
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const rs = await new SignJWT({ plan: "enterprise" })
      .setProtectedHeader({ alg: "RS256" })
      .sign(rsa.privateKey);
    for (const token of [none, hs, rs]) {
      const lic = await loadLicense({ licenseKey: token, publicKeyPem: issuer.publicPem, now: NOW });
      expectOff(lic, /not signed with EdDSA/);
    }
    // An RSA key offered as LICENSE_PUBLIC_KEY is refused outright rather than enabling RS256.
    const rsaPem = rsa.publicKey.export({ type: "spki", format: "pem" }).toString();
    expectOff(await loadLicense({ licenseKey: rs, publicKeyPem: rsaPem, now: NOW }), /LICENSE_PUBLIC_KEY/);
  });

  it("rejects garbage, a bad public key and a licence without a plan", async () => {
    expectOff(
      await loadLicense({ licenseKey: "not-a-jwt", publicKeyPem: issuer.publicPem, now: NOW }),
      /not a well-formed/,
    );
    const good = await sign({ plan: "enterprise" });
    expectOff(
      await loadLicense({ licenseKey: good, publicKeyPem: "-----BEGIN PUBLIC KEY-----\nAAAA\n", now: NOW }),
      /LICENSE_PUBLIC_KEY is not an Ed25519 public key/,
    );
    const noPlan = await sign({ features: { eventSubscriptions: true } });
    expectOff(
      await loadLicense({ licenseKey: noPlan, publicKeyPem: issuer.publicPem, now: NOW }),
      /claims are malformed/,
    );
    const badFeatures = await sign({ plan: "team", features: { eventSubscriptions: "yes" } });
    expectOff(
      await loadLicense({ licenseKey: badFeatures, publicKeyPem: issuer.publicPem, now: NOW }),
      /claims are malformed/,
    );
  });
});
