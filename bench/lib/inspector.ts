import { WebSocket } from "undici";

/**
 * A DevTools-protocol session with a server child started with `--inspect=127.0.0.1:<port>`. Used for
 * two things only:
 * - a full GC before each RSS reading (HeapProfiler.collectGarbage), so garbage from earlier runs stays
 *   out of the RSS-per-subscriber difference, on both servers alike;
 * - `--profile`: the V8 CPU profiler (the one `node --cpu-prof` uses) around one suite, so the profile
 *   shows the measured phase and not boot or seeding.
 */
export class InspectorSession {
  private next = 1;
  private readonly pending = new Map<
    number,
    (r: { result?: unknown; error?: { message: string } }) => void
  >();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (ev) => {
      const msg = JSON.parse(String(ev.data)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      if (msg.id === undefined) return;
      this.pending.get(msg.id)?.(msg);
      this.pending.delete(msg.id);
    });
  }

  static async open(inspectPort: number): Promise<InspectorSession> {
    const list = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
      webSocketDebuggerUrl: string;
    }[];
    const url = list[0]?.webSocketDebuggerUrl;
    if (!url) throw new Error(`no inspector target on port ${inspectPort}`);
    const ws = new WebSocket(url);
    await new Promise<void>((ok, fail) => {
      ws.addEventListener("open", () => ok());
      ws.addEventListener("error", () => fail(new Error("inspector connection failed")));
    });
    return new InspectorSession(ws);
  }

  send<T = unknown>(method: string, params: Record<string, unknown> = {}, timeoutMs = 60_000): Promise<T> {
    const id = this.next++;
    return new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        fail(new Error(`${method} timed out`));
      }, timeoutMs);
      this.pending.set(id, (r) => {
        clearTimeout(timer);
        if (r.error) fail(new Error(`${method}: ${r.error.message}`));
        else ok(r.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

export async function collectGarbage(inspectPort: number): Promise<void> {
  const s = await InspectorSession.open(inspectPort);
  try {
    await s.send("HeapProfiler.collectGarbage");
  } finally {
    s.close();
  }
}

/** Starts the CPU profiler; the returned function stops it and resolves with the profile JSON. */
export async function startCpuProfile(inspectPort: number): Promise<() => Promise<unknown>> {
  const s = await InspectorSession.open(inspectPort);
  await s.send("Profiler.enable");
  await s.send("Profiler.setSamplingInterval", { interval: 500 });
  await s.send("Profiler.start");
  return async () => {
    try {
      const { profile } = await s.send<{ profile: unknown }>("Profiler.stop", {}, 120_000);
      return profile;
    } finally {
      s.close();
    }
  };
}
