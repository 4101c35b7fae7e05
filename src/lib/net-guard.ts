import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { DestinationError } from "../destinations/errors.js";

/**
 * SSRF guard for user-supplied destination URLs (Vault instanceUrl, Trigger.dev instanceUrl, GitHub
 * Enterprise host). A sync runs with the server's network position, so without this a user could make
 * the server call its own metadata endpoint or an internal service.
 *
 * Known limit: the address is checked at resolution time and fetch resolves again, so a DNS record that
 * flips between the two calls (rebinding) can slip through. Redirects are not followed by the http
 * client for the same reason.
 */

const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", includes the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata endpoints
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved + broadcast
] as const) {
  blocked.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address embedded in an IPv4-mapped, -compatible or NAT64 IPv6 address, if any. */
function embeddedIpv4(ip: string): string | undefined {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] && hex[2]) {
    const hi = Number.parseInt(hex[1], 16);
    const lo = Number.parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/** True for loopback, private, link-local, CGNAT, unspecified, multicast/reserved and mapped variants. */
export function isInternalAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, "ipv4");
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4 !== undefined) return blocked.check(v4, "ipv4");
    return blocked.check(ip, "ipv6");
  }
  return true; // not an IP at all: refuse rather than guess
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface NetGuardOptions {
  /** ALLOW_INTERNAL_DESTINATIONS=true: skip the address check (local Vault, tests). */
  allowInternal?: boolean;
  lookup?: LookupAll;
}

function refuse(message: string, code: "BLOCKED_ADDRESS" | "INVALID_CONFIG" = "BLOCKED_ADDRESS") {
  return new DestinationError({ code, message, retryable: false });
}

/**
 * Resolves the URL's host (all addresses) and throws a non-retryable DestinationError when any of them
 * is internal, unless `allowInternal`. Only http(s) URLs pass.
 */
export async function assertPublicUrl(url: string | URL, opts: NetGuardOptions = {}): Promise<void> {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    throw refuse("Invalid destination URL", "INVALID_CONFIG");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw refuse(`Unsupported protocol '${parsed.protocol}' for a destination URL`, "INVALID_CONFIG");
  }
  if (opts.allowInternal) return;

  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await (opts.lookup ?? defaultLookup)(host)).map((a) => a.address);
    } catch (err) {
      const code = (err as { code?: string }).code;
      // EAI_AGAIN is a resolver hiccup worth retrying; ENOTFOUND means the host does not exist.
      throw new DestinationError({
        code: "NETWORK",
        message: `Could not resolve destination host '${host}'${code ? ` (${code})` : ""}`,
        retryable: code === "EAI_AGAIN",
        cause: err,
      });
    }
  }
  if (addresses.length === 0) throw refuse(`Destination host '${host}' has no addresses`, "INVALID_CONFIG");
  const internal = addresses.find(isInternalAddress);
  if (internal !== undefined) {
    throw refuse(
      `Destination host '${host}' resolves to a private or internal address (${internal}); ` +
        "requests to internal networks are blocked (set ALLOW_INTERNAL_DESTINATIONS=true to allow them)",
    );
  }
}
