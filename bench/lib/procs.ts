import { type ChildProcess, execFileSync, fork, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Child processes of the benchmark: Ferry itself (`src/main.ts`), the bare baseline servers, and the
 * load/receiver workers. Everything listens on 127.0.0.1 and is started with `--import tsx`, so the
 * harness runs from a clean checkout with nothing built.
 */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BENCH_DIR = join(REPO_ROOT, "bench");

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => ok(port));
    });
  });
}

/** Resident set size of a process in bytes (Linux /proc; `ps` elsewhere). */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (m?.[1]) return Number(m[1]) * 1024;
  } catch {
    // not Linux: fall through
  }
  return (
    Number(
      execFileSync("ps", ["-o", "rss=", "-p", String(pid)])
        .toString()
        .trim(),
    ) * 1024
  );
}

export interface ServerChild {
  name: string;
  url: string;
  port: number;
  pid: number;
  proc: ChildProcess;
  rss(): number;
  /** The DevTools inspector port (see inspector.ts), when started with one. */
  inspectPort?: number;
  output(): string;
  /** SIGTERM, then SIGKILL after a grace period. Resolves when the process has exited. */
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  script: string;
  env: Record<string, string | undefined>;
  /** Directory for a V8 CPU profile (`--cpu-prof`), written when the process exits. */
  cpuProfDir?: string;
  /** Path answered with 200 once the server is ready. */
  readyPath: string;
  timeoutMs?: number;
  /** Open the DevTools inspector on a loopback port (used only to force a GC before RSS readings). */
  inspect?: boolean;
  /** Node's own flags, before the script (default: `--import tsx`). */
  nodeFlags?: string[];
}

/** Starts a TypeScript server script with tsx on a free loopback port and waits until it answers. */
export async function startServer(o: StartOptions): Promise<ServerChild> {
  const port = Number(o.env.PORT ?? (await freePort()));
  const prof = o.cpuProfDir
    ? ["--cpu-prof", `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=${o.name}.cpuprofile`]
    : [];
  const inspectPort = o.inspect ? await freePort() : undefined;
  const inspect = inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : [];
  const proc = spawn(
    process.execPath,
    [...(o.nodeFlags ?? ["--import", "tsx"]), ...inspect, ...prof, o.script],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, ...o.env, HOST: "127.0.0.1", PORT: String(port) },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  proc.stdout?.on("data", keep);
  proc.stderr?.on("data", keep);
  const exited = new Promise<void>((ok) => proc.once("exit", () => ok()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (o.timeoutMs ?? 120_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${o.name} exited early (${proc.exitCode}):\n${out}`);
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`${o.name} did not start in time:\n${out}`);
    }
    try {
      const r = await fetch(url + o.readyPath);
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  const pid = proc.pid ?? 0;
  return {
    name: o.name,
    url,
    port,
    pid,
    proc,
    rss: () => rssOf(pid),
    inspectPort,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 25_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** A forked worker speaking a request/response protocol over IPC: `{id, ...}` in, `{id, result|error}` out. */
export interface Worker {
  call<T>(msg: Record<string, unknown>, timeoutMs?: number): Promise<T>;
  pid: number;
  stop(): Promise<void>;
}

export function startWorker(script: string): Worker {
  const proc = fork(script, [], {
    cwd: REPO_ROOT,
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let next = 1;
  const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  proc.on("message", (m: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) p.fail(new Error(m.error));
    else p.ok(m.result);
  });
  proc.on("exit", (code) => {
    for (const p of pending.values()) p.fail(new Error(`worker ${script} exited (${code})`));
    pending.clear();
  });
  return {
    pid: proc.pid ?? 0,
    call<T>(msg: Record<string, unknown>, timeoutMs = 300_000) {
      const id = next++;
      return new Promise<T>((ok, fail) => {
        const t = setTimeout(() => {
          pending.delete(id);
          fail(new Error(`worker call ${String(msg.cmd)} timed out`));
        }, timeoutMs);
        pending.set(id, {
          ok: (v) => {
            clearTimeout(t);
            ok(v as T);
          },
          fail: (e) => {
            clearTimeout(t);
            fail(e);
          },
        });
        proc.send({ ...msg, id });
      });
    },
    async stop() {
      if (proc.exitCode !== null) return;
      const done = new Promise<void>((ok) => proc.once("exit", () => ok()));
      proc.disconnect();
      const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
      await done;
      clearTimeout(t);
    },
  };
}

/** Worker side of `startWorker`: dispatches each message to a handler by its `cmd`. */
export function serveWorker(
  handlers: Record<string, (msg: Record<string, unknown>) => Promise<unknown>>,
): void {
  process.on("message", (m: Record<string, unknown>) => {
    const id = m.id;
    const h = handlers[String(m.cmd)];
    const send = (out: Record<string, unknown>) => process.send?.({ id, ...out });
    if (!h) {
      send({ error: `unknown command ${String(m.cmd)}` });
      return;
    }
    h(m).then(
      (result) => send({ result: result ?? null }),
      (err: unknown) => send({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    );
  });
  process.on("disconnect", () => process.exit(0));
}

export const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const nowMs = () => performance.timeOrigin + performance.now();
