import { describe, expect, it } from "vitest";
import { z } from "zod";
import { validatorCompiler } from "../../src/http/plugins/zod-compiler.js";

/** The validator memoises results for small flat inputs; a memo hit must behave exactly like a parse. */
const compile = (schema: z.ZodTypeAny, httpPart: string) =>
  validatorCompiler({ schema, httpPart, method: "GET", url: "/x" }) as (data: unknown) => {
    value?: Record<string, unknown>;
    error?: z.ZodError;
  };

describe("validator memo", () => {
  const schema = z.object({
    environment: z.string().trim().min(1),
    secretPath: z.string().trim().default("/"),
    recursive: z
      .enum(["true", "false"])
      .transform((v) => v === "true")
      .default("false"),
  });

  it("hands out equal results that do not share state between requests", () => {
    const validate = compile(schema, "querystring");
    const first = validate({ environment: " dev ", recursive: "true" });
    expect(first.value).toEqual({ environment: "dev", secretPath: "/", recursive: true });
    (first.value as Record<string, unknown>).environment = "changed by a handler";
    const second = validate({ environment: " dev ", recursive: "true" });
    expect(second.value).toEqual({ environment: "dev", secretPath: "/", recursive: true });
    expect(second.value).not.toBe(first.value);
  });

  it("keeps failing invalid input, drops empty query values, and never memoises nested input", () => {
    const validate = compile(schema, "querystring");
    for (let i = 0; i < 2; i++) {
      const bad = validate({ environment: "" });
      expect(bad.error?.issues[0]?.path).toEqual(["environment"]);
    }
    expect(validate({ environment: "prod", secretPath: "" }).value).toMatchObject({ secretPath: "/" });
    const body = compile(z.object({ tags: z.array(z.string()) }), "body");
    const a = body({ tags: ["a"] }).value as { tags: string[] };
    a.tags.push("mutated");
    expect(body({ tags: ["a"] }).value).toEqual({ tags: ["a"] });
  });

  it("still gives the right answer after the memo fills up", () => {
    const validate = compile(schema, "params");
    for (let i = 0; i < 600; i++) {
      expect(validate({ environment: `env-${i}` }).value).toMatchObject({ environment: `env-${i}` });
    }
    expect(validate({ environment: "env-3" }).value).toMatchObject({ environment: "env-3" });
  });
});
