import { z } from "zod";

/** Infisical's aws-parameter-store-sync-schemas / aws-connection-schemas, with their messages. */

export const AWS_REGIONS = [
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
  "us-gov-east-1",
  "us-gov-west-1",
  "af-south-1",
  "ap-east-1",
  "ap-south-1",
  "ap-south-2",
  "ap-northeast-1",
  "ap-northeast-2",
  "ap-northeast-3",
  "ap-southeast-1",
  "ap-southeast-2",
  "ap-southeast-3",
  "ap-southeast-4",
  "ca-central-1",
  "eu-central-1",
  "eu-central-2",
  "eu-west-1",
  "eu-west-2",
  "eu-west-3",
  "eu-south-1",
  "eu-south-2",
  "eu-north-1",
  "il-central-1",
  "me-south-1",
  "me-central-1",
  "sa-east-1",
] as const;

export const awsParameterStoreConfigSchema = z.object({
  region: z.enum(AWS_REGIONS),
  path: z
    .string()
    .trim()
    .min(1, "Parameter Store Path required")
    .max(2048, "Cannot exceed 2048 characters")
    .regex(/^\/([A-Za-z0-9_-]+\/)*$/, 'Invalid path - must follow "/example/path/" format'),
});

export type AwsParameterStoreConfig = z.infer<typeof awsParameterStoreConfigSchema>;

const TAG_CHARS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

export const awsParameterStoreSyncOptionsSchema = z.object({
  /** KMS key id, ARN or alias; AWS uses alias/aws/ssm when absent. */
  keyId: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .regex(/^[A-Za-z0-9:/_-]+$/, "Invalid KMS Key ID")
    .optional(),
  tags: z
    .object({
      key: z
        .string()
        .trim()
        .min(1, "Resource tag key required")
        .max(128, "Resource tag key cannot exceed 128 characters")
        .regex(TAG_CHARS, "Invalid resource tag key"),
      value: z
        .string()
        .trim()
        .max(256, "Resource tag value cannot exceed 256 characters")
        .regex(TAG_CHARS, "Invalid resource tag value"),
    })
    .array()
    .max(50)
    .refine(
      (tags) => new Set(tags.map((t) => t.key)).size === tags.length,
      "Resource tag keys must be unique",
    )
    .optional(),
  syncSecretMetadataAsTags: z.boolean().optional(),
});

export const awsMethods = {
  "access-key": z.object({
    accessKeyId: z.string().trim().min(1, "Access Key ID required"),
    secretAccessKey: z.string().trim().min(1, "Secret Access Key required"),
  }),
  "assume-role": z.object({
    roleArn: z.string().trim().min(1, "Role ARN required"),
  }),
};
