import { connect, type Socket } from "node:net";
import { nowMs, serveWorker } from "../lib/procs.js";

/**
 * Event subscribers, in their own process: N raw TCP sockets that each send one HTTP request for an SSE
 * stream and then only read. For every frame carrying `"secretKey":"K"` the arrival time is recorded
 * (performance.timeOrigin + now(), comparable with the writer's clock in the driver process) under K.
 * The writer updates a distinct key per write, so arrivals map one-to-one onto writes.
 *
 * Raw sockets instead of an HTTP client keep per-subscriber memory and CPU on this side tiny, so 10,000
 * of them fit in one process; ended with RST (resetAndDestroy) so that repeated runs leave no TIME_WAIT.
 */

interface OpenCmd {
  port: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  n: number;
  concurrency: number;
}

const sockets = new Set<Socket>();
const arrivals = new Map<string, number[]>();
const waiters: { key: string; count: number; done: (n: number) => void }[] = [];
let dropped = 0;
const KEY_RE = /"secretKey":"([^"]+)"/g;

function record(key: string, t: number) {
  let list = arrivals.get(key);
  if (!list) {
    list = [];
    arrivals.set(key, list);
  }
  list.push(t);
  for (let i = waiters.length - 1; i >= 0; i--) {
    const w = waiters[i];
    if (w && w.key === key && list.length >= w.count) {
      waiters.splice(i, 1);
      w.done(list.length);
    }
  }
}

function openOne(c: OpenCmd, request: Buffer): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port: c.port });
    let head = "";
    let streaming = false;
    let tail = "";
    let settled = false;
    const settle = (err?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(err);
    };
    const timer = setTimeout(() => {
      settle("timeout waiting for the stream's headers");
      s.destroy();
    }, 60_000);
    s.setNoDelay(true);
    s.on("connect", () => s.write(request));
    s.on("data", (buf: Buffer) => {
      const t = nowMs();
      let text = buf.toString("latin1");
      if (!streaming) {
        head += text;
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!head.startsWith("HTTP/1.1 200")) {
          settle(head.slice(0, 300).replace(/\r\n/g, " | "));
          s.destroy();
          return;
        }
        streaming = true;
        sockets.add(s);
        settle();
        text = head.slice(end + 4);
        head = "";
      }
      tail += text;
      const cut = tail.lastIndexOf("\n\n");
      if (cut < 0) return;
      const complete = tail.slice(0, cut);
      tail = tail.slice(cut + 2);
      for (const m of complete.matchAll(KEY_RE)) record(m[1] as string, t);
    });
    s.on("error", (e) => settle(e.message));
    s.on("close", () => {
      if (sockets.delete(s)) dropped++;
      settle("closed before the stream started");
    });
  });
}

async function open(c: OpenCmd) {
  const extra = Object.entries(c.headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  const body = Buffer.from(c.body);
  const request = Buffer.concat([
    Buffer.from(
      `POST ${c.path} HTTP/1.1\r\nHost: 127.0.0.1:${c.port}\r\nAccept: text/event-stream\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n`,
    ),
    body,
  ]);
  const started = nowMs();
  let failed = 0;
  let firstError: string | undefined;
  let next = 0;
  const lane = async () => {
    while (next < c.n) {
      next++;
      const err = await openOne(c, request);
      if (err) {
        failed++;
        firstError ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(c.concurrency, c.n) }, lane));
  return { open: sockets.size, failed, firstError, ms: nowMs() - started };
}

serveWorker({
  open: async (m) => open(m as unknown as OpenCmd),
  reset: async () => {
    arrivals.clear();
    dropped = 0;
    return { open: sockets.size };
  },
  waitFor: async (m) => {
    const key = String(m.key);
    const count = Number(m.count);
    const have = arrivals.get(key)?.length ?? 0;
    if (have >= count) return { received: have };
    return new Promise((resolve) => {
      const w = { key, count, done: (n: number) => resolve({ received: n }) };
      waiters.push(w);
      setTimeout(
        () => {
          const i = waiters.indexOf(w);
          if (i >= 0) waiters.splice(i, 1);
          resolve({ received: arrivals.get(key)?.length ?? 0, timedOut: true });
        },
        Number(m.timeoutMs ?? 30_000),
      );
    });
  },
  arrivals: async (m) => Object.fromEntries((m.keys as string[]).map((k) => [k, arrivals.get(k) ?? []])),
  status: async () => ({ open: sockets.size, dropped }),
  close: async () => {
    const n = sockets.size;
    for (const s of sockets) s.resetAndDestroy();
    sockets.clear();
    return { closed: n };
  },
});
