import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SignJWT } from "jose";
import { FakeAws } from "../tests/fakes/aws-parameter-store.js";
import { FakeVault } from "../tests/fakes/hashicorp-vault.js";
import { startServer } from "../tests/helpers/server-process.js";

/**
 * Soak: `npm run soak -- --minutes 10`. One server (child process, so its RSS is its own) under mixed
 * load for the whole duration: secret creates/updates/deletes, N SSE subscribers on raw sockets, and
 * auto-syncs of every project to the Vault and SSM fakes. Reports RSS over time, events published vs
 * received by connected subscribers, and whether every sync converged; exits 1 unless the verdict passes.
 *
 * Options: --minutes (10), --subscribers (1000), --projects (5), --rate writes/s (10), --rss-tolerance %
 * (20). DATABASE_URL in the environment runs it on PostgreSQL; otherwise embedded PGlite in a temp dir.
 */
const { values: opt } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    subscribers: { type: "string", default: "1000" },
    projects: { type: "string", default: "5" },
    rate: { type: "string", default: "10" },
    "rss-tolerance": { type: "string", default: "20" },
  },
});
const MINUTES = Number(opt.minutes);
const SUBSCRIBERS = Number(opt.subscribers);
const PROJECTS = Number(opt.projects);
const RATE = Number(opt.rate);
const RSS_TOLERANCE = Number(opt["rss-tolerance"]);
const log = (s: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(base: string, method: string, path: string, token?: string, body?: unknown) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  // biome-ignore lint/suspicious/noExplicitAny: response JSON is read loosely
  const json = (await r.json()) as any;
  return { status: r.status, json };
}
async function must(base: string, method: string, path: string, token?: string, body?: unknown) {
  const r = await api(base, method, path, token, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json;
}

async function licence() {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const key = await new SignJWT({ plan: "enterprise" })
    .setProtectedHeader({ alg: "EdDSA" })
    .setSubject("ferry-soak")
    .setIssuedAt()
    .sign(privateKey);
  return {
    LICENSE_KEY: key,
    LICENSE_PUBLIC_KEY: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** One SSE subscriber on its own socket: counts the secret keys delivered, and whether it stayed up. */
type Subscriber = { project: number; received: number; connected: boolean; droppedAt?: number };

function subscribe(base: string, token: string, projectId: string, s: Subscriber): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/api/v1/events/subscribe/project-events`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "text/event-stream",
      },
    });
    req.on("response", (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        reject(new Error(`subscribe: ${res.statusCode}`));
        res.resume();
        return;
      }
      s.connected = true;
      resolve();
      let buf = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buf += chunk;
        let at = buf.indexOf("\n\n");
        while (at >= 0) {
          const frame = buf.slice(0, at);
          buf = buf.slice(at + 2);
          at = buf.indexOf("\n\n");
          const data = frame
            .split("\n")
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trim())
            .join("\n");
          if (!data) continue; // ping
          const payload = (JSON.parse(data) as { data?: { payload?: unknown } }).data?.payload;
          s.received += Array.isArray(payload) ? payload.length : payload ? 1 : 0;
        }
      });
      res.on("close", () => {
        if (s.connected) s.droppedAt = Date.now();
        s.connected = false;
      });
    });
    req.on("error", (err) => (s.connected ? undefined : reject(err)));
    req.end(
      JSON.stringify({
        projectId,
        register: ["secret:create", "secret:update", "secret:delete"].map((event) => ({ event })),
      }),
    );
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function main() {
  const [vault, aws] = await Promise.all([new FakeVault().start(), new FakeAws().start()]);
  const dataDir = mkdtempSync(join(tmpdir(), "ferry-soak-"));
  const server = await startServer({
    ...(await licence()),
    ...(process.env.DATABASE_URL ? {} : { DATA_DIR: dataDir }),
    LOG_LEVEL: "warn",
    ALLOW_INTERNAL_DESTINATIONS: "true",
    RATE_LIMIT_AUTH_PER_MINUTE: "0",
    AWS_ENDPOINT_URL_SSM: aws.url,
    AWS_ENDPOINT_URL_STS: aws.url,
    SSE_MAX_CONNECTIONS_PER_PROJECT: String(Math.ceil(SUBSCRIBERS / PROJECTS) + 10),
  });
  const pid = server.child.pid as number;
  const base = server.url;
  log(
    `server ${base} (pid ${pid}, ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}); ${MINUTES} min, ${SUBSCRIBERS} subscribers, ${PROJECTS} projects, ${RATE} writes/s`,
  );
  try {
    const boot = await must(base, "POST", "/api/v1/admin/bootstrap", undefined, {
      email: "soak@example.com",
      password: "correct horse battery staple",
      organization: "Soak",
    });
    const token = boot.identity.credentials.token as string;
    const vaultConn = (
      await must(base, "POST", "/api/v1/app-connections/hashicorp-vault", token, {
        name: "vault",
        method: "access-token",
        credentials: { instanceUrl: vault.url, accessToken: vault.token },
      })
    ).appConnection;
    const awsConn = (
      await must(base, "POST", "/api/v1/app-connections/aws", token, {
        name: "aws",
        method: "access-key",
        credentials: { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey },
      })
    ).appConnection;
    const projects: {
      id: string;
      source: Map<string, string>;
      published: number;
      syncs: [string, string][];
    }[] = [];
    for (let p = 0; p < PROJECTS; p++) {
      const project = (await must(base, "POST", "/api/v2/workspace", token, { projectName: `soak-${p}` }))
        .project;
      const common = {
        projectId: project.id,
        environment: "dev",
        secretPath: "/",
        syncOptions: { initialSyncBehavior: "overwrite-destination" },
      };
      const v = (
        await must(base, "POST", "/api/v1/secret-syncs/hashicorp-vault", token, {
          ...common,
          name: `vault-${p}`,
          connectionId: vaultConn.id,
          destinationConfig: { mount: "secret", path: `soak/p${p}` },
        })
      ).secretSync;
      const a = (
        await must(base, "POST", "/api/v1/secret-syncs/aws-parameter-store", token, {
          ...common,
          name: `aws-${p}`,
          connectionId: awsConn.id,
          destinationConfig: { region: "us-east-1", path: `/soak/p${p}/` },
        })
      ).secretSync;
      projects.push({
        id: project.id,
        source: new Map(),
        published: 0,
        syncs: [
          ["hashicorp-vault", v.id],
          ["aws-parameter-store", a.id],
        ],
      });
    }

    const subs: Subscriber[] = Array.from({ length: SUBSCRIBERS }, (_, i) => ({
      project: i % PROJECTS,
      received: 0,
      connected: false,
    }));
    for (let i = 0; i < subs.length; i += 50)
      await Promise.all(
        subs
          .slice(i, i + 50)
          .map((s) => subscribe(base, token, (projects[s.project] as (typeof projects)[number]).id, s)),
      );
    log(`${subs.filter((s) => s.connected).length} subscribers connected`);

    const samples: { t: number; rss: number }[] = [];
    const started = Date.now();
    const sampleEvery = Math.max(5_000, (MINUTES * 60_000) / 60);
    const sampler = setInterval(
      () => samples.push({ t: (Date.now() - started) / 1000, rss: rssMiB(pid) }),
      sampleEvery,
    );
    samples.push({ t: 0, rss: rssMiB(pid) });

    // Writes: a paced loop of single-secret operations (one event each), mixed create/update/delete.
    let writes = 0;
    let writeErrors = 0;
    let seq = 0;
    const deadline = started + MINUTES * 60_000;
    let nextReport = started + 60_000;
    while (Date.now() < deadline) {
      const tick = Date.now();
      const p = projects[seq % PROJECTS] as (typeof projects)[number];
      const keys = [...p.source.keys()];
      const roll = Math.random();
      const scope = { workspaceId: p.id, environment: "dev", secretPath: "/" };
      let r: Awaited<ReturnType<typeof api>>;
      if (keys.length < 20 || roll < 0.4) {
        const key = `SOAK_${seq}`;
        const value = `v-${seq}-${Math.random().toString(36).slice(2)}`;
        r = await api(base, "POST", `/api/v3/secrets/raw/${key}`, token, { ...scope, secretValue: value });
        if (r.status === 200) p.source.set(key, value);
      } else if (roll < 0.8) {
        const key = keys[Math.floor(Math.random() * keys.length)] as string;
        const value = `u-${seq}-${Math.random().toString(36).slice(2)}`;
        r = await api(base, "PATCH", `/api/v3/secrets/raw/${key}`, token, { ...scope, secretValue: value });
        if (r.status === 200) p.source.set(key, value);
      } else {
        const key = keys[Math.floor(Math.random() * keys.length)] as string;
        r = await api(base, "DELETE", `/api/v3/secrets/raw/${key}`, token, scope);
        if (r.status === 200) p.source.delete(key);
      }
      seq++;
      if (r.status === 200) {
        writes++;
        p.published++;
      } else writeErrors++;
      if (Date.now() >= nextReport) {
        nextReport += 60_000;
        log(
          `${writes} writes, rss ${rssMiB(pid).toFixed(0)} MiB, ${subs.filter((s) => s.connected).length} subscribers connected`,
        );
      }
      await sleep(Math.max(0, 1000 / RATE - (Date.now() - tick)));
    }
    clearInterval(sampler);
    samples.push({ t: (Date.now() - started) / 1000, rss: rssMiB(pid) });

    // Drain: events are delivered after commit, syncs after their debounce; both get a bounded wait.
    const expectedOf = (s: Subscriber) => (projects[s.project] as (typeof projects)[number]).published;
    const drainUntil = Date.now() + 30_000;
    while (Date.now() < drainUntil && subs.some((s) => s.connected && s.received < expectedOf(s)))
      await sleep(200);
    const connected = subs.filter((s) => s.connected);
    const published = projects.reduce((n, p) => n + p.published, 0);
    const expected = connected.reduce((n, s) => n + expectedOf(s), 0);
    const received = connected.reduce((n, s) => n + s.received, 0);
    const lost = connected.reduce((n, s) => n + Math.max(0, expectedOf(s) - s.received), 0);
    const extra = connected.reduce((n, s) => n + Math.max(0, s.received - expectedOf(s)), 0);

    const convergeUntil = Date.now() + 120_000;
    const state: string[] = [];
    for (const [i, p] of projects.entries()) {
      const want = Object.fromEntries(p.source);
      for (const [slug, id] of p.syncs) {
        const read = () =>
          slug === "hashicorp-vault" ? vault.read(`secret/soak/p${i}`) : aws.read(`/soak/p${i}/`);
        let view: { syncStatus?: string } = {};
        while (Date.now() < convergeUntil) {
          view = (await must(base, "GET", `/api/v1/secret-syncs/${slug}/${id}`, token)).secretSync;
          if (
            view.syncStatus === "succeeded" &&
            JSON.stringify(sorted(read())) === JSON.stringify(sorted(want))
          )
            break;
          await sleep(500);
        }
        const same = JSON.stringify(sorted(read())) === JSON.stringify(sorted(want));
        state.push(
          `${slug} p${i}: ${view.syncStatus}, ${Object.keys(want).length} keys, ${same ? "converged" : "DIVERGED"}`,
        );
      }
    }

    // RSS: compare the warmed-up start (after the first fifth) with the last fifth.
    const fifth = Math.max(1, Math.floor(samples.length / 5));
    const avg = (xs: { rss: number }[]) => xs.reduce((n, x) => n + x.rss, 0) / xs.length;
    const early = avg(samples.slice(fifth, 2 * fifth));
    const late = avg(samples.slice(-fifth));
    const growth = ((late - early) / early) * 100;
    const converged = state.every((s) => s.endsWith("converged"));
    const flat = growth <= RSS_TOLERANCE;
    const noLoss = lost === 0 && extra === 0 && connected.length === SUBSCRIBERS;

    const out = [
      "",
      "==== soak summary ====",
      `duration ${MINUTES} min; database ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}; ${PROJECTS} projects`,
      `writes: ${writes} acknowledged, ${writeErrors} failed (${(writes / (MINUTES * 60)).toFixed(1)}/s)`,
      `RSS (MiB) over time: ${samples.map((s) => `${s.t.toFixed(0)}s=${s.rss.toFixed(0)}`).join(" ")}`,
      `RSS warmed-up ${early.toFixed(0)} MiB → end ${late.toFixed(0)} MiB (${growth >= 0 ? "+" : ""}${growth.toFixed(1)}%, tolerance ${RSS_TOLERANCE}%)`,
      `subscribers: ${connected.length}/${SUBSCRIBERS} connected at the end (${subs.filter((s) => s.droppedAt).length} dropped)`,
      `events: ${published} published; expected ${expected} deliveries to connected subscribers, received ${received} (lost ${lost}, extra ${extra})`,
      "syncs:",
      ...state.map((s) => `  ${s}`),
      `verdict: ${flat && noLoss && converged && writeErrors === 0 ? "PASS" : "FAIL"} (flat RSS: ${flat ? "yes" : "no"}; no lost events: ${noLoss ? "yes" : "no"}; every sync converged: ${converged ? "yes" : "no"}; write errors: ${writeErrors})`,
    ];
    process.stdout.write(`${out.join("\n")}\n`);
    process.exitCode = flat && noLoss && converged && writeErrors === 0 ? 0 : 1;
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
    await Promise.all([vault.close(), aws.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function sorted(o: Record<string, string>): [string, string][] {
  return Object.entries(o).sort(([a], [b]) => a.localeCompare(b));
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    process.stderr.write(`soak failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(2);
  },
);
