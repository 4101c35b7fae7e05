import { createServer, type ServerResponse } from "node:http";

/**
 * Baseline for the event fan-out: a bare `node:http` Server-Sent Events server. It keeps every open
 * response in a Set and, on each publish, encodes ONE frame (byte-for-byte the shape Ferry sends) and
 * writes that Buffer to every stream. No auth, no permission, no database, no bus: the floor for
 * "deliver one event to N sockets" in Node.
 *
 *   POST /subscribe            opens a stream (the body is read and ignored)
 *   POST /publish              {environment, secretPath, key}: fans out one secret:update frame
 *   GET  /status
 */

const streams = new Set<ServerResponse>();

function frame(environment: string, secretPath: string, key: string): Buffer {
  const data = JSON.stringify({
    projectType: "secret-manager",
    data: { eventType: "secret:update", payload: [{ environment, secretPath, secretKey: key }] },
  });
  return Buffer.from(`id: ${Date.now()}\nevent: secret:update\ndata: ${data}\n\n`);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    if (req.method === "POST" && req.url === "/subscribe") {
      res.writeHead(200, {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        Connection: "keep-alive",
        "X-Accel-Buffering": "no",
      });
      res.flushHeaders();
      res.socket?.setNoDelay(true);
      streams.add(res);
      res.once("close", () => streams.delete(res));
      return;
    }
    if (req.method === "POST" && req.url === "/publish") {
      const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, string>;
      const bytes = frame(b.environment ?? "dev", b.secretPath ?? "/", b.key ?? "");
      for (const s of streams) s.write(bytes);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ delivered: streams.size }));
      return;
    }
    if (req.url === "/status") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ streams: streams.size }));
      return;
    }
    res.writeHead(404);
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.requestTimeout = 0;

const stop = () => {
  for (const s of streams) s.socket?.destroy();
  server.close(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
