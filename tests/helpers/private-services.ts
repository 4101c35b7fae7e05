import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./server-process.js";

/**
 * Private PostgreSQL and Redis instances for fault tests: each on its own port and data directory, so a
 * test may stop, kill and restart them while the machine's shared services (5432, 6379) keep running.
 * Never point these helpers at a shared instance.
 */
const run = promisify(execFile);

/** The newest PostgreSQL server binaries on this machine (Debian layout), or on PATH. */
export function pgBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "pg_ctl")) && existsSync(join(dir, "initdb"))) return dir;
  }
  return undefined;
}

export function hasRedisServer(): boolean {
  return (process.env.PATH ?? "").split(":").some((d) => d && existsSync(join(d, "redis-server")));
}

/**
 * Fault tests need real binaries, and run where PostgreSQL is expected (CI, or a developer who set
 * TEST_DATABASE_URL). Plain `npm test` on a laptop without PostgreSQL skips them via `describe.runIf`.
 */
export const faultTestsEnabled = Boolean(process.env.CI || process.env.TEST_DATABASE_URL);

// initdb refuses to run as root: as root we run the PostgreSQL binaries as the `postgres` user, in a
// temp dir that user owns.
const asRoot = process.getuid?.() === 0;
const pgUser = asRoot ? "postgres" : undefined;

async function pgRun(bin: string, args: string[]): Promise<string> {
  const [file, argv] = pgUser ? ["runuser", ["-u", pgUser, "--", bin, ...args]] : [bin, args];
  const { stdout, stderr } = await run(file, argv, { timeout: 60_000 });
  return stdout + stderr;
}

export interface PrivatePostgres {
  port: number;
  /** A database URL (superuser `postgres`, trust auth) for `database`. */
  url(database?: string): string;
  createDatabase(name: string): Promise<string>;
  start(): Promise<void>;
  /** `fast` = clean shutdown; `immediate` = like a crash (recovery on the next start). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  restart(mode?: "fast" | "immediate"): Promise<void>;
  /** Stops the server and deletes its data directory. */
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL binaries (initdb, pg_ctl) not found");
  const dir = mkdtempSync(join(tmpdir(), "ferry-pg-"));
  if (pgUser) {
    const { stdout } = await run("id", ["-u", pgUser]);
    const { stdout: gid } = await run("id", ["-g", pgUser]);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, "data");
  const port = await freePort();
  await pgRun(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  // Sockets in the private dir (the default /var/run/postgresql may not be writable), TCP on loopback only.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`;
  const ctl = (args: string[]) => pgRun(join(bin, "pg_ctl"), ["-D", data, ...args]);
  const pg: PrivatePostgres = {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      await pgRun(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", name]);
      return pg.url(name);
    },
    async start() {
      await ctl(["-o", opts, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
    },
    async stop(mode = "fast") {
      await ctl(["-m", mode, "-w", "-t", "60", "stop"]);
    },
    async restart(mode = "fast") {
      await pg.stop(mode);
      await pg.start();
    },
    async destroy() {
      await pg.stop("immediate").catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}

export interface PrivateRedis {
  port: number;
  url: string;
  start(): Promise<void>;
  /** SIGKILL: a crash, not a graceful shutdown. */
  stop(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const c = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      child = c;
      let out = "";
      c.stdout?.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const deadline = Date.now() + 20_000;
      while (!out.includes("Ready to accept connections")) {
        if (c.exitCode !== null || Date.now() > deadline)
          throw new Error(`redis-server did not start: ${out}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((resolve) => c.once("exit", resolve));
      c.kill("SIGKILL");
      await exited;
    },
  };
  await redis.start();
  return redis;
}
