import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { LicenseService } from "../../features/license/license-service.js";

const licenseReport = z.object({
  plan: z.string(),
  status: z.enum(["active", "unlicensed", "invalid", "expired"]),
  features: z.record(z.string(), z.boolean()),
  issuedTo: z.string().nullable(),
  expiresAt: z.string().nullable(),
  message: z.string().optional(),
});

/** `GET /api/v1/license`: the plan and features in force for any signed-in caller; never the key. */
export const licenseRoutes =
  (svc: { license: LicenseService }): FastifyPluginAsyncZod =>
  async (app) => {
    app.get(
      "/api/v1/license",
      { schema: { tags: ["License"], response: { 200: licenseReport } } },
      async () => svc.license.report(),
    );
  };
