import { DeleteParametersCommand, GetParametersByPathCommand, SSMClient } from "@aws-sdk/client-ssm";
import { afterEach, describe, expect, it } from "vitest";
import { testIo } from "../../../tests/contract/targets.js";
import { FakeAws, type FakeAwsOptions } from "../../../tests/fakes/aws-parameter-store.js";
import type { DestinationCtx } from "../types.js";
import {
  awsParameterStore,
  awsParameterStoreConfigSchema,
  awsParameterStoreSyncOptionsSchema,
} from "./index.js";

let fake: FakeAws | undefined;
afterEach(async () => {
  await fake?.close();
});

const ROLE = "arn:aws:iam::123456789012:role/ferry-sync";

async function setup(opts: FakeAwsOptions = {}, over: Partial<DestinationCtx> = {}) {
  fake = await new FakeAws({ roles: { [ROLE]: { externalId: "org-ferry-test" } }, ...opts }).start();
  const ctx: DestinationCtx = {
    ...testIo({
      AWS_ENDPOINT_URL: fake.url,
      AWS_ACCESS_KEY_ID: fake.accessKeyId,
      AWS_SECRET_ACCESS_KEY: fake.secretAccessKey,
    }),
    config: { region: "us-east-1", path: "/app/" },
    syncOptions: {},
    credentials: {
      method: "access-key",
      accessKeyId: fake.accessKeyId,
      secretAccessKey: fake.secretAccessKey,
    },
    ...over,
  };
  return { fake, ctx };
}

describe("aws-parameter-store", () => {
  it("puts SecureStrings with the KMS key and configured tags, signed with SigV4", async () => {
    const { fake, ctx } = await setup();
    const syncOptions = { keyId: "alias/ferry", tags: [{ key: "team", value: "platform" }] };
    const result = await awsParameterStore.apply(
      { ...ctx, syncOptions },
      { upsert: { DB: "pg://x" }, delete: [] },
    );
    expect(result.writes).toBe(2);
    expect(fake.writes.map((c) => c.action)).toEqual(["PutParameter", "AddTagsToResource"]);
    expect(fake.params.get("/app/DB")).toMatchObject({
      value: "pg://x",
      type: "SecureString",
      keyId: "alias/ferry",
      tags: { team: "platform" },
    });
    expect(String(fake.calls[0]?.headers.authorization)).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${fake.accessKeyId}/\\d{8}/us-east-1/ssm/aws4_request`),
    );
    expect(fake.calls[0]?.headers["x-amz-target"]).toBe("AmazonSSM.PutParameter");
  });

  it("deletes in batches of at most 10 and turns empty values into deletes", async () => {
    const { fake, ctx } = await setup();
    const names = Array.from({ length: 24 }, (_, i) => `K${i}`);
    fake.seed("/app/", Object.fromEntries([...names, "EMPTY"].map((n) => [n, "v"])));
    const result = await awsParameterStore.apply(ctx, { upsert: { EMPTY: "" }, delete: names });
    expect(fake.writes.map((c) => (c.body as { Names: string[] }).Names.length)).toEqual([10, 10, 5]);
    expect(result.writes).toBe(3);
    expect(fake.read("/app/")).toEqual({});
  });

  it("assumes a role with the organization id as ExternalId", async () => {
    const { fake, ctx } = await setup({}, { credentials: { method: "assume-role", roleArn: ROLE } });
    await awsParameterStore.apply(ctx, { upsert: { A: "1" }, delete: [] });
    expect(fake.lastAssumeRole).toMatchObject({
      Action: "AssumeRole",
      RoleArn: ROLE,
      ExternalId: "org-ferry-test",
      DurationSeconds: "900",
    });
    expect(fake.calls.find((c) => c.action === "PutParameter")?.headers["x-amz-security-token"]).toMatch(
      /^session-/,
    );
    await expect(
      awsParameterStore.connection.validate({ method: "assume-role", roleArn: ROLE }, ctx),
    ).resolves.toBeUndefined();
    const err = await awsParameterStore
      .apply({ ...ctx, orgId: "other-org" }, { upsert: { A: "1" }, delete: [] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "FORBIDDEN", retryable: false });
    expect((err as Error).message).toMatch(
      /^Failed to assume role - verify credentials and role configuration/,
    );
  });

  it("maps throttling to a retryable error with a suggested delay, and auth errors to final ones", async () => {
    const { fake, ctx } = await setup();
    fake.failNext(429);
    await expect(awsParameterStore.list?.(ctx)).rejects.toMatchObject({
      code: "RATE_LIMITED",
      retryable: true,
      retryAfterMs: 1000,
    });
    expect(fake.calls).toHaveLength(1); // the SDK's own retries are off
    const other = { ...ctx, config: { region: "eu-west-1" as const, path: "/app/" } };
    await expect(awsParameterStore.list?.(other)).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      retryable: false,
    });
  });

  it("fake enforces SSM limits: MaxResults ≤ 10, DeleteParameters ≤ 10 names", async () => {
    const { fake } = await setup();
    const ssm = new SSMClient({
      region: "us-east-1",
      endpoint: fake.url,
      maxAttempts: 1,
      credentials: { accessKeyId: fake.accessKeyId, secretAccessKey: fake.secretAccessKey },
    });
    await expect(
      ssm.send(new GetParametersByPathCommand({ Path: "/app/", MaxResults: 11 })),
    ).rejects.toMatchObject({
      name: "ValidationException",
    });
    const eleven = Array.from({ length: 11 }, (_, i) => `/app/K${i}`);
    await expect(ssm.send(new DeleteParametersCommand({ Names: eleven }))).rejects.toMatchObject({
      name: "ValidationException",
    });
  });

  it("validates config and sync options with Infisical's rules", () => {
    const msg = (v: unknown) => awsParameterStoreConfigSchema.safeParse(v).error?.issues[0]?.message;
    expect(msg({ region: "us-east-1", path: "/a/b" })).toBe(
      'Invalid path - must follow "/example/path/" format',
    );
    expect(msg({ region: "us-east-1", path: "" })).toBe("Parameter Store Path required");
    expect(awsParameterStoreConfigSchema.safeParse({ region: "us-east-1", path: "/" }).success).toBe(true);
    const opt = (v: unknown) => awsParameterStoreSyncOptionsSchema.safeParse(v).error?.issues[0]?.message;
    expect(opt({ keyId: "bad key!" })).toBe("Invalid KMS Key ID");
    expect(
      opt({
        tags: [
          { key: "a", value: "1" },
          { key: "a", value: "2" },
        ],
      }),
    ).toBe("Resource tag keys must be unique");
  });
});
