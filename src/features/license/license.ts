import { errors, importSPKI, jwtVerify } from "jose";
import { z } from "zod";
import { FERRY_LICENSE_PUBLIC_KEY_PEM } from "./ferry-public-key.js";

/**
 * Offline licences.
 *
 * `LICENSE_KEY` is a compact JWT signed with Ed25519 (`alg: "EdDSA"`). It is verified locally against
 * Ferry's built-in public key, or against `LICENSE_PUBLIC_KEY` when an operator runs their own issuer.
 * There is no licence server and no phone-home: the token is the whole licence.
 *
 * Claims:
 * - `plan`: e.g. "enterprise". The enterprise plan turns every gated feature on.
 * - `features`: optional per-feature switches, e.g. `{ "eventSubscriptions": true }`, for plans that
 *   grant single features.
 * - `sub` (who it was issued to), `iat`, and optional `exp`.
 *
 * A missing, malformed, forged or expired licence is never fatal: the service runs with gated features
 * off and `reason` says why in one line, which the caller logs once at startup.
 */

/** The plan reported when no valid licence is present. */
export const FREE_PLAN = "free";
export const ENTERPRISE_PLAN = "enterprise";

/**
 * Only EdDSA is accepted. Pinning the algorithm is what stops `alg: "none"` and HS256-with-the-public-key
 * confusion attacks; jose refuses anything not listed here before it looks at the signature.
 */
const ALLOWED_ALGORITHMS = ["EdDSA"];

export type LicenseSource =
  | "none" // LICENSE_KEY not set
  | "invalid" // set but rejected (see reason)
  | "builtin-key" // verified with Ferry's built-in public key
  | "custom-key"; // verified with LICENSE_PUBLIC_KEY

export interface License {
  plan: string;
  features: Record<string, boolean>;
  /** The `sub` claim: the customer or installation the licence was issued to. */
  issuedTo?: string;
  expiresAt?: Date;
  source: LicenseSource;
  /** One line, safe to log, set whenever the licence is not in effect. Never contains the key. */
  reason?: string;
}

export interface LoadLicenseOptions {
  /** Usually `process.env.LICENSE_KEY`. */
  licenseKey?: string | undefined;
  /** Usually `process.env.LICENSE_PUBLIC_KEY` (SPKI PEM). Defaults to Ferry's built-in key. */
  publicKeyPem?: string | undefined;
  /** For tests: the clock used for the `exp` check. */
  now?: Date;
}

const claimsSchema = z.object({
  plan: z.string().trim().min(1),
  features: z.record(z.string(), z.boolean()).optional(),
  sub: z.string().optional(),
  iat: z.number().optional(),
  exp: z.number().optional(),
});

function unlicensed(source: "none" | "invalid", reason: string): License {
  return { plan: FREE_PLAN, features: {}, source, reason };
}

export async function loadLicense(opts: LoadLicenseOptions = {}): Promise<License> {
  const token = opts.licenseKey?.trim();
  if (!token) {
    return unlicensed("none", "No LICENSE_KEY set; enterprise features are off.");
  }

  const customPem = opts.publicKeyPem?.trim();
  const source = customPem ? "custom-key" : "builtin-key";
  let key: Awaited<ReturnType<typeof importSPKI>>;
  try {
    key = await importSPKI(customPem || FERRY_LICENSE_PUBLIC_KEY_PEM, "EdDSA");
  } catch {
    return unlicensed(
      "invalid",
      "LICENSE_PUBLIC_KEY is not an Ed25519 public key in SPKI PEM form; enterprise features are off.",
    );
  }

  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: ALLOWED_ALGORITHMS,
      currentDate: opts.now ?? new Date(),
    }));
  } catch (err) {
    return unlicensed("invalid", `${describeVerifyError(err)}; enterprise features are off.`);
  }

  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) {
    return unlicensed(
      "invalid",
      "LICENSE_KEY claims are malformed (needs a 'plan' string and boolean 'features'); enterprise features are off.",
    );
  }
  const { plan, features, sub, exp } = claims.data;
  return {
    plan,
    features: { ...features },
    ...(sub !== undefined && { issuedTo: sub }),
    ...(exp !== undefined && { expiresAt: new Date(exp * 1000) }),
    source,
  };
}

/** Whether a gated feature (e.g. "eventSubscriptions") is available under this licence. */
export function hasFeature(license: License, feature: string): boolean {
  return license.plan === ENTERPRISE_PLAN || license.features[feature] === true;
}

/** A one-line summary for the startup log: never includes the token itself. */
export function describeLicense(license: License): string {
  if (license.reason) return license.reason;
  const who = license.issuedTo ? ` issued to ${license.issuedTo}` : "";
  const until = license.expiresAt ? `, valid until ${license.expiresAt.toISOString()}` : "";
  const extra = Object.keys(license.features).filter((f) => license.features[f] === true);
  const feats = extra.length > 0 ? `, features: ${extra.join(", ")}` : "";
  return `Licence: plan ${license.plan}${who}${until}${feats}.`;
}

// jose's messages are fine but generic; these say what an operator should check. They deliberately
// never echo the token or claim values.
function describeVerifyError(err: unknown): string {
  if (err instanceof errors.JWTExpired) {
    const exp = typeof err.payload.exp === "number" ? new Date(err.payload.exp * 1000).toISOString() : "";
    return exp ? `LICENSE_KEY expired at ${exp}` : "LICENSE_KEY has expired";
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return "LICENSE_KEY is not signed with EdDSA (Ed25519)";
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return "LICENSE_KEY signature does not match the licence public key";
  }
  if (err instanceof errors.JWTClaimValidationFailed) {
    return `LICENSE_KEY claim '${err.claim}' is invalid`;
  }
  return "LICENSE_KEY is not a well-formed signed licence";
}
