import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { secretReadSchema, secretWithHiddenSchema } from "../../src/features/secrets/secrets-view.js";
import { compileFastSerializer } from "../../src/http/plugins/fast-serializer.js";

/**
 * The hot secret routes serialize with fast-json-stringify compiled from their zod response schemas.
 * Whatever the payload, the JSON must equal what the zod serializer (parse + JSON.stringify) gives:
 * same fields, dates as ISO strings, nulls kept, and every property the schema does not list dropped.
 */
const zodJson = (schema: z.ZodTypeAny, data: unknown) => JSON.stringify(schema.parse(data));

const text = fc.string({ maxLength: 40 });
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
const when = fc.date({ min: new Date("2000-01-01"), max: new Date("2100-01-01"), noInvalidDate: true });
const secret = fc.record(
  {
    id: fc.uuid(),
    _id: fc.uuid(),
    workspace: fc.uuid(),
    environment: text,
    version: fc.integer({ min: 1, max: 1_000_000 }),
    type: fc.constantFrom("shared", "personal"),
    secretKey: text,
    secretValue: fc.string({ maxLength: 200, unit: "binary" }),
    secretComment: text,
    secretReminderNote: maybe(text),
    secretReminderRepeatDays: maybe(fc.integer({ min: 1, max: 365 })),
    skipMultilineEncoding: maybe(fc.boolean()),
    createdAt: fc.oneof(
      when,
      when.map((d) => d.toISOString()),
    ),
    updatedAt: when,
    actor: maybe(
      fc.record({
        actorId: maybe(fc.uuid()),
        actorType: maybe(text),
        name: maybe(text),
        membershipId: maybe(fc.uuid()),
        groupId: maybe(fc.uuid()),
      }),
    ),
    isRotatedSecret: fc.boolean(),
    rotationId: maybe(fc.uuid()),
    secretValueHidden: fc.boolean(),
    secretPath: text,
    tags: fc.array(fc.record({ id: fc.uuid(), slug: text, color: maybe(text), name: text }), {
      maxLength: 3,
    }),
    secretMetadata: fc.array(fc.record({ key: text, value: text, isEncrypted: fc.boolean() }), {
      maxLength: 3,
    }),
    // Never part of a response: must not come out.
    encryptedValue: fc.constant("c2VhbGVk"),
    folderId: fc.uuid(),
  },
  { requiredKeys: ["id", "_id", "workspace", "environment", "version", "type", "secretKey", "secretValue"] },
);

describe("fast serializer for the hot secret routes", () => {
  it("writes exactly what the zod serializer writes, for single reads, lists and deletes", () => {
    const complete = secret.filter((s) =>
      ["secretComment", "createdAt", "updatedAt", "secretValueHidden", "secretPath"].every((k) => k in s),
    );
    const readOne = z.object({ secret: secretReadSchema });
    const list = z.object({ secrets: z.array(secretReadSchema) });
    const changed = z.object({ secret: secretWithHiddenSchema });
    const [fastOne, fastList, fastChanged] = [readOne, list, changed].map(compileFastSerializer);
    fc.assert(
      fc.property(complete, fc.array(complete, { maxLength: 4 }), (s, many) => {
        expect(JSON.parse(fastOne?.({ secret: s }) ?? "")).toEqual(
          JSON.parse(zodJson(readOne, { secret: s })),
        );
        expect(JSON.parse(fastList?.({ secrets: many }) ?? "")).toEqual(
          JSON.parse(zodJson(list, { secrets: many })),
        );
        const out = fastChanged?.({ secret: s }) ?? "";
        expect(JSON.parse(out)).toEqual(JSON.parse(zodJson(changed, { secret: s })));
        expect(out).not.toContain("encryptedValue");
        expect(out).not.toContain("folderId");
      }),
      { numRuns: 300 },
    );
  });
});
