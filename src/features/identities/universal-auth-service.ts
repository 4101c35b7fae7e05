import { randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  identities,
  identityAccessTokens,
  identityUaClientSecrets,
  identityUniversalAuths,
  type TrustedIp,
} from "../../db/schema/index.js";
import { hashSecret, verifySecret } from "../../lib/crypto/hash.js";
import { AppError } from "../../lib/errors.js";
import { isUuid } from "../../lib/ids.js";
import { TtlCache } from "../../lib/ttl-cache.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "../auth/actor.js";
import { ipAllowed, OPEN_IPS, parseTrustedIp } from "../auth/ip.js";
import type { TokenSigner } from "../auth/tokens.js";
import { assertOrgAdmin, type IdentitiesService } from "./identities-service.js";

/** Universal auth (client id + client secret → access token), with Infisical's defaults and messages. */
export type UaSettings = {
  accessTokenTTL?: number;
  accessTokenMaxTTL?: number;
  accessTokenNumUsesLimit?: number;
  accessTokenPeriod?: number;
  clientSecretTrustedIps?: { ipAddress: string }[];
  accessTokenTrustedIps?: { ipAddress: string }[];
  lockoutEnabled?: boolean;
  lockoutThreshold?: number;
  lockoutDurationSeconds?: number;
  lockoutCounterResetSeconds?: number;
};

const invalidCredentials = () => new AppError("UNAUTHORIZED", "Invalid credentials");

function toTrusted(list: { ipAddress: string }[] | undefined): TrustedIp[] | undefined {
  if (!list) return undefined;
  return list.map(({ ipAddress }) => {
    const t = parseTrustedIp(ipAddress);
    if (!t)
      throw new AppError("BAD_REQUEST", `The IP is not a valid IPv4, IPv6, or CIDR block: ${ipAddress}`);
    return t;
  });
}

const ipView = (list: TrustedIp[]) =>
  list.map((t) => ({
    ipAddress: t.ipAddress,
    type: t.type,
    ...(t.prefix !== undefined ? { prefix: t.prefix } : {}),
  }));

type UaRow = typeof identityUniversalAuths.$inferSelect;
export const uaView = (r: UaRow) => ({
  ...r,
  clientSecretTrustedIps: ipView(r.clientSecretTrustedIps),
  accessTokenTrustedIps: ipView(r.accessTokenTrustedIps),
});

type SecretRow = typeof identityUaClientSecrets.$inferSelect;
export const clientSecretView = (r: SecretRow) => {
  const { clientSecretHash: _hash, ...rest } = r;
  return rest;
};

