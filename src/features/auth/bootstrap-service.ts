import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client.js";
import {
  identities,
  identityAccessTokens,
  organizations,
  orgMemberships,
  serverConfig,
  userSessions,
  users,
} from "../../db/schema/index.js";
import { hashSecret, verifySecret } from "../../lib/crypto/hash.js";
import { AppError } from "../../lib/errors.js";
import { randomAlnum } from "../../lib/ids.js";
import type { AuditLog } from "../audit/audit.js";
import type { Actor } from "./actor.js";
import type { TokenSigner } from "./tokens.js";

const slugify = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 32) || "org";

const userView = (u: typeof users.$inferSelect) => ({
  id: u.id,
  email: u.email,
  username: u.username,
  firstName: u.firstName,
  lastName: u.lastName,
  superAdmin: u.superAdmin,
});

/** Session lifetime of user tokens (Ferry's simple email/password login). */
const SESSION_TTL_SECONDS = 24 * 3600;

export function createBootstrapService(deps: { db: Db; signer: TokenSigner; audit: AuditLog }) {
  const { db, signer, audit } = deps;
  return {
    /**
     * First-run setup, as Infisical's `POST /api/v1/admin/bootstrap`: an admin user, an organisation and
     * an "Instance Admin Identity" with a non-expiring token. The server_config row is claimed inside the
     * transaction, so two concurrent calls cannot both succeed.
     */
    async bootstrap(input: { email: string; password: string; organization: string }, ip: string) {
      const passwordHash = await hashSecret(input.password);
      const email = input.email.toLowerCase();
      const out = await db.transaction(async (tx) => {
        const claimed = await tx
          .insert(serverConfig)
          .values({ id: 1, initialized: true })
          .onConflictDoNothing()
          .returning();
        if (claimed.length === 0) throw new AppError("BAD_REQUEST", "Instance has already been set up");
        const [org] = await tx
          .insert(organizations)
          .values({
            name: input.organization,
            slug: `${slugify(input.organization)}-${randomAlnum(4).toLowerCase()}`,
          })
          .returning();
        const [user] = await tx
          .insert(users)
          .values({
            email,
            username: email,
            firstName: "Admin",
            lastName: "User",
            passwordHash,
            superAdmin: true,
          })
          .returning();
        if (!org || !user) throw new Error("insert returned nothing");
        await tx.insert(orgMemberships).values({ orgId: org.id, userId: user.id, role: "admin" });
        const [identity] = await tx
          .insert(identities)
          .values({
            orgId: org.id,
            name: "Instance Admin Identity",
            orgRole: "admin",
            authMethod: "token-auth",
          })
          .returning();
        if (!identity) throw new Error("insert returned nothing");
        const [tok] = await tx
          .insert(identityAccessTokens)
          .values({
            identityId: identity.id,
            authMethod: "token-auth",
            accessTokenTTL: 0,
            accessTokenMaxTTL: 0,
          })
          .returning();
        if (!tok) throw new Error("insert returned nothing");
        await tx
          .update(serverConfig)
          .set({ adminIdentityIds: [identity.id] })
          .where(eq(serverConfig.id, 1));
        await audit.record(
          {
            eventType: "bootstrap-instance",
            actor: { type: "user", id: user.id, name: email, orgId: org.id, ip },
            resource: { organizationId: org.id, identityId: identity.id },
          },
          tx,
        );
        return { org, user, identity, tokenId: tok.id };
      });
      const token = await signer.sign(
        {
          authTokenType: "identityAccessToken",
          identityId: out.identity.id,
          clientSecretId: null,
          identityAccessTokenId: out.tokenId,
        },
        0,
      );
      return {
        message: "Successfully bootstrapped instance",
        user: userView(out.user),
        organization: { id: out.org.id, name: out.org.name, slug: out.org.slug },
        identity: { id: out.identity.id, name: out.identity.name, credentials: { token } },
      };
    },

    /** Ferry's email/password login for users (Infisical's SRP flow is not reproduced). */
    async loginUser(input: { email: string; password: string }, ip: string, userAgent?: string) {
      const [row] = await db
        .select({ user: users, orgId: orgMemberships.orgId })
        .from(users)
        .innerJoin(orgMemberships, eq(orgMemberships.userId, users.id))
        .where(eq(users.email, input.email.toLowerCase()))
        .limit(1);
      const ok = row ? await verifySecret(input.password, row.user.passwordHash) : false;
      if (!row || !ok) throw new AppError("UNAUTHORIZED", "Invalid credentials");
      const [session] = await db
        .insert(userSessions)
        .values({
          userId: row.user.id,
          orgId: row.orgId,
          expiresAt: new Date(Date.now() + SESSION_TTL_SECONDS * 1000),
        })
        .returning();
      if (!session) throw new Error("insert returned nothing");
      audit.recordLater({
        eventType: "login-user",
        actor: { type: "user", id: row.user.id, name: row.user.email, orgId: row.orgId, ip, userAgent },
      });
      const accessToken = await signer.sign(
        {
          authTokenType: "accessToken",
          userId: row.user.id,
          sessionId: session.id,
          organizationId: row.orgId,
        },
        SESSION_TTL_SECONDS,
      );
      return {
        accessToken,
        expiresIn: SESSION_TTL_SECONDS,
        tokenType: "Bearer" as const,
        user: userView(row.user),
      };
    },

    /** Adds a user to the caller's organisation (org admins only). */
    async createUser(actor: Actor, input: { email: string; password: string; role: string }) {
      if (actor.orgRole !== "admin") {
        throw new AppError("PERMISSION_DENIED", "You are not allowed to create users in this organization");
      }
      const email = input.email.toLowerCase();
      const passwordHash = await hashSecret(input.password);
      return db.transaction(async (tx) => {
        const [exists] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email));
        if (exists)
          throw new AppError("BAD_REQUEST", "User already exists", { name: "Instance initialization" });
        const [user] = await tx.insert(users).values({ email, username: email, passwordHash }).returning();
        if (!user) throw new Error("insert returned nothing");
        await tx.insert(orgMemberships).values({ orgId: actor.orgId, userId: user.id, role: input.role });
        await audit.record({ eventType: "create-user", actor, resource: { userId: user.id } }, tx);
        return userView(user);
      });
    },

    async revokeSession(actor: Actor) {
      if (actor.type !== "user") return;
      await db
        .update(userSessions)
        .set({ isRevoked: true })
        .where(and(eq(userSessions.id, actor.tokenId)));
    },
  };
}

export type BootstrapService = ReturnType<typeof createBootstrapService>;
