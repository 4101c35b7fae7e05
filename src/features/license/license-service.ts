import type { Logger } from "pino";
import { describeLicense, FREE_PLAN, hasFeature, type License, loadLicense } from "./license.js";

/**
 * The licence in force while the process runs. It is loaded and verified once at startup (license.ts);
 * this wrapper adds what a long-running process needs on top: a licence whose `exp` passes while the
 * server is up stops granting features at that moment, without a restart.
 */

/** Gated features Ferry knows about; the licence report always lists each of them. */
export const GATED_FEATURES = ["eventSubscriptions"] as const;

export type LicenseStatus = "active" | "unlicensed" | "invalid" | "expired";

export interface LicenseReport {
  plan: string;
  status: LicenseStatus;
  features: Record<string, boolean>;
  issuedTo: string | null;
  expiresAt: string | null;
  /** Why no licence is in force; absent when one is. */
  message?: string;
}

export function createLicenseService(license: License, clock: () => Date = () => new Date()) {
  const expired = (): boolean => license.expiresAt !== undefined && license.expiresAt <= clock();

  function current(): License {
    if (!expired()) return license;
    return {
      plan: FREE_PLAN,
      features: {},
      source: "invalid",
      reason: `LICENSE_KEY expired at ${license.expiresAt?.toISOString()}; enterprise features are off.`,
    };
  }

  return {
    current,
    has: (feature: string): boolean => hasFeature(current(), feature),

    /** What GET /api/v1/license returns: the plan and features in force, never the key. */
    report(): LicenseReport {
      const lic = current();
      const features: Record<string, boolean> = {};
      for (const f of [...GATED_FEATURES, ...Object.keys(lic.features)]) features[f] = hasFeature(lic, f);
      const status: LicenseStatus = expired()
        ? "expired"
        : lic.source === "none"
          ? "unlicensed"
          : lic.source === "invalid"
            ? "invalid"
            : "active";
      return {
        plan: lic.plan,
        status,
        features,
        issuedTo: lic.issuedTo ?? null,
        expiresAt: lic.expiresAt?.toISOString() ?? null,
        ...(lic.reason !== undefined && { message: lic.reason }),
      };
    },
  };
}

export type LicenseService = ReturnType<typeof createLicenseService>;

/** Loads LICENSE_KEY and logs one line saying which licence is in force, or why none is. */
export async function initLicense(deps: {
  config: { LICENSE_KEY?: string | undefined; LICENSE_PUBLIC_KEY?: string | undefined };
  log: Pick<Logger, "info" | "warn">;
}): Promise<LicenseService> {
  const license = await loadLicense({
    licenseKey: deps.config.LICENSE_KEY,
    publicKeyPem: deps.config.LICENSE_PUBLIC_KEY,
  });
  const line = describeLicense(license);
  if (license.source === "invalid") deps.log.warn({ plan: license.plan }, line);
  else deps.log.info({ plan: license.plan }, line);
  return createLicenseService(license);
}
