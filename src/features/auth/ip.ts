import { BlockList, isIP } from "node:net";
import type { TrustedIp } from "../../db/schema/index.js";

/** Infisical's open defaults: trusted IP lists start as "everything". */
export const OPEN_IPS: TrustedIp[] = [
  { ipAddress: "0.0.0.0", type: "ipv4", prefix: 0 },
  { ipAddress: "::", type: "ipv6", prefix: 0 },
];

/** Accepts `1.2.3.4`, `1.2.3.0/24`, `::1`, `fd00::/8`. Returns null when invalid. */
export function parseTrustedIp(s: string): TrustedIp | null {
  const [addr, prefixStr] = s.trim().split("/");
  const v = addr ? isIP(addr) : 0;
  if (!addr || v === 0) return null;
  const type = v === 4 ? "ipv4" : "ipv6";
  if (prefixStr === undefined) return { ipAddress: addr, type };
  const prefix = Number(prefixStr);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (v === 4 ? 32 : 128)) return null;
  return { ipAddress: addr, type, prefix };
}

/**
 * A compiled trusted-IP list, cached per list object (the token cache holds one list per token). A
 * family opened by a /0 entry (Infisical's default) answers without a lookup; other answers are
 * memoised per client address, since a token is used from a handful of addresses.
 */
type Checker = { open: { ipv4: boolean; ipv6: boolean }; list: BlockList; seen: Map<string, boolean> };
const cache = new WeakMap<TrustedIp[], Checker>();
const SEEN_MAX = 1024;

function checkerOf(list: TrustedIp[]): Checker {
  let c = cache.get(list);
  if (c) return c;
  const bl = new BlockList();
  for (const t of list) {
    if (t.prefix === undefined) bl.addAddress(t.ipAddress, t.type);
    else bl.addSubnet(t.ipAddress, t.prefix, t.type);
  }
  const openFor = (type: string) => list.some((t) => t.type === type && t.prefix === 0);
  c = { open: { ipv4: openFor("ipv4"), ipv6: openFor("ipv6") }, list: bl, seen: new Map() };
  cache.set(list, c);
  return c;
}

export function ipAllowed(ip: string, trusted: TrustedIp[]): boolean {
  const c = checkerOf(trusted);
  const known = c.seen.get(ip);
  if (known !== undefined) return known;
  const clean = ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(clean);
  const type = family === 6 ? "ipv6" : "ipv4";
  const ok = family !== 0 && (c.open[type] || c.list.check(clean, type));
  if (c.seen.size >= SEEN_MAX) c.seen.clear();
  c.seen.set(ip, ok);
  return ok;
}