export function createUniversalAuthService(deps: {
  db: Db;
  signer: TokenSigner;
  audit: AuditLog;
  identities: Pick<IdentitiesService, "load">;
  onTokenRevoked: (tokenId: string) => void;
  onIdentityChanged: (identityId: string) => void;
}) {
  const { db, signer, audit } = deps;
  // Failed-attempt counters for lockout, per identity and client id (per instance).
  const failures = new TtlCache<string, { count: number; lockedUntil: number; resetAt: number }>(86_400_000);

  async function getUa(identityId: string) {
    const [ua] = await db
      .select()
      .from(identityUniversalAuths)
      .where(eq(identityUniversalAuths.identityId, identityId));
    return ua;
  }

  function checkTtls(s: UaSettings, current?: UaRow) {
    const ttl = s.accessTokenTTL ?? current?.accessTokenTTL ?? 2592000;
    const max = s.accessTokenMaxTTL ?? current?.accessTokenMaxTTL ?? 2592000;
    if (max > 0 && ttl > max)
      throw new AppError("BAD_REQUEST", "Access token TTL cannot be greater than max TTL");
  }

  async function issueToken(
    identityId: string,
    row: Pick<
      UaRow,
      "accessTokenTTL" | "accessTokenMaxTTL" | "accessTokenNumUsesLimit" | "accessTokenPeriod"
    >,
    clientSecretId: string | null,
    tx: Parameters<Parameters<Db["transaction"]>[0]>[0],
  ) {
    const period = row.accessTokenPeriod;
    const ttl = period > 0 ? period : row.accessTokenTTL;
    const maxTtl = period > 0 ? 1_000_000_000 : row.accessTokenMaxTTL;
    const [tok] = await tx
      .insert(identityAccessTokens)
      .values({
        identityId,
        clientSecretId,
        authMethod: "universal-auth",
        accessTokenTTL: ttl,
        accessTokenMaxTTL: maxTtl,
        accessTokenNumUsesLimit: row.accessTokenNumUsesLimit,
        accessTokenPeriod: period,
      })
      .returning();
    if (!tok) throw new Error("token insert returned nothing");
    const accessToken = await signer.sign(
      { authTokenType: "identityAccessToken", identityId, clientSecretId, identityAccessTokenId: tok.id },
      ttl,
    );
    return { accessToken, expiresIn: ttl, accessTokenMaxTTL: maxTtl, tokenType: "Bearer" as const };
  }

  return {
    async attach(actor: Actor, identityId: string, s: UaSettings) {
      await deps.identities.load(actor, identityId);
      assertOrgAdmin(actor);
      if (await getUa(identityId))
        throw new AppError("BAD_REQUEST", "Failed to add universal auth to already configured identity");
      checkTtls(s);
      const row = await db.transaction(async (tx) => {
        const [ua] = await tx
          .insert(identityUniversalAuths)
          .values({
            identityId,
            accessTokenTTL: s.accessTokenTTL ?? 2592000,
            accessTokenMaxTTL: s.accessTokenMaxTTL ?? 2592000,
            accessTokenNumUsesLimit: s.accessTokenNumUsesLimit ?? 0,
            accessTokenPeriod: s.accessTokenPeriod ?? 0,
            clientSecretTrustedIps: toTrusted(s.clientSecretTrustedIps) ?? OPEN_IPS,
            accessTokenTrustedIps: toTrusted(s.accessTokenTrustedIps) ?? OPEN_IPS,
            lockoutEnabled: s.lockoutEnabled ?? true,
            lockoutThreshold: s.lockoutThreshold ?? 3,
            lockoutDurationSeconds: s.lockoutDurationSeconds ?? 300,
            lockoutCounterResetSeconds: s.lockoutCounterResetSeconds ?? 30,
          })
          .returning();
        if (!ua) throw new Error("insert returned nothing");
        await tx
          .update(identities)
          .set({ authMethod: "universal-auth" })
          .where(eq(identities.id, identityId));
        await audit.record({ eventType: "add-identity-universal-auth", actor, resource: { identityId } }, tx);
        return ua;
      });
      return uaView(row);
    },

    async get(actor: Actor, identityId: string) {
      await deps.identities.load(actor, identityId);
      const ua = await getUa(identityId);
      if (!ua) throw new AppError("NOT_FOUND", "Failed to find universal auth for identity");
      return uaView(ua);
    },

    async update(actor: Actor, identityId: string, s: UaSettings) {
      await deps.identities.load(actor, identityId);
      assertOrgAdmin(actor);
      const current = await getUa(identityId);
      if (!current) throw new AppError("NOT_FOUND", "Failed to find universal auth for identity");
      checkTtls(s, current);
      const [row] = await db
        .update(identityUniversalAuths)
        .set({
          ...(s.accessTokenTTL !== undefined ? { accessTokenTTL: s.accessTokenTTL } : {}),
          ...(s.accessTokenMaxTTL !== undefined ? { accessTokenMaxTTL: s.accessTokenMaxTTL } : {}),
          ...(s.accessTokenNumUsesLimit !== undefined
            ? { accessTokenNumUsesLimit: s.accessTokenNumUsesLimit }
            : {}),
          ...(s.accessTokenPeriod !== undefined ? { accessTokenPeriod: s.accessTokenPeriod } : {}),
          ...(s.clientSecretTrustedIps
            ? { clientSecretTrustedIps: toTrusted(s.clientSecretTrustedIps) }
            : {}),
          ...(s.accessTokenTrustedIps ? { accessTokenTrustedIps: toTrusted(s.accessTokenTrustedIps) } : {}),
          updatedAt: new Date(),
        })
        .where(eq(identityUniversalAuths.identityId, identityId))
        .returning();
      deps.onIdentityChanged(identityId);
      if (!row) throw new AppError("NOT_FOUND", "Failed to find universal auth for identity");
      return uaView(row);
    },

    async createClientSecret(
      actor: Actor,
      identityId: string,
      input: { description?: string; numUsesLimit?: number; ttl?: number },
    ) {
      await deps.identities.load(actor, identityId);
      assertOrgAdmin(actor);
      const ua = await getUa(identityId);
      if (!ua) throw new AppError("NOT_FOUND", "Failed to find universal auth for identity");
      const clientSecret = randomBytes(32).toString("hex");
      const hash = await hashSecret(clientSecret);
      const row = await db.transaction(async (tx) => {
        const [r] = await tx
          .insert(identityUaClientSecrets)
          .values({
            identityUAId: ua.id,
            description: input.description ?? "",
            clientSecretPrefix: clientSecret.slice(0, 4),
            clientSecretHash: hash,
            clientSecretTTL: input.ttl ?? 0,
            clientSecretNumUsesLimit: input.numUsesLimit ?? 0,
          })
          .returning();
        if (!r) throw new Error("insert returned nothing");
        await audit.record(
          {
            eventType: "create-identity-universal-auth-client-secret",
            actor,
            resource: { identityId, clientSecretId: r.id },
          },
          tx,
        );
        return r;
      });
      return { clientSecret, clientSecretData: clientSecretView(row) };
    },

    async listClientSecrets(actor: Actor, identityId: string) {
      await deps.identities.load(actor, identityId);
      const ua = await getUa(identityId);
      if (!ua) throw new AppError("NOT_FOUND", "Failed to find universal auth for identity");
      const rows = await db
        .select()
        .from(identityUaClientSecrets)
        .where(
          and(
            eq(identityUaClientSecrets.identityUAId, ua.id),
            eq(identityUaClientSecrets.isClientSecretRevoked, false),
          ),
        );
      return rows.map(clientSecretView);
    },

    async revokeClientSecret(actor: Actor, identityId: string, clientSecretId: string) {
      await deps.identities.load(actor, identityId);
      assertOrgAdmin(actor);
      const ua = await getUa(identityId);
      if (!ua || !isUuid(clientSecretId)) throw new AppError("NOT_FOUND", "Failed to find client secret");
      const [row] = await db
        .update(identityUaClientSecrets)
        .set({ isClientSecretRevoked: true, updatedAt: new Date() })
        .where(
          and(
            eq(identityUaClientSecrets.id, clientSecretId),
            eq(identityUaClientSecrets.identityUAId, ua.id),
          ),
        )
        .returning();
      if (!row) throw new AppError("NOT_FOUND", "Failed to find client secret");
      return clientSecretView(row);
    },

    async login(input: { clientId: string; clientSecret: string }, ip: string, userAgent?: string) {
      if (!isUuid(input.clientId)) throw invalidCredentials();
      const [ua] = await db
        .select({ ua: identityUniversalAuths, identity: identities })
        .from(identityUniversalAuths)
        .innerJoin(identities, eq(identities.id, identityUniversalAuths.identityId))
        .where(eq(identityUniversalAuths.clientId, input.clientId));
      if (!ua) throw invalidCredentials();
      if (!ipAllowed(ip, ua.ua.clientSecretTrustedIps)) {
        throw new AppError(
          "FORBIDDEN",
          "You are not allowed to access this resource from the current IP address",
        );
      }
      const lockKey = `${ua.identity.id}:${input.clientId}`;
      const now = Date.now();
      const f = failures.get(lockKey);
      if (ua.ua.lockoutEnabled && f && f.lockedUntil > now) {
        throw new AppError(
          "UNAUTHORIZED",
          "This identity auth method is temporarily locked, please try again later",
        );
      }
      const candidates = await db
        .select()
        .from(identityUaClientSecrets)
        .where(
          and(
            eq(identityUaClientSecrets.identityUAId, ua.ua.id),
            eq(identityUaClientSecrets.clientSecretPrefix, input.clientSecret.slice(0, 4)),
            eq(identityUaClientSecrets.isClientSecretRevoked, false),
          ),
        );
      let match: SecretRow | undefined;
      for (const c of candidates) {
        if (await verifySecret(input.clientSecret, c.clientSecretHash)) {
          match = c;
          break;
        }
      }
      if (!match) {
        if (ua.ua.lockoutEnabled) {
          const cur =
            f && f.resetAt > now
              ? f
              : { count: 0, lockedUntil: 0, resetAt: now + ua.ua.lockoutCounterResetSeconds * 1000 };
          cur.count += 1;
          if (cur.count >= ua.ua.lockoutThreshold) {
            cur.lockedUntil = now + ua.ua.lockoutDurationSeconds * 1000;
            cur.count = 0;
          }
          failures.set(lockKey, cur);
        }
        throw invalidCredentials();
      }
      failures.delete(lockKey);
      const secret = match;
      if (secret.clientSecretTTL > 0 && secret.createdAt.getTime() + secret.clientSecretTTL * 1000 < now) {
        await db
          .update(identityUaClientSecrets)
          .set({ isClientSecretRevoked: true })
          .where(eq(identityUaClientSecrets.id, secret.id));
        throw new AppError("UNAUTHORIZED", "Access denied due to expired client secret");
      }
      return db.transaction(async (tx) => {
        const used = await tx
          .update(identityUaClientSecrets)
          .set({ clientSecretNumUses: sql`${identityUaClientSecrets.clientSecretNumUses} + 1` })
          .where(
            and(
              eq(identityUaClientSecrets.id, secret.id),
              sql`(${identityUaClientSecrets.clientSecretNumUsesLimit} = 0 OR ${identityUaClientSecrets.clientSecretNumUses} < ${identityUaClientSecrets.clientSecretNumUsesLimit})`,
            ),
          )
          .returning({ id: identityUaClientSecrets.id });
        if (used.length === 0) {
          throw new AppError("UNAUTHORIZED", "Access denied due to client secret usage limit reached");
        }
        const res = await issueToken(ua.identity.id, ua.ua, secret.id, tx);
        audit.recordLater({
          eventType: "login-identity-universal-auth",
          actor: {
            type: "identity",
            id: ua.identity.id,
            name: ua.identity.name,
            orgId: ua.identity.orgId,
            ip,
            userAgent,
          },
          resource: { identityId: ua.identity.id, clientSecretId: secret.id },
        });
        return res;
      });
    },

    async renew(accessToken: string) {
      const claims = await signer.verify(accessToken);
      if (claims.authTokenType !== "identityAccessToken")
        throw new AppError("UNAUTHORIZED", "Only identity access tokens can be renewed");
      const [tok] = await db
        .select()
        .from(identityAccessTokens)
        .where(eq(identityAccessTokens.id, claims.identityAccessTokenId));
      if (!tok || tok.isRevoked) throw new AppError("UNAUTHORIZED", "No identity access token found");
      const now = Date.now();
      const fail = async (message: string) => {
        await db.delete(identityAccessTokens).where(eq(identityAccessTokens.id, tok.id));
        deps.onTokenRevoked(tok.id);
        return new AppError("UNAUTHORIZED", message);
      };
      if (tok.accessTokenNumUsesLimit > 0 && tok.accessTokenNumUses >= tok.accessTokenNumUsesLimit) {
        throw await fail("Unable to renew because access token usage limit reached");
      }
      const since = (tok.lastRenewedAt ?? tok.createdAt).getTime();
      if (tok.accessTokenTTL > 0 && since + tok.accessTokenTTL * 1000 < now) {
        throw await fail("Failed to renew MI access token due to TTL expiration");
      }
      // Renewal never extends a token past its max TTL (counted from creation): once that point has
      // passed, renewal fails; before it, the new lifetime is capped at what remains.
      let expiresIn = tok.accessTokenTTL;
      if (tok.accessTokenPeriod === 0 && tok.accessTokenMaxTTL > 0) {
        const remaining = Math.floor((tok.createdAt.getTime() + tok.accessTokenMaxTTL * 1000 - now) / 1000);
        if (remaining <= 0) throw await fail("Failed to renew MI access token past its Max TTL expiration");
        if (expiresIn === 0 || remaining < expiresIn) expiresIn = remaining;
      }
      await db
        .update(identityAccessTokens)
        .set({ lastRenewedAt: new Date(now) })
        .where(eq(identityAccessTokens.id, tok.id));
      deps.onTokenRevoked(tok.id); // drop the cached row so the new renewal time is seen
      const token = await signer.sign(
        {
          authTokenType: "identityAccessToken",
          identityId: tok.identityId,
          clientSecretId: tok.clientSecretId,
          identityAccessTokenId: tok.id,
        },
        expiresIn,
      );
      return {
        accessToken: token,
        expiresIn,
        accessTokenMaxTTL: tok.accessTokenMaxTTL,
        tokenType: "Bearer" as const,
      };
    },

    async revokeToken(accessToken: string) {
      const claims = await signer.verify(accessToken);
      if (claims.authTokenType !== "identityAccessToken")
        throw new AppError("UNAUTHORIZED", "Only identity access tokens can be revoked");
      const rows = await db
        .update(identityAccessTokens)
        .set({ isRevoked: true })
        .where(eq(identityAccessTokens.id, claims.identityAccessTokenId))
        .returning({ id: identityAccessTokens.id });
      if (rows.length === 0) throw new AppError("UNAUTHORIZED", "No identity access token found");
      deps.onTokenRevoked(claims.identityAccessTokenId);
      return { message: "Successfully revoked access token" };
    },
  };
}

export type UniversalAuthService = ReturnType<typeof createUniversalAuthService>;
