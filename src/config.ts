import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/**
 * Configuration is read from the environment once (in main.ts) and passed down as a value.
 * Where a name overlaps with Infisical self-hosting, Infisical's name is accepted too (aliases are
 * resolved in `loadConfig` before parsing). Every variable has a `.describe()`, which the README's
 * configuration table repeats.
 */

const bool = (def: "true" | "false") =>
  z
    .enum(["true", "false"])
    .default(def)
    .transform((v) => v === "true");

const intFrom = (def: number, min = 0) => z.coerce.number().int().min(min).default(def);

/** 32 bytes given as 64 hex characters or as base64 (44 characters with padding). */
const key32 = z.string().transform((v, ctx) => {
  const s = v.trim();
  const buf = /^[0-9a-fA-F]{64}$/.test(s) ? Buffer.from(s, "hex") : Buffer.from(s, "base64");
  if (buf.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(s) && buf.toString("base64") !== s)) {
    ctx.addIssue({ code: "custom", message: "must be 32 bytes, as 64 hex characters or base64" });
    return z.NEVER;
  }
  return buf;
});

const url = (protocols: string[]) =>
  z
    .string()
    .url()
    .refine((v) => protocols.some((p) => v.startsWith(`${p}:`)), {
      message: `must be a ${protocols.join(" or ")} URL`,
    });

export const configSchema = z.object({
  NODE_ENV: z
    .enum(["development", "production", "test"])
    .default("development")
    .describe("production refuses to start without ENCRYPTION_KEY and AUTH_SECRET"),
  PORT: intFrom(8080, 0).describe("HTTP port"),
  HOST: z.string().min(1).default("0.0.0.0").describe("Interface to listen on"),
  DATABASE_URL: url(["postgres", "postgresql"])
    .optional()
    .describe("PostgreSQL URL (alias DB_CONNECTION_URI). Unset: embedded PGlite under DATA_DIR"),
  REDIS_URL: url(["redis", "rediss"])
    .optional()
    .describe("Redis URL: cross-instance events, cache invalidation and shared rate limits"),
  ENCRYPTION_KEY: key32
    .optional()
    .describe("Root key, 32 bytes hex or base64 (alias ROOT_ENCRYPTION_KEY). Dev: generated into DATA_DIR"),
  ENCRYPTION_KEY_PREVIOUS: key32
    .optional()
    .describe("The previous root key during a rotation: still accepted for unwrapping data keys"),
  AUTH_SECRET: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe("HMAC secret for access tokens (HS256). Dev: generated into DATA_DIR"),
  DATA_DIR: z.string().min(1).default("./data").describe("Embedded database files and generated dev keys"),
  EMBEDDED_VACUUM_INTERVAL_MS: intFrom(60_000, 0).describe(
    "How often the embedded database (PGlite, which has no autovacuum) vacuums and analyses tables that are due; 0 = off",
  ),
  LICENSE_KEY: z.string().optional().describe("Offline licence: an EdDSA-signed JWT"),
  LICENSE_PUBLIC_KEY: z.string().optional().describe("SPKI PEM that verifies self-issued licences"),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info")
    .describe("pino log level"),
  TRUST_PROXY: bool("false").describe("Trust X-Forwarded-For for the client IP"),
  RATE_LIMIT_AUTH_PER_MINUTE: intFrom(60, 0).describe(
    "Login and bootstrap requests per IP per minute; 0 = off",
  ),
  RATE_LIMIT_READ_PER_MINUTE: intFrom(0, 0).describe("Read requests per IP per minute; 0 = off (default)"),
  RATE_LIMIT_WRITE_PER_MINUTE: intFrom(0, 0).describe("Write requests per IP per minute; 0 = off (default)"),
  SSE_PING_INTERVAL_MS: intFrom(15_000, 10).describe("Event stream keep-alive interval"),
  SSE_PERMISSION_REFRESH_MS: intFrom(60_000, 10).describe("How often open streams re-check permissions"),
  SSE_MAX_CONNECTIONS_PER_PROJECT: intFrom(100, 1).describe("Concurrent event streams per project"),
  SSE_MAX_BUFFER_BYTES: intFrom(1024 * 1024, 16 * 1024).describe(
    "Unsent bytes an event stream may hold; a client that falls further behind is disconnected",
  ),
  SSE_REDIS_CHANNEL: z
    .string()
    .min(1)
    .default("ferry:project-events")
    .describe("Redis pub/sub channel for cross-instance events; every instance must use the same one"),
  ALLOW_INTERNAL_DESTINATIONS: bool("false").describe(
    "Allow sync destinations on loopback/private addresses (tests)",
  ),
  SYNC_TIMEOUT_MS: intFrom(30_000, 100).describe("Timeout of one destination call"),
  SYNC_CONCURRENCY_PER_CONNECTION: intFrom(2, 1).describe("Parallel sync runs per app connection"),
  AWS_ENDPOINT_URL: z.string().url().optional().describe("AWS endpoint override (all services)"),
  AWS_ENDPOINT_URL_SSM: z.string().url().optional().describe("AWS SSM endpoint override"),
  AWS_ENDPOINT_URL_STS: z.string().url().optional().describe("AWS STS endpoint override"),
  GITHUB_API_URL: z.string().url().optional().describe("GitHub API base URL for github.com connections"),
  GITHUB_APP_ID: z.string().optional().describe("The server's GitHub App id, for `github-app` connections"),
  GITHUB_APP_PRIVATE_KEY: z
    .string()
    .optional()
    .describe("The GitHub App's private key (PEM), for `github-app` connections"),
});

