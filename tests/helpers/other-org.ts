import { identities, identityAccessTokens, organizations } from "../../src/db/schema/index.js";
import type { TestApp } from "./build-test-app.js";

/**
 * A second organisation with an admin identity and a valid token. Ferry has one bootstrap per instance,
 * so tests create the other tenant through the service layer, as an operator's migration would.
 */
export async function makeOtherOrg(t: TestApp) {
  const { db, signer } = t.services;
  const [org] = await db
    .insert(organizations)
    .values({ name: "Other", slug: `other-${Date.now()}` })
    .returning();
  if (!org) throw new Error("no org");
  const [identity] = await db
    .insert(identities)
    .values({ orgId: org.id, name: "intruder", orgRole: "admin", authMethod: "token-auth" })
    .returning();
  if (!identity) throw new Error("no identity");
  const [tok] = await db
    .insert(identityAccessTokens)
    .values({ identityId: identity.id, authMethod: "token-auth", accessTokenTTL: 0, accessTokenMaxTTL: 0 })
    .returning();
  if (!tok) throw new Error("no token");
  const token = await signer.sign(
    {
      authTokenType: "identityAccessToken",
      identityId: identity.id,
      clientSecretId: null,
      identityAccessTokenId: tok.id,
    },
    0,
  );
  return { orgId: org.id, identityId: identity.id, token };
}
