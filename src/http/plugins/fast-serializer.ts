import { createHash } from "node:crypto";
import fastJson from "fast-json-stringify";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeAny } from "zod";
import { zodToJsonSchema } from "zod-to-json-schema";

/**
 * Response serialization for the hot secret routes (get by name, list, single delete): the route's zod
 * response schema is converted once to JSON Schema and compiled with fast-json-stringify, which writes
 * only the properties the schema lists (like zod's default strip, so nothing unlisted such as an
 * `encrypted*` column can leak) without first building a parsed copy of the payload. Everywhere else the
 * zod serializer (parse, then JSON.stringify) stays: it also rejects a response that breaks its schema.
 *
 * Why fast-json-stringify: it is Fastify's own serializer, already installed with it, and per call it is
 * one generated function with no intermediate objects; on the bench's GET this saved ~15% of the
 * server's CPU per request (see README, Performance).
 */
type Json = Record<string, unknown>;

/** JSON Schema rewrites for shapes zod-to-json-schema emits and fast-json-stringify handles slowly. */
function simplify(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplify);
  if (!node || typeof node !== "object") return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) out[k] = simplify(v);
  const anyOf = out.anyOf as Json[] | undefined;
  if (Array.isArray(anyOf) && anyOf.length > 0) {
    // `z.date().or(z.string())`: a Date or an ISO string, both written as a date-time string (a Date is
    // converted with toISOString, as JSON.stringify would).
    if (
      anyOf.every(
        (b) => b.type === "string" && Object.keys(b).every((key) => key === "type" || key === "format"),
      )
    ) {
      const { anyOf: _, ...rest } = out;
      return { ...rest, type: "string", format: "date-time" };
    }
    // `X.nullable()` for a typed X: a type list instead of an anyOf that needs a validator per call.
    const nonNull = anyOf.filter((b) => b.type !== "null");
    const first = nonNull[0];
    if (nonNull.length === 1 && anyOf.length === 2 && first && typeof first.type === "string") {
      const { anyOf: _, ...rest } = out;
      return { ...rest, ...first, type: [first.type, "null"] };
    }
  }
  return out;
}

export function compileFastSerializer(schema: ZodTypeAny): (data: unknown) => string {
  const json = simplify(zodToJsonSchema(schema, { target: "jsonSchema7", $refStrategy: "none" }));
  return fastJson(json as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
}

/** Route option: `serializerCompiler: fastSerializerCompiler`. */
export const fastSerializerCompiler = ({ schema }: { schema: unknown }) =>
  compileFastSerializer(schema as ZodTypeAny);

/**
 * Route-level onSend hook: an ETag computed from the serialized body (one serialization, not two), and
 * 304 Not Modified without a body when the request's If-None-Match names it.
 */
export async function etagOnSend(req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  if (reply.statusCode !== 200 || typeof payload !== "string") return payload;
  const etag = `"${createHash("sha1").update(payload).digest("base64url")}"`;
  reply.header("etag", etag);
  const inm = req.headers["if-none-match"];
  if (!inm?.split(",").some((t) => t.trim().replace(/^W\//, "") === etag)) return payload;
  reply.code(304);
  reply.removeHeader("content-type");
  return "";
}
