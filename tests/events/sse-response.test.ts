import { createServer, get, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startSseResponse } from "../../src/features/events/sse-response.js";
import type { StreamSink } from "../../src/features/events/stream-hub.js";

/**
 * The SSE sink writes each event to the socket as one pre-framed HTTP chunk (the frame is built once
 * per event and shared by every stream). On the wire that must be exactly what Node's own chunked
 * encoding writes, in order with the headers before and the last chunk after.
 */
describe("SSE response sink", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
    server = undefined;
  });

  /** A server whose every request becomes a stream; `onOpen` drives it. */
  async function serve(onOpen: (sink: StreamSink) => void): Promise<number> {
    const srv = createServer((_req, res) => onOpen(startSseResponse(res)));
    server = srv;
    await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
    return (srv.address() as AddressInfo).port;
  }

  /** Sends a raw request and returns every byte the server wrote until it closed the connection. */
  function raw(port: number, request: string): Promise<string> {
    return new Promise((ok, fail) => {
      const sock = connect(port, "127.0.0.1", () => sock.write(request));
      const parts: Buffer[] = [];
      sock.on("data", (d: Buffer) => parts.push(d));
      sock.on("error", fail);
      sock.on("close", () => ok(Buffer.concat(parts).toString("utf8")));
    });
  }

  const event = Buffer.from('event: secret:update\ndata: {"k":"é"}\n\n');

  it("HTTP/1.1: each event is one chunk of the right length, the same frame reused across writes", async () => {
    const port = await serve((sink) => {
      sink.write(event);
      sink.write(event);
      sink.write(Buffer.from("event: ping\n\n"));
      sink.end(Buffer.from("event: error\ndata: bye\n\n"));
    });
    const wire = await raw(port, "POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    const [head, body] = wire.split("\r\n\r\n", 2) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(head).toMatch(/Transfer-Encoding: chunked/i);
    expect(head).toMatch(/Content-Type: text\/event-stream/i);
    const chunk = (b: Buffer) => `${b.length.toString(16)}\r\n${b.toString("utf8")}\r\n`;
    expect(wire.slice(head.length + 4)).toBe(
      chunk(event) +
        chunk(event) +
        chunk(Buffer.from("event: ping\n\n")) +
        chunk(Buffer.from("event: error\ndata: bye\n\n")) +
        "0\r\n\r\n",
    );
    expect(body.length).toBeGreaterThan(0);
  });

  it("an HTTP client decodes the stream to the frames, in order", async () => {
    const frames = [event, Buffer.from("event: ping\n\n"), Buffer.from(`data: ${"x".repeat(70_000)}\n\n`)];
    const port = await serve((sink) => {
      for (const f of frames) sink.write(f);
      sink.end();
    });
    const body = await new Promise<string>((ok, fail) => {
      get({ port, host: "127.0.0.1", path: "/s" }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () => ok(Buffer.concat(parts).toString("utf8")));
        res.on("error", fail);
      }).on("error", fail);
    });
    expect(body).toBe(Buffer.concat(frames).toString("utf8"));
  });

  it("HTTP/1.0 (no chunked encoding): the frames go out as they are", async () => {
    const port = await serve((sink) => {
      sink.write(event);
      sink.end(Buffer.from("event: ping\n\n"));
    });
    const wire = await raw(port, "GET /s HTTP/1.0\r\nHost: x\r\n\r\n");
    const [head] = wire.split("\r\n\r\n", 1) as [string];
    expect(head).not.toMatch(/Transfer-Encoding/i);
    expect(wire.slice(head.length + 4)).toBe(`${event.toString("utf8")}event: ping\n\n`);
  });

  it("writes after the client went away are dropped, not thrown", async () => {
    let sink: StreamSink | undefined;
    const closed = new Promise<void>((ok) => {
      void serve((s) => {
        sink = s;
        s.onClose(ok);
      }).then((port) => {
        const sock = connect(port, "127.0.0.1", () => sock.write("GET /s HTTP/1.1\r\nHost: x\r\n\r\n"));
        sock.once("data", () => sock.destroy());
      });
    });
    await closed;
    expect(sink?.closed).toBe(true);
    expect(() => sink?.write(event)).not.toThrow();
  });
});