type Parsed = z.infer<typeof configSchema>;
export type Config = Omit<Parsed, "ENCRYPTION_KEY" | "AUTH_SECRET"> & {
  ENCRYPTION_KEY: Buffer;
  AUTH_SECRET: string;
  /** Variables that were generated into DATA_DIR (development only), for a startup warning. */
  generated: string[];
};

const ALIASES: Record<string, string> = {
  DB_CONNECTION_URI: "DATABASE_URL",
  ROOT_ENCRYPTION_KEY: "ENCRYPTION_KEY",
};

export class ConfigError extends Error {}

/** Parses the environment. Throws ConfigError with a one-line explanation on any invalid value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && v !== "") raw[ALIASES[k] ?? k] ??= v;
  }
  // The canonical name wins over its alias when both are set.
  for (const [alias, name] of Object.entries(ALIASES)) {
    const canonical = env[name];
    if (canonical) raw[name] = canonical;
    else if (env[alias]) raw[name] = env[alias] as string;
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join(".") ?? "config";
    throw new ConfigError(`Invalid configuration: ${name} ${issue?.message ?? "is invalid"}`);
  }
  const c = parsed.data;
  const generated: string[] = [];
  const missing = [!c.ENCRYPTION_KEY && "ENCRYPTION_KEY", !c.AUTH_SECRET && "AUTH_SECRET"].filter(
    (x): x is string => Boolean(x),
  );
  if (missing.length > 0 && c.NODE_ENV === "production") {
    throw new ConfigError(`Refusing to start in production: ${missing.join(" and ")} must be set`);
  }
  let encryptionKey = c.ENCRYPTION_KEY;
  let authSecret = c.AUTH_SECRET;
  if (!encryptionKey) {
    encryptionKey = Buffer.from(
      devSecret(c.DATA_DIR, "encryption-key", () => randomBytes(32).toString("hex")),
      "hex",
    );
    generated.push("ENCRYPTION_KEY");
  }
  if (!authSecret) {
    authSecret = devSecret(c.DATA_DIR, "auth-secret", () => randomBytes(48).toString("base64url"));
    generated.push("AUTH_SECRET");
  }
  return { ...c, ENCRYPTION_KEY: encryptionKey, AUTH_SECRET: authSecret, generated };
}

/** Reads a generated development secret from DATA_DIR, creating it (mode 0600) on first use. */
function devSecret(dataDir: string, name: string, make: () => string): string {
  const file = join(dataDir, `${name}.dev`);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const value = make();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(file, 0o600);
  return value;
}
