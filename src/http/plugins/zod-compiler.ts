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
 *
 * Successful results for small flat inputs (query strings, path parameters, small bodies of plain
 * values) are memoised per schema: clients poll with the same query over and over, and a zod parse of a
 * dozen optional fields cost more than any other step of a cached secret read. Parsing is a pure
 * function of the input, the key is the input's JSON, each hit gets its own shallow copy, and each
 * schema keeps at most MEMO_MAX entries (cleared when full).
 */
const MEMO_MAX = 256;
const MEMO_KEY_MAX = 1024;

type Result = { value: unknown } | { error: Error };

/** The memo key of a plain object whose values are all strings, numbers, booleans or null; else undefined. */
function flatKey(input: unknown): string | undefined {
  if (!input || typeof input !== "object" || Array.isArray(input)) return undefined;
  for (const k in input) {
    const v = (input as Record<string, unknown>)[k];
    if (v !== null && typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
      return undefined;
  }
  const key = JSON.stringify(input);
  return key.length <= MEMO_KEY_MAX ? key : undefined;
}

/** Only results made of plain values can be handed out again as shallow copies. */
function isFlat(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === "object") return false;
  }
  return true;
}

export const validatorCompiler: FastifySchemaCompiler<ZodTypeAny> = ({ schema, httpPart }) => {
  const memo = new Map<string, Record<string, unknown>>();
  const parse = (data: unknown): Result => {
    let input = data;
    if (httpPart === "querystring" && data && typeof data === "object") {
      input = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== "" && v !== undefined));
    }
    // Fastify hands a missing body over as null; a route whose body is optional accepts that.
    if (httpPart === "body" && input === null && schema.safeParse(undefined).success) input = undefined;
    const result = schema.safeParse(input);
    return result.success ? { value: result.data } : { error: result.error as unknown as Error };
  };
  return (data: unknown) => {
    const key = flatKey(data);
    if (key === undefined) return parse(data);
    const hit = memo.get(key);
    if (hit) return { value: { ...hit } };
    const result = parse(data);
    if ("value" in result && isFlat(result.value)) {
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(key, { ...result.value });
    }
    return result;
  };
};
