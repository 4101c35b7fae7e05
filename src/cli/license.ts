/**
 * Licence tooling for operators who run their own licence issuer.
 *
 *   npm run license -- keygen [--out FILE]
 *   npm run -s license -- issue --private-key FILE --plan enterprise [--expires YYYY-MM-DD] [--sub NAME]
 *                               [--feature NAME ...]
 *   npm run license -- verify [--public-key FILE] [TOKEN]
 *
 * `keygen` writes an Ed25519 private key (PKCS#8 PEM, mode 0600) and prints the public key (SPKI PEM)
 * to put in LICENSE_PUBLIC_KEY. `issue` prints only the JWT on stdout so it can be captured with
 * `$(…)` (use `npm run -s` to keep npm's banner out of stdout). `verify` checks a token the way the
 * server will at startup. Ferry's built-in public key has no private half anywhere, so licences for
 * a self-run issuer always need LICENSE_PUBLIC_KEY.
 */
import { createPrivateKey, generateKeyPairSync } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { SignJWT } from "jose";
import { describeLicense, loadLicense } from "../features/license/license.js";

const DEFAULT_PRIVATE_KEY_FILE = "ferry-license-private.pem";

const USAGE = `Usage:
  license keygen [--out FILE]            write an Ed25519 private key (default ${DEFAULT_PRIVATE_KEY_FILE}), print the public key
  license issue --private-key FILE --plan PLAN [--expires YYYY-MM-DD] [--sub NAME] [--feature NAME ...]
                                         print a signed licence (JWT) for LICENSE_KEY
  license verify [--public-key FILE] [TOKEN]
                                         check TOKEN (default $LICENSE_KEY) against FILE (default $LICENSE_PUBLIC_KEY
                                         or Ferry's built-in key)`;

class UsageError extends Error {}

function keygen(args: string[]): number {
  const { values } = parseArgs({ args, options: { out: { type: "string" } } });
  const out = values.out ?? DEFAULT_PRIVATE_KEY_FILE;
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const privatePem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  // Never overwrite: replacing an issuer key would silently orphan every licence it signed.
  if (existsSync(out))
    throw new UsageError(`${out} already exists; refusing to overwrite it (use --out FILE)`);
  writeFileSync(out, privatePem, { mode: 0o600, flag: "wx" });
  chmodSync(out, 0o600); // explicit, in case the file system ignored the create mode
  process.stdout.write(publicKey.export({ type: "spki", format: "pem" }).toString());
  console.error(`Private key written to ${out} (mode 0600). Keep it secret and out of the repository.`);
  console.error("Set LICENSE_PUBLIC_KEY on the server to the public key printed above.");
  return 0;
}

/** `--expires 2026-12-31` means the licence stops working at 00:00 UTC on that day. */
function parseExpiry(value: string, now: Date): Date {
  const date = new Date(`${value}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(date.getTime()) ||
    !date.toISOString().startsWith(value)
  ) {
    throw new UsageError(`--expires must be a date as YYYY-MM-DD, got '${value}'`);
  }
  if (date <= now) throw new UsageError(`--expires ${value} is not in the future`);
  return date;
}

async function issue(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      "private-key": { type: "string" },
      plan: { type: "string" },
      expires: { type: "string" },
      sub: { type: "string" },
      feature: { type: "string", multiple: true },
    },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const keyFile = values["private-key"];
  const plan = values.plan?.trim();
  if (!keyFile) throw new UsageError("--private-key FILE is required");
  if (!plan) throw new UsageError("--plan is required (e.g. --plan enterprise)");

  const key = createPrivateKey(readFileSync(keyFile));
  if (key.asymmetricKeyType !== "ed25519") {
    throw new UsageError(`${keyFile} is not an Ed25519 private key (use 'license keygen')`);
  }
  const features: Record<string, boolean> = {};
  for (const name of values.feature ?? []) {
    if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) throw new UsageError(`invalid feature name '${name}'`);
    features[name] = true;
  }

  const now = new Date();
  const jwt = new SignJWT({ plan, ...(Object.keys(features).length > 0 && { features }) })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
    .setIssuedAt(Math.floor(now.getTime() / 1000));
  if (values.sub) jwt.setSubject(values.sub);
  if (values.expires) {
    const exp = parseExpiry(values.expires, now);
    jwt.setExpirationTime(Math.floor(exp.getTime() / 1000));
    console.error(`Licence expires at ${exp.toISOString()}.`);
  }
  process.stdout.write(`${await jwt.sign(key)}\n`);
  return 0;
}

async function verify(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { "public-key": { type: "string" } },
  });
  const keyFile = values["public-key"];
  const license = await loadLicense({
    licenseKey: positionals[0] ?? process.env.LICENSE_KEY,
    publicKeyPem: keyFile ? readFileSync(keyFile, "utf8") : process.env.LICENSE_PUBLIC_KEY,
  });
  console.log(describeLicense(license));
  return license.reason ? 1 : 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "keygen":
        return keygen(rest);
      case "issue":
        return await issue(rest);
      case "verify":
        return await verify(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    // parseArgs reports unknown or malformed options with ERR_PARSE_ARGS_* codes: treat them as usage errors.
    const code = (err as { code?: unknown }).code;
    if (err instanceof UsageError || (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS"))) {
      console.error(`license: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    console.error(`license: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
