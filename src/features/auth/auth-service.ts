import { and, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  identities,
  identityAccessTokens,
  identityUniversalAuths,
  orgMemberships,
  type TrustedIp,
  userSessions,
  users,
} from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";
import { TtlCache } from "../../lib/ttl-cache.js";
import type { Actor } from "./actor.js";
import { ipAllowed, OPEN_IPS } from "./ip.js";
import type { Claims, TokenSigner } from "./tokens.js";

/**
 * Per-request authentication. The JWT is verified locally; the token row (revocation, TTL, trusted IPs,
 * the identity's org) is read once and cached for a few seconds. Revocation, identity deletion and auth
 * config changes drop the cached entry at once on this instance, and through the invalidation channel on
 * the others. Tokens with a uses limit are never cached: each request increments the count atomically.
 */
type CachedIdentityToken = {
  kind: "identity";
  tokenId: string;
  identityId: string;
  orgId: string;
  name: string;
  orgRole: string;
  authMethod: string;
  isRevoked: boolean;
  ttl: number;
  numUsesLimit: number;
  since: Date;
  trustedIps: TrustedIp[];
};
type CachedSession = {
  kind: "user";
  tokenId: string;
  userId: string;
  orgId: string;
  name: string;
  orgRole: string;
  isRevoked: boolean;
  expiresAt: Date;
};

export type AuthInvalidation =
  | { kind: "token"; id: string }
  | { kind: "identity"; id: string }
  | { kind: "all" };

