import { randomFillSync, randomInt } from "node:crypto";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function randomAlnum(n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

// Request ids are drawn from a refilled pool of random bytes: one CSPRNG call per 4,096 bytes rather than
// 14 randomInt() calls per request. 248 = 4 × 62 is the rejection bound, so every character stays uniform.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** Infisical's request id shape: `req-` + 14 alphanumerics. */
export function newRequestId(): string {
  let s = "req-";
  while (s.length < 18) {
    if (used === pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    const b = pool[used++] as number;
    if (b < 248) s += ALNUM[b % 62];
  }
  return s;
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID_RE.test(s);
