import fc from "fast-check";
import type { ZodTypeAny } from "zod";

/**
 * Derives fast-check arbitraries from the routes' own zod 3 schemas, so the fuzz suite follows the API
 * as it changes. `valid` aims at values the schema accepts (so requests reach the handlers and the
 * database); `hostile` produces what attackers and broken clients send.
 *
 * (zod-fast-check would do the first half, but it pins fast-check < 4.)
 */
type Def = { typeName: string; [k: string]: unknown };
const defOf = (s: ZodTypeAny) => (s as unknown as { _def: Def })._def;

const UUIDISH = fc.oneof(fc.uuid(), fc.constant("00000000-0000-0000-0000-000000000000"));
/** Numbers past PostgreSQL's int4/int8/float ranges, which zod's `.int()` alone lets through. */
const HUGE = fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, 1e300, -1);
/** Text PostgreSQL refuses to store (NUL), next to otherwise plausible values. */
const NUL_TEXT = fc.constantFrom("\u0000", "dev\u0000", "/app/\u0000x", "KEY\u0000");
const nasty = fc.constantFrom(
  "",
  " ",
  "..",
  "../../etc/passwd",
  "/app/../../x",
  "%2e%2e%2f",
  "__proto__",
  "constructor",
  "prototype",
  "\u0000",
  "😀🔥",
  "ﬁ\u202e\u200b",
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: secret-reference syntax, sent literally on purpose
  "${KEY}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: secret-reference syntax, sent literally on purpose
  "${a.b.c}",
  "<script>alert(1)</script>",
  "a".repeat(5000),
  "-1",
  "NaN",
  "true",
  "null",
);

export function valid(schema: ZodTypeAny, depth = 0): fc.Arbitrary<unknown> {
  const d = defOf(schema);
  switch (d.typeName) {
    case "ZodString": {
      const checks = (d.checks as { kind: string; value?: number }[]) ?? [];
      if (checks.some((c) => c.kind === "uuid")) return UUIDISH;
      if (checks.some((c) => c.kind === "email")) return fc.emailAddress();
      if (checks.some((c) => c.kind === "url"))
        return fc.constantFrom("https://example.com", "http://127.0.0.1:1");
      const max = checks.find((c) => c.kind === "max")?.value ?? 40;
      const min = checks.find((c) => c.kind === "min")?.value ?? 0;
      return fc.oneof(
        fc.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/).filter((s) => s.length >= min && s.length <= max),
        fc.string({ minLength: min, maxLength: Math.min(max, 40) }),
        fc.constantFrom("dev", "staging", "prod", "/", "/app", "/app/db", "KEY", "ci"),
        NUL_TEXT,
      );
    }
    case "ZodNumber":
      return fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constantFrom(0, 1, 2592000), HUGE);
    case "ZodBoolean":
      return fc.boolean();
    case "ZodDate":
      return fc
        .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
        .map((x) => x.toISOString());
    case "ZodLiteral":
      return fc.constant(d.value);
    case "ZodEnum":
      return fc.constantFrom(...(d.values as string[]));
    case "ZodNativeEnum":
      return fc.constantFrom(...Object.values(d.values as object));
    case "ZodOptional":
    case "ZodNullable":
      return fc.option(valid(d.innerType as ZodTypeAny, depth), { nil: undefined });
    case "ZodDefault":
    case "ZodCatch":
    case "ZodReadonly":
    case "ZodBranded":
      return valid((d.innerType ?? d.type) as ZodTypeAny, depth);
    case "ZodEffects":
      return valid(d.schema as ZodTypeAny, depth);
    case "ZodPipeline":
      return valid(d.in as ZodTypeAny, depth);
    case "ZodLazy":
      return depth > 3 ? fc.constant(undefined) : valid((d.getter as () => ZodTypeAny)(), depth + 1);
    case "ZodArray":
      return depth > 3 ? fc.constant([]) : fc.array(valid(d.type as ZodTypeAny, depth + 1), { maxLength: 4 });
    case "ZodUnion":
    case "ZodDiscriminatedUnion": {
      const opts = (d.options as ZodTypeAny[] | Map<unknown, ZodTypeAny>) ?? [];
      const list = Array.isArray(opts) ? opts : [...opts.values()];
      return fc.oneof(...list.map((o) => valid(o, depth + 1)));
    }
    case "ZodObject": {
      const shape = (d.shape as () => Record<string, ZodTypeAny>)();
      const entries = Object.entries(shape).map(([k, v]) => [k, valid(v, depth + 1)] as const);
      return fc.record(Object.fromEntries(entries), { requiredKeys: [] });
    }
    case "ZodRecord":
      return fc.dictionary(fc.string({ maxLength: 8 }), valid(d.valueType as ZodTypeAny, depth + 1), {
        maxKeys: 3,
      });
    case "ZodTuple":
      return fc.tuple(...(d.items as ZodTypeAny[]).map((i) => valid(i, depth + 1)));
    default:
      return fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  }
}

/** Anything at all, biased towards the inputs that break parsers and handlers. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    nasty,
    fc.string(),
    fc.string({ unit: "grapheme", maxLength: 30 }),
    fc.integer(),
    HUGE,
    fc.double(),
    fc.constant(null),
    fc.boolean(),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("__proto__", "constructor", "prototype")),
      tie("value"),
      {
        maxKeys: 4,
      },
    ),
  ),
})).value;

/** An object shaped like the schema, with one or more fields replaced by hostile values. */
export function hostile(schema: ZodTypeAny | undefined): fc.Arbitrary<unknown> {
  const deep = fc.integer({ min: 50, max: 2000 }).map((n) => {
    let v: unknown = "x";
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  });
  const base = schema ? valid(schema) : fc.constant({});
  return fc.oneof(
    hostileValue,
    deep,
    fc
      .tuple(base, fc.string({ maxLength: 10 }), hostileValue)
      .map(([b, k, v]) =>
        b && typeof b === "object" && !Array.isArray(b) ? { ...(b as object), [k]: v } : v,
      ),
    base.chain((b) =>
      b && typeof b === "object" && !Array.isArray(b) && Object.keys(b).length > 0
        ? fc
            .tuple(fc.constantFrom(...Object.keys(b)), hostileValue)
            .map(([k, v]) => ({ ...(b as object), [k]: v }))
        : fc.constant(b),
    ),
  );
}

/** A path parameter value: ids, names and the classic traversal and encoding tricks. */
export const paramValue: fc.Arbitrary<string> = fc.oneof(
  UUIDISH,
  fc.constantFrom(
    "dev",
    "KEY",
    "not-a-uuid",
    "..",
    "%2e%2e",
    "%00",
    "a%2Fb",
    "😀",
    "__proto__",
    "x".repeat(3000),
  ),
  fc.string({ minLength: 1, maxLength: 20 }).map((s) => encodeURIComponent(s)),
);
