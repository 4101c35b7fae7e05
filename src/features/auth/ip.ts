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

const cache = new WeakMap<TrustedIp[], BlockList>();
export function ipAllowed(ip: string, list: TrustedIp[]): boolean {
  let bl = cache.get(list);
  if (!bl) {
    bl = new BlockList();
    for (const t of list) {
      if (t.prefix === undefined) bl.addAddress(t.ipAddress, t.type);
      else bl.addSubnet(t.ipAddress, t.prefix, t.type);
    }
    cache.set(list, bl);
  }
  const clean = ip.startsWith("::ffff:") && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const type = isIP(clean) === 6 ? "ipv6" : "ipv4";
  return bl.check(clean, type);
}
