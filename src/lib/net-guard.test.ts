import { describe, expect, it } from "vitest";
import { DestinationError } from "../destinations/errors.js";
import { assertPublicUrl, isInternalAddress } from "./net-guard.js";

const lookupTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("isInternalAddress", () => {
  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.254",
    "0.0.0.0",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:a9fe:a9fe",
    "64:ff9b::10.0.0.1",
  ])("refuses %s", (ip) => {
    expect(isInternalAddress(ip)).toBe(true);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])(
    "allows %s",
    (ip) => {
      expect(isInternalAddress(ip)).toBe(false);
    },
  );
});

describe("assertPublicUrl", () => {
  it("passes a host that resolves only to public addresses", async () => {
    await expect(
      assertPublicUrl("https://vault.example.com", { lookup: lookupTo("93.184.216.34") }),
    ).resolves.toBeUndefined();
  });

  it("refuses when any resolved address is internal, non-retryably", async () => {
    const err = await assertPublicUrl("https://vault.example.com/v1", {
      lookup: lookupTo("93.184.216.34", "10.0.0.5"),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DestinationError);
    expect(err).toMatchObject({ code: "BLOCKED_ADDRESS", retryable: false });
    expect((err as Error).message).toContain("vault.example.com");
    expect((err as Error).message).toContain("ALLOW_INTERNAL_DESTINATIONS");
  });

  it("checks IP literals without a lookup, including bracketed IPv6", async () => {
    const noLookup = async () => {
      throw new Error("lookup must not run");
    };
    await expect(assertPublicUrl("http://127.0.0.1:8200", { lookup: noLookup })).rejects.toMatchObject({
      code: "BLOCKED_ADDRESS",
    });
    await expect(assertPublicUrl("http://[::1]:8200", { lookup: noLookup })).rejects.toMatchObject({
      code: "BLOCKED_ADDRESS",
    });
    await expect(
      assertPublicUrl("http://[::ffff:169.254.169.254]/", { lookup: noLookup }),
    ).rejects.toMatchObject({
      code: "BLOCKED_ADDRESS",
    });
  });

  it("allows internal addresses when allowInternal is set", async () => {
    await expect(assertPublicUrl("http://127.0.0.1:8200", { allowInternal: true })).resolves.toBeUndefined();
  });

  it("refuses non-http protocols even when internal is allowed", async () => {
    await expect(assertPublicUrl("file:///etc/passwd", { allowInternal: true })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      retryable: false,
    });
  });

  it("reports unknown hosts as non-retryable and resolver hiccups as retryable", async () => {
    const failing = (code: string) => async () => {
      throw Object.assign(new Error("dns"), { code });
    };
    await expect(
      assertPublicUrl("https://nope.invalid", { lookup: failing("ENOTFOUND") }),
    ).rejects.toMatchObject({
      code: "NETWORK",
      retryable: false,
    });
    await expect(
      assertPublicUrl("https://flaky.example", { lookup: failing("EAI_AGAIN") }),
    ).rejects.toMatchObject({
      code: "NETWORK",
      retryable: true,
    });
  });
});
