import { afterEach, describe, expect, it } from "vitest";
import { testIo } from "../../../tests/contract/targets.js";
import { FakeTriggerDev } from "../../../tests/fakes/trigger-dev.js";
import type { DestinationCtx } from "../types.js";
import { triggerDev, triggerDevConfigSchema } from "./index.js";

let fake: FakeTriggerDev | undefined;
afterEach(async () => {
  await fake?.close();
});

async function setup(syncOptions: Record<string, unknown> = {}) {
  fake = await new FakeTriggerDev().start();
  const ctx: DestinationCtx = {
    ...testIo(),
    config: { projectRef: "proj_abc", environment: "prod" },
    syncOptions,
    credentials: { method: "api-key", apiKey: fake.apiKey, instanceUrl: fake.url },
  };
  return { fake, ctx };
}

describe("trigger-dev", () => {
  it("imports all upserts in one call, marked secret by default, and lists them without values", async () => {
    const { fake, ctx } = await setup();
    const result = await triggerDev.apply(ctx, { upsert: { A: "1", B: "2" }, delete: [] });
    expect(result.writes).toBe(1);
    expect(fake.writes[0]).toMatchObject({
      path: "/api/v1/projects/proj_abc/envvars/prod/import",
      body: { override: true, isSecret: true },
    });
    expect(fake.calls[0]?.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(fake.isSecret("proj_abc/prod", "A")).toBe(true);
    expect(await triggerDev.list?.(ctx)).toEqual(
      new Map([
        ["A", null],
        ["B", null],
      ]),
    );
  });

  it("honours markAsSecret: false, and then lists values", async () => {
    const { ctx } = await setup({ markAsSecret: false });
    await triggerDev.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(await triggerDev.list?.(ctx)).toEqual(new Map([["A", "1"]]));
  });

  it("validates destinationConfig with Infisical's rules", () => {
    expect(
      triggerDevConfigSchema.safeParse({ projectRef: " ", environment: "dev" }).error?.issues[0]?.message,
    ).toBe("Project reference required");
    expect(triggerDevConfigSchema.safeParse({ projectRef: "proj_a", environment: "qa" }).success).toBe(false);
    expect(triggerDevConfigSchema.safeParse({ projectRef: "proj_a", environment: "preview" }).success).toBe(
      true,
    );
  });
});
