import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Base of the behavioural fakes: a tiny HTTP server on 127.0.0.1:0 that records every request, can be
 * told to fail the next one(s), and holds the destination's state so tests can seed and read it.
 * Subclasses implement the vendor's endpoints, auth and error shapes.
 */

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** JSON (or form fields for form-encoded bodies), undefined when empty or unparsable. */
  body: unknown;
}

export interface FakeResponse {
  status: number;
  body?: unknown;
  /** Sent verbatim instead of JSON (e.g. AWS query-protocol XML). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** Vendor operation name where the protocol has one (AWS X-Amz-Target / Action). */
  action?: string;
  /** 0 when the fake hung up without answering. */
  status: number;
  /** A mutating call to the destination (a secret written, deleted or tagged). */
  write: boolean;
}

export interface FailOptions {
  /** Retry-After header value (seconds or HTTP date) for 429/503. */
  retryAfter?: string;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
  /** How many consecutive matching requests fail (default 1). */
  times?: number;
  /** Only fail requests this predicate accepts (e.g. only writes). */
  match?: (req: FakeRequest) => boolean;
}

export abstract class FakeDestination {
  url = "";
  readonly calls: RecordedCall[] = [];
  private failures: Array<{ status: number; opts: FailOptions; left: number }> = [];
  private server: Server | undefined;

  /** Starts listening; returns this for `const fake = await new X().start()`. */
  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://127.0.0.1");
        const rawBody = Buffer.concat(chunks).toString("utf8");
        const fr: FakeRequest = {
          method: req.method ?? "GET",
          path: decodeURIComponent(url.pathname),
          query: url.searchParams,
          headers: req.headers,
          rawBody,
          body: parseBody(rawBody, req.headers["content-type"]),
        };
        void this.respond(fr).then((out) => {
          this.calls.push({
            method: fr.method,
            path: fr.path,
            query: Object.fromEntries(fr.query),
            headers: fr.headers,
            body: fr.body,
            action: this.actionOf(fr),
            status: out?.status ?? 0,
            write: this.isWrite(fr),
          });
          if (!out) return; // hang: the socket stays open until the client gives up or close()
          const body = out.raw ?? (out.body === undefined ? "" : JSON.stringify(out.body));
          const type = out.raw === undefined ? { "content-type": "application/json; charset=utf-8" } : {};
          res.writeHead(out.status, { ...type, ...out.headers });
          res.end(out.status === 204 ? undefined : body);
        });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  private async respond(req: FakeRequest): Promise<FakeResponse | undefined> {
    const failure = this.failures.find((f) => !f.opts.match || f.opts.match(req));
    if (failure) {
      failure.left--;
      if (failure.left <= 0) this.failures.splice(this.failures.indexOf(failure), 1);
      if (failure.opts.hang) return undefined;
      const out = this.failure(failure.status, req);
      if (failure.opts.retryAfter !== undefined)
        out.headers = { ...out.headers, "retry-after": failure.opts.retryAfter };
      return out;
    }
    try {
      return await this.route(req);
    } catch (err) {
      return { status: 500, body: { message: `fake crashed: ${(err as Error).message}` } };
    }
  }

  /** The next matching request fails with this status, in the vendor's error shape. */
  failNext(status: number, opts: FailOptions = {}): this {
    this.failures.push({ status, opts, left: opts.times ?? 1 });
    return this;
  }

  /** Mutating calls only. */
  get writes(): RecordedCall[] {
    return this.calls.filter((c) => c.write);
  }

  /** Forgets the recorded calls only (state and pending failures stay). */
  clearCalls(): void {
    this.calls.length = 0;
  }

  /** Forgets calls and pending failures, and empties the destination. */
  reset(): void {
    this.calls.length = 0;
    this.failures = [];
    this.clear();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  /** Puts plaintext entries at a destination location (its format is documented by each fake). */
  abstract seed(scope: string, entries: Record<string, string>): void;
  /** The plaintext entries at a location, as the destination holds them now. */
  abstract read(scope: string): Record<string, string>;
  protected abstract clear(): void;
  protected abstract route(req: FakeRequest): FakeResponse | Promise<FakeResponse>;
  protected abstract isWrite(req: FakeRequest): boolean;
  /** The vendor's error response for an injected failure of this status. */
  protected abstract failure(status: number, req: FakeRequest): FakeResponse;
  protected actionOf(_req: FakeRequest): string | undefined {
    return undefined;
  }
}

function parseBody(raw: string, contentType: string | undefined): unknown {
  if (!raw) return undefined;
  if (contentType?.includes("x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** The bearer/token credential of a request ("Bearer x", "token x"), if any. */
export function bearerOf(req: FakeRequest): string | undefined {
  const auth = req.headers.authorization;
  const m = typeof auth === "string" ? /^(?:Bearer|token)\s+(.+)$/i.exec(auth) : null;
  return m?.[1];
}
