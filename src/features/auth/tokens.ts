import { createSecretKey, type KeyObject } from "node:crypto";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { AppError } from "../../lib/errors.js";

/**
 * Access tokens are HS256 JWTs signed with AUTH_SECRET, with Infisical's claims:
 * - identities: `{identityId, clientSecretId, identityAccessTokenId, authTokenType: "identityAccessToken"}`
 * - users: `{userId, sessionId, organizationId, authTokenType: "accessToken"}`
 * `exp` is present only when the TTL is non-zero. Only HS256 is accepted: `none`, RS256 and any other
 * algorithm are refused (algorithm confusion).
 */
export type IdentityClaims = {
  authTokenType: "identityAccessToken";
  identityId: string;
  clientSecretId?: string | null;
  identityAccessTokenId: string;
};
export type UserClaims = {
  authTokenType: "accessToken";
  userId: string;
  sessionId: string;
  organizationId: string;
};
export type Claims = (IdentityClaims | UserClaims) & { exp?: number; iat?: number };

const TOKEN_MESSAGES = {
  expired: "Your token has expired. Please re-authenticate.",
  malformed:
    "The provided access token is malformed. Please use a valid token or generate a new one and try again.",
  algorithm:
    "The access token is signed with an invalid algorithm. Please provide a valid token and try again.",
};

export interface TokenSigner {
  sign(claims: IdentityClaims | UserClaims, ttlSeconds: number): Promise<string>;
  verify(token: string): Promise<Claims>;
}

export function createTokenSigner(secret: string): TokenSigner {
  const key: KeyObject = createSecretKey(Buffer.from(secret, "utf8"));
  return {
    async sign(claims, ttlSeconds) {
      const jwt = new SignJWT({ ...claims }).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuedAt();
      if (ttlSeconds > 0) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
      return jwt.sign(key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
        const t = payload.authTokenType;
        if (t === "identityAccessToken" && typeof payload.identityAccessTokenId === "string")
          return payload as Claims;
        if (t === "accessToken" && typeof payload.sessionId === "string") return payload as Claims;
        throw new AppError("TOKEN_ERROR", TOKEN_MESSAGES.malformed);
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof joseErrors.JWTExpired) throw new AppError("TOKEN_ERROR", TOKEN_MESSAGES.expired);
        if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) {
          throw new AppError("TOKEN_ERROR", TOKEN_MESSAGES.algorithm);
        }
        if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
          throw new AppError("TOKEN_ERROR", "invalid signature");
        }
        throw new AppError("TOKEN_ERROR", TOKEN_MESSAGES.malformed);
      }
    },
  };
}
