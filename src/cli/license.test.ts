import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { decodeJwt } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { hasFeature, loadLicense } from "../features/license/license.js";

// The CLI runs exactly as `npm run license` will run it: a separate Node process with the tsx loader.
const cliPath = fileURLToPath(new URL("./license.ts", import.meta.url));
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const dir = mkdtempSync(join(tmpdir(), "ferry-license-cli-"));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", tsxLoader, cliPath, ...args],
      { cwd: dir, timeout: 20_000, env: { ...process.env, LICENSE_KEY: "", LICENSE_PUBLIC_KEY: "" } },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("happy", () => {
  it("keygen + issue produce a licence that loadLicense accepts with the printed public key", async () => {
    const keygen = await runCli("keygen");
    expect(keygen.code).toBe(0);
    const publicPem = keygen.stdout;
    expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
    const keyFile = join(dir, "ferry-license-private.pem");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8")).toContain("BEGIN PRIVATE KEY");
    expect(publicPem).not.toContain("PRIVATE");

    const issued = await runCli(
      "issue",
      "--private-key",
      "ferry-license-private.pem",
      "--plan",
      "team",
      "--expires",
      "2999-12-31",
      "--sub",
      "Acme Corp",
      "--feature",
      "eventSubscriptions",
      "--feature",
      "auditLogs",
    );
    expect(issued.code).toBe(0);
    const token = issued.stdout.trim();
    expect(token.split(".")).toHaveLength(3);
    expect(issued.stdout).toBe(`${token}\n`); // nothing but the token on stdout, so $(…) works

    const lic = await loadLicense({ licenseKey: token, publicKeyPem: publicPem });
    expect(lic).toMatchObject({
      plan: "team",
      features: { eventSubscriptions: true, auditLogs: true },
      issuedTo: "Acme Corp",
      expiresAt: new Date("2999-12-31T00:00:00Z"),
      source: "custom-key",
    });
    expect(lic.reason).toBeUndefined();
    expect(hasFeature(lic, "eventSubscriptions")).toBe(true);
    expect(hasFeature(lic, "rbac")).toBe(false);
    expect(typeof decodeJwt(token).iat).toBe("number");

    // Ferry's built-in key did not sign it, so without LICENSE_PUBLIC_KEY it is refused.
    expect((await loadLicense({ licenseKey: token })).source).toBe("invalid");
  });

  it("verify reports the licence using a public key file", async () => {
    const keygen = await runCli("keygen", "--out", "second.pem");
    expect(keygen.code).toBe(0);
    writeFileSync(join(dir, "second.pub"), keygen.stdout);
    const issued = await runCli("issue", "--private-key", "second.pem", "--plan", "enterprise");
    const token = issued.stdout.trim();
    const ok = await runCli("verify", "--public-key", "second.pub", token);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("Licence: plan enterprise.\n");
    const wrongKey = await runCli("verify", token);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stdout).toMatch(/signature does not match/);
  });
});

describe("errors", () => {
  it("refuses to overwrite an existing private key", async () => {
    const first = await runCli("keygen", "--out", "keep.pem");
    expect(first.code).toBe(0);
    const before = readFileSync(join(dir, "keep.pem"), "utf8");
    const again = await runCli("keygen", "--out", "keep.pem");
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
    expect(again.stdout).toBe("");
    expect(readFileSync(join(dir, "keep.pem"), "utf8")).toBe(before);
  });

  it("rejects bad issue arguments with a usage error and prints no token", async () => {
    await runCli("keygen", "--out", "k.pem");
    const cases: [string[], RegExp][] = [
      [["issue", "--plan", "enterprise"], /--private-key FILE is required/],
      [["issue", "--private-key", "k.pem"], /--plan is required/],
      [["issue", "--private-key", "k.pem", "--plan", "enterprise", "--expires", "2030-02-30"], /YYYY-MM-DD/],
      [
        ["issue", "--private-key", "k.pem", "--plan", "enterprise", "--expires", "2001-01-01"],
        /not in the future/,
      ],
      [["issue", "--private-key", "k.pem", "--plan", "enterprise", "--feature", "a b"], /invalid feature/],
      [["issue", "--private-key", "k.pem", "--plan", "enterprise", "--bogus"], /Unknown option/],
      [["frobnicate"], /unknown command/],
    ];
    const runs = await Promise.all(cases.map(([args]) => runCli(...args)));
    cases.forEach(([args, message], i) => {
      expect(runs[i]?.code, args.join(" ")).toBe(2);
      expect(runs[i]?.stderr).toMatch(message);
      expect(runs[i]?.stdout).toBe("");
    });
  });

  it("rejects a private key that is not Ed25519", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(join(dir, "rsa.pem"), rsa.privateKey.export({ type: "pkcs8", format: "pem" }));
    const r = await runCli("issue", "--private-key", "rsa.pem", "--plan", "enterprise");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not an Ed25519 private key/);
    expect(r.stdout).toBe("");
  });
});