export function createAuthService(deps: { db: Db; signer: TokenSigner; cacheTtlMs?: number }) {
  const { db, signer } = deps;
  const cache = new TtlCache<string, CachedIdentityToken | CachedSession>(deps.cacheTtlMs ?? 5_000);
  // Verified JWTs by their exact text: the signature check is pure, so a repeat of the same token skips it.
  // Entries never outlive the token's own `exp` (checked on read) and revocation is still checked on the
  // cached token row above, so caching changes cost, not outcome.
  const verified = new TtlCache<string, Claims>(60_000, 20_000);

  function verifiedBefore(token: string): Claims | undefined {
    const hit = verified.get(token);
    return hit && (hit.exp === undefined || hit.exp * 1000 > Date.now()) ? hit : undefined;
  }

  async function verify(token: string): Promise<Claims> {
    const hit = verifiedBefore(token);
    if (hit) return hit;
    const claims = await signer.verify(token);
    verified.set(token, claims);
    return claims;
  }

  async function loadIdentityToken(tokenId: string): Promise<CachedIdentityToken | null> {
    const [row] = await db
      .select({
        tokenId: identityAccessTokens.id,
        identityId: identities.id,
        orgId: identities.orgId,
        name: identities.name,
        orgRole: identities.orgRole,
        authMethod: identityAccessTokens.authMethod,
        isRevoked: identityAccessTokens.isRevoked,
        ttl: identityAccessTokens.accessTokenTTL,
        numUsesLimit: identityAccessTokens.accessTokenNumUsesLimit,
        createdAt: identityAccessTokens.createdAt,
        lastRenewedAt: identityAccessTokens.lastRenewedAt,
        trustedIps: identityUniversalAuths.accessTokenTrustedIps,
      })
      .from(identityAccessTokens)
      .innerJoin(identities, eq(identities.id, identityAccessTokens.identityId))
      .leftJoin(identityUniversalAuths, eq(identityUniversalAuths.identityId, identities.id))
      .where(eq(identityAccessTokens.id, tokenId));
    if (!row) return null;
    return {
      kind: "identity",
      ...row,
      since: row.lastRenewedAt ?? row.createdAt,
      // Token auth (the bootstrap token) has no UA row: its trusted IPs are open, as in Infisical.
      trustedIps: row.authMethod === "universal-auth" && row.trustedIps ? row.trustedIps : OPEN_IPS,
    };
  }

  async function loadSession(sessionId: string): Promise<CachedSession | null> {
    const [row] = await db
      .select({
        tokenId: userSessions.id,
        userId: users.id,
        orgId: userSessions.orgId,
        name: users.email,
        orgRole: orgMemberships.role,
        isRevoked: userSessions.isRevoked,
        expiresAt: userSessions.expiresAt,
      })
      .from(userSessions)
      .innerJoin(users, eq(users.id, userSessions.userId))
      .innerJoin(
        orgMemberships,
        and(eq(orgMemberships.userId, users.id), eq(orgMemberships.orgId, userSessions.orgId)),
      )
      .where(eq(userSessions.id, sessionId));
    return row ? { kind: "user", ...row } : null;
  }

  function sessionActor(s: CachedSession, ip: string, userAgent?: string): Actor {
    if (s.isRevoked || s.expiresAt.getTime() < Date.now()) {
      throw new AppError("UNAUTHORIZED", "Session expired or revoked");
    }
    return {
      type: "user",
      id: s.userId,
      orgId: s.orgId,
      name: s.name,
      orgRole: s.orgRole,
      tokenId: s.tokenId,
      authMethod: "email",
      ip,
      userAgent,
    };
  }

  /** The checks every use of an identity token passes (its uses limit aside). */
  function checkIdentityToken(t: CachedIdentityToken, ip: string): void {
    if (t.isRevoked) throw new AppError("UNAUTHORIZED", "No identity access token found");
    if (!ipAllowed(ip, t.trustedIps)) {
      throw new AppError(
        "FORBIDDEN",
        "You are not allowed to access this resource from the current IP address",
      );
    }
    if (t.ttl > 0 && t.since.getTime() + t.ttl * 1000 < Date.now()) {
      throw new AppError("UNAUTHORIZED", "Failed to authorize MI access token due to TTL expiration");
    }
  }

  function identityActor(t: CachedIdentityToken, ip: string, userAgent?: string): Actor {
    return {
      type: "identity",
      id: t.identityId,
      orgId: t.orgId,
      name: t.name,
      orgRole: t.orgRole,
      tokenId: t.tokenId,
      authMethod: t.authMethod,
      ip,
      userAgent,
    };
  }

  /**
   * `authenticate` answered from the caches alone, without a promise: undefined when the JWT or its
   * token row must be loaded first (then call `authenticate`). Throws exactly as `authenticate` would.
   * Only tokens without a uses limit are ever cached, so a cached one never needs the counting write.
   */
  function authenticateCached(token: string, ip: string, userAgent?: string): Actor | undefined {
    const claims = verifiedBefore(token);
    if (!claims) return undefined;
    if (claims.authTokenType === "accessToken") {
      const s = cache.get(claims.sessionId);
      return s?.kind === "user" ? sessionActor(s, ip, userAgent) : undefined;
    }
    const t = cache.get(claims.identityAccessTokenId);
    if (t?.kind !== "identity") return undefined;
    checkIdentityToken(t, ip);
    return identityActor(t, ip, userAgent);
  }

  async function authenticate(token: string, ip: string, userAgent?: string): Promise<Actor> {
    const cached = authenticateCached(token, ip, userAgent);
    if (cached) return cached;
    const claims = await verify(token);
    if (claims.authTokenType === "accessToken") {
      const { sessionId } = claims;
      const s = await cache.load(sessionId, async () => (await loadSession(sessionId)) ?? undefined);
      if (s?.kind !== "user") throw new AppError("UNAUTHORIZED", "Session not found");
      return sessionActor(s, ip, userAgent);
    }

    // A token with a uses limit is never cached: each use must reach the counting write below.
    const tokenId = claims.identityAccessTokenId;
    const t = await cache.load(
      tokenId,
      async () => (await loadIdentityToken(tokenId)) ?? undefined,
      (v) => v.kind === "identity" && !v.isRevoked && v.numUsesLimit === 0,
    );
    if (t?.kind !== "identity" || t.isRevoked) {
      throw new AppError("UNAUTHORIZED", "No identity access token found");
    }
    checkIdentityToken(t, ip);
    if (t.numUsesLimit > 0) {
      const used = await db
        .update(identityAccessTokens)
        .set({ accessTokenNumUses: sql`${identityAccessTokens.accessTokenNumUses} + 1` })
        .where(
          and(
            eq(identityAccessTokens.id, tokenId),
            lt(identityAccessTokens.accessTokenNumUses, identityAccessTokens.accessTokenNumUsesLimit),
          ),
        )
        .returning({ id: identityAccessTokens.id });
      if (used.length === 0) {
        throw new AppError("UNAUTHORIZED", "Unable to authorize MI access token due to usage limit reached");
      }
    }
    return identityActor(t, ip, userAgent);
  }

  function invalidate(msg: AuthInvalidation) {
    if (msg.kind === "all") cache.clear();
    else if (msg.kind === "token") cache.delete(msg.id);
    else cache.deleteWhere((v) => v.kind === "identity" && v.identityId === msg.id);
  }

  /** Token validity for long-lived streams: resolves false once the token is revoked, expired or gone. */
  async function stillValid(token: string, ip: string): Promise<boolean> {
    try {
      await authenticate(token, ip);
      return true;
    } catch {
      return false;
    }
  }

  return { authenticate, authenticateCached, invalidate, stillValid, verify };
}

export type AuthService = ReturnType<typeof createAuthService>;
