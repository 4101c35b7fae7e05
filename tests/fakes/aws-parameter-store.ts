import { randomUUID } from "node:crypto";
import { FakeDestination, type FakeRequest, type FakeResponse } from "./fake-destination.js";

/**
 * AWS SSM Parameter Store (JSON 1.1 protocol, `X-Amz-Target: AmazonSSM.<Op>`) and the two STS calls
 * (query protocol, XML) on one port. Requests must carry a SigV4 Authorization header of the real shape,
 * scoped to the fake's region and the right service, from a known access key. SSM's limits are enforced:
 * MaxResults ≤ 10, DeleteParameters ≤ 10 names, non-empty values.
 * Scope for seed/read: a parameter path ending in "/" (one level, like GetParametersByPath).
 */

export interface FakeAwsOptions {
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Roles that AssumeRole accepts, with the ExternalId their trust policy requires. */
  roles?: Record<string, { externalId?: string }>;
}

export interface FakeParameter {
  value: string;
  type: string;
  keyId?: string;
  version: number;
  tags: Record<string, string>;
}

const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=([A-Z0-9]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=[0-9a-f]{64}$/;
const WRITES = new Set(["PutParameter", "DeleteParameters", "AddTagsToResource", "RemoveTagsFromResource"]);
const PAGE_LIMIT = 10;

const awsJsonError = (code: string, message: string, status = 400): FakeResponse => ({
  status,
  headers: { "x-amzn-errortype": code, "content-type": "application/x-amz-json-1.1" },
  raw: JSON.stringify({ __type: code, message }),
});

const stsXmlError = (code: string, message: string, status = 403): FakeResponse => ({
  status,
  headers: { "content-type": "text/xml" },
  raw: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
});

const parentOf = (name: string) => name.slice(0, name.lastIndexOf("/") + 1);

export class FakeAws extends FakeDestination {
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly params = new Map<string, FakeParameter>();
  /** Session keys issued by AssumeRole, usable with their session token. */
  private readonly sessions = new Map<string, string>();
  /** Last AssumeRole input, so tests can check RoleArn/ExternalId. */
  lastAssumeRole: Record<string, string> | undefined;

  constructor(readonly options: FakeAwsOptions = {}) {
    super();
    this.region = options.region ?? "us-east-1";
    this.accessKeyId = options.accessKeyId ?? "AKIAFAKEGOODKEY00001";
    this.secretAccessKey = options.secretAccessKey ?? "fake/secret+access+key";
  }

  seed(scope: string, entries: Record<string, string>): void {
    for (const [k, v] of Object.entries(entries))
      this.params.set(scope + k, { value: v, type: "SecureString", version: 1, tags: {} });
  }

  read(scope: string): Record<string, string> {
    return Object.fromEntries(
      [...this.params]
        .filter(([n]) => parentOf(n) === scope)
        .map(([n, p]) => [n.slice(scope.length), p.value]),
    );
  }

  protected clear(): void {
    this.params.clear();
  }

  protected override actionOf(req: FakeRequest): string | undefined {
    const target = req.headers["x-amz-target"];
    if (typeof target === "string") return target.replace(/^AmazonSSM\./, "");
    return (req.body as { Action?: string } | undefined)?.Action;
  }

  protected isWrite(req: FakeRequest): boolean {
    return WRITES.has(this.actionOf(req) ?? "");
  }

  protected failure(status: number, req: FakeRequest): FakeResponse {
    const sts = req.headers["x-amz-target"] === undefined;
    if (status === 429)
      return sts
        ? stsXmlError("Throttling", "Rate exceeded", 400)
        : awsJsonError("ThrottlingException", "Rate exceeded");
    if (status === 401) {
      return sts
        ? stsXmlError("InvalidClientTokenId", "The security token included in the request is invalid.")
        : awsJsonError(
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
          );
    }
    if (status === 403)
      return awsJsonError("AccessDeniedException", "User is not authorized to perform this action");
    if (status >= 500)
      return sts
        ? stsXmlError("InternalFailure", "Internal failure", status)
        : awsJsonError("InternalServerError", "Internal error", status);
    return awsJsonError("ValidationException", `fake failure ${status}`, status);
  }

  /** SigV4 shape + known key + right region/service. Returns an error response or undefined. */
  private checkAuth(req: FakeRequest, service: "ssm" | "sts"): FakeResponse | undefined {
    const bad = (code: string, msg: string) =>
      service === "sts" ? stsXmlError(code, msg) : awsJsonError(code, msg);
    const m = SIGV4.exec(String(req.headers.authorization ?? ""));
    if (!m || typeof req.headers["x-amz-date"] !== "string")
      return bad("IncompleteSignature", "Authorization header requires SigV4 fields.");
    const [, keyId, , region, svc, signed] = m;
    const signedHeaders = (signed ?? "").split(";");
    if (!signedHeaders.includes("host") || !signedHeaders.includes("x-amz-date")) {
      return bad("IncompleteSignature", "Signed headers must include host and x-amz-date.");
    }
    const sessionToken = keyId ? this.sessions.get(keyId) : undefined;
    const known =
      keyId === this.accessKeyId ||
      (sessionToken !== undefined && req.headers["x-amz-security-token"] === sessionToken);
    if (!known) {
      return service === "sts"
        ? stsXmlError("InvalidClientTokenId", "The security token included in the request is invalid.")
        : awsJsonError(
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
          );
    }
    if (svc !== service)
      return bad(
        "InvalidSignatureException",
        `Credential should be scoped to correct service: '${service}'.`,
      );
    if (service === "ssm" && region !== this.region) {
      return bad(
        "InvalidSignatureException",
        `Credential should be scoped to a valid region, not '${region}'.`,
      );
    }
    return undefined;
  }

  protected route(req: FakeRequest): FakeResponse {
    if (req.method !== "POST" || req.path !== "/")
      return awsJsonError("UnknownOperationException", "Unknown operation", 404);
    const target = req.headers["x-amz-target"];
    if (typeof target !== "string") return this.sts(req);
    const denied = this.checkAuth(req, "ssm");
    if (denied) return denied;
    if (!String(req.headers["content-type"]).startsWith("application/x-amz-json-1.1")) {
      return awsJsonError("SerializationException", "Unsupported content type");
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    switch (target) {
      case "AmazonSSM.GetParametersByPath":
        return this.getByPath(body);
      case "AmazonSSM.PutParameter":
        return this.put(body);
      case "AmazonSSM.DeleteParameters":
        return this.deleteMany(body);
      case "AmazonSSM.AddTagsToResource":
        return this.addTags(body);
      default:
        return awsJsonError("UnknownOperationException", `Unknown operation ${target}`);
    }
  }

  private getByPath(b: Record<string, unknown>): FakeResponse {
    const max = b.MaxResults === undefined ? PAGE_LIMIT : Number(b.MaxResults);
    if (max > PAGE_LIMIT || max < 1) {
      return awsJsonError(
        "ValidationException",
        `1 validation error detected: Value '${max}' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 10`,
      );
    }
    const path = String(b.Path ?? "");
    const prefix = path.endsWith("/") ? path : `${path}/`;
    const names = [...this.params.keys()]
      .filter((n) => (b.Recursive ? n.startsWith(prefix) : parentOf(n) === prefix))
      .sort();
    const offset = b.NextToken ? Number(Buffer.from(String(b.NextToken), "base64").toString("utf8")) : 0;
    if (!Number.isInteger(offset) || offset < 0)
      return awsJsonError("ValidationException", "The specified token is not valid.");
    const page = names.slice(offset, offset + max);
    const next =
      offset + max < names.length ? Buffer.from(String(offset + max)).toString("base64") : undefined;
    return {
      status: 200,
      body: {
        Parameters: page.map((name) => {
          const p = this.params.get(name) as FakeParameter;
          const value =
            p.type === "SecureString" && !b.WithDecryption ? `kms-encrypted:${randomUUID()}` : p.value;
          return {
            Name: name,
            Type: p.type,
            Value: value,
            Version: p.version,
            DataType: "text",
            LastModifiedDate: Date.now() / 1000,
          };
        }),
        ...(next ? { NextToken: next } : {}),
      },
    };
  }

  private put(b: Record<string, unknown>): FakeResponse {
    const name = String(b.Name ?? "");
    const value = typeof b.Value === "string" ? b.Value : "";
    if (value.length === 0) {
      return awsJsonError(
        "ValidationException",
        "1 validation error detected: Value '' at 'value' failed to satisfy constraint: Member must have length greater than or equal to 1",
      );
    }
    if (!/^[A-Za-z0-9_.\-/]+$/.test(name))
      return awsJsonError(
        "ValidationException",
        'Parameter name: can\'t be prefixed with "aws" or "ssm" (case-insensitive) and must only contain letters, numbers, or the symbols: . - _ /',
      );
    const existing = this.params.get(name);
    if (existing && !b.Overwrite)
      return awsJsonError(
        "ParameterAlreadyExists",
        "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
      );
    if (existing && b.Tags)
      return awsJsonError(
        "ValidationException",
        "Invalid request: tags and overwrite can't be used together.",
      );
    const version = (existing?.version ?? 0) + 1;
    this.params.set(name, {
      value,
      type: String(b.Type ?? "String"),
      keyId: b.KeyId as string | undefined,
      version,
      tags: existing?.tags ?? {},
    });
    return { status: 200, body: { Version: version, Tier: "Standard" } };
  }

  private deleteMany(b: Record<string, unknown>): FakeResponse {
    const names = Array.isArray(b.Names) ? (b.Names as string[]) : [];
    if (names.length < 1 || names.length > 10) {
      return awsJsonError(
        "ValidationException",
        `1 validation error detected: Value at 'names' failed to satisfy constraint: Member must have length less than or equal to 10`,
      );
    }
    const deleted = names.filter((n) => this.params.delete(n));
    return {
      status: 200,
      body: { DeletedParameters: deleted, InvalidParameters: names.filter((n) => !deleted.includes(n)) },
    };
  }

  private addTags(b: Record<string, unknown>): FakeResponse {
    const p = this.params.get(String(b.ResourceId));
    if (b.ResourceType !== "Parameter" || !p)
      return awsJsonError(
        "InvalidResourceId",
        "The resource ID is not valid. Verify that you entered the correct ID and try again.",
      );
    for (const t of (b.Tags ?? []) as Array<{ Key: string; Value: string }>) p.tags[t.Key] = t.Value;
    return { status: 200, body: {} };
  }

  private sts(req: FakeRequest): FakeResponse {
    const denied = this.checkAuth(req, "sts");
    if (denied) return denied;
    const b = (req.body ?? {}) as Record<string, string>;
    const id = randomUUID();
    if (b.Action === "GetCallerIdentity") {
      return {
        status: 200,
        headers: { "content-type": "text/xml" },
        raw: `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/ferry</Arn><UserId>AIDAFAKE</UserId><Account>123456789012</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>${id}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`,
      };
    }
    if (b.Action === "AssumeRole") {
      this.lastAssumeRole = b;
      const role = b.RoleArn ? this.options.roles?.[b.RoleArn] : undefined;
      if (!role || (role.externalId !== undefined && role.externalId !== b.ExternalId)) {
        return stsXmlError(
          "AccessDenied",
          `User is not authorized to perform: sts:AssumeRole on resource: ${b.RoleArn}`,
        );
      }
      const keyId = `ASIA${randomUUID().replace(/-/g, "").slice(0, 16).toUpperCase()}`;
      const session = `session-${randomUUID()}`;
      this.sessions.set(keyId, session);
      return {
        status: 200,
        headers: { "content-type": "text/xml" },
        raw: `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials><AccessKeyId>${keyId}</AccessKeyId><SecretAccessKey>assumed-secret</SecretAccessKey><SessionToken>${session}</SessionToken><Expiration>${new Date(Date.now() + 900_000).toISOString()}</Expiration></Credentials><AssumedRoleUser><Arn>${b.RoleArn}/ferry</Arn><AssumedRoleId>AROAFAKE:ferry</AssumedRoleId></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${id}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      };
    }
    return stsXmlError("InvalidAction", `Could not find operation ${b.Action}`, 400);
  }
}
