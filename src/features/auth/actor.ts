/** Who is calling: a machine identity or a user, resolved once per request by the auth plugin. */
export type Actor = {
  type: "identity" | "user";
  id: string;
  orgId: string;
  name: string;
  orgRole: string;
  /** The access-token or session row id (for revocation and audit). */
  tokenId: string;
  authMethod: string;
  ip: string;
  userAgent?: string;
};
