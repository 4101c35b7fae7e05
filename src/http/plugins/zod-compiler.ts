import type { FastifySchemaCompiler } from "fastify";
import type { ZodTypeAny } from "zod";

/**
 * Validation as Infisical does it: `schema.safeParse(data)`, and on failure the ZodError itself becomes
 * the validation error, so the error handler answers 422 `ValidationFailure` with the issues array.
 *
 * Two tolerances that real clients need (see shared/reference/real-clients.md §4):
 * - empty query values count as absent (the Go SDK sends `workspaceSlug=` next to `workspaceId`);
 * - a missing body is validated as `undefined`, so a route whose body schema is optional accepts a
 *   bodiless DELETE, while a route that requires a body answers 422.
 */
export const validatorCompiler: FastifySchemaCompiler<ZodTypeAny> =
  ({ schema, httpPart }) =>
  (data: unknown) => {
    let input = data;
    if (httpPart === "querystring" && data && typeof data === "object") {
      input = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== "" && v !== undefined));
    }
    // Fastify hands a missing body over as null; a route whose body is optional accepts that.
    if (httpPart === "body" && input === null && schema.safeParse(undefined).success) input = undefined;
    const result = schema.safeParse(input);
    return result.success ? { value: result.data } : { error: result.error as unknown as Error };
  };
