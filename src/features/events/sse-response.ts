import type { ServerResponse } from "node:http";
import type { StreamSink } from "./stream-hub.js";

/**
 * Turns a hijacked HTTP response into an event stream (events-auth.md §1.9, real-clients.md §3.2):
 * status 200 and the headers are flushed at once, before any event, because the Go clients return from
 * their request call only when headers arrive. No compression (nothing compresses hijacked replies),
 * and `X-Accel-Buffering: no` turns off nginx's buffering.
 */
export const SSE_HEADERS = Object.freeze({
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
});

/** How long a deliberately ended stream may take to flush its last frame before the socket is dropped. */
const END_GRACE_MS = 2_000;

/**
 * Each event as one HTTP/1.1 chunk (`<hex length>\r\n<frame>\r\n`), built once per event and shared by
 * every stream it goes to. `res.write()` would build the chunk header again for each stream and hand
 * the socket three buffers; fan-out is per-stream work, so this is one write of one shared buffer.
 */
const framedOnce = new WeakMap<Buffer, Buffer>();
function framed(chunk: Buffer): Buffer {
  let f = framedOnce.get(chunk);
  if (!f) {
    f = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
    framedOnce.set(chunk, f);
  }
  return f;
}

export function startSseResponse(res: ServerResponse): StreamSink {
  // Keep the socket itself: Node detaches it from the response once the response finishes.
  const socket = res.socket;
  const listeners: (() => void)[] = [];
  let closed = !socket || socket.destroyed || res.destroyed;
  const onClose = () => {
    if (closed) return;
    closed = true;
    for (const fn of listeners.splice(0)) fn();
  };
  res.once("close", onClose);
  if (!closed) {
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    socket?.setNoDelay(true);
    socket?.setTimeout(0); // idle streams stay open indefinitely; pings keep proxies awake
  }

  const drop = () => {
    if (socket) socket.destroy();
    else res.destroy();
  };

  return {
    write(chunk) {
      if (closed || chunk.length === 0) return; // an empty chunk would read as the end of the body
      // Straight to the socket only while the response has nothing of its own still queued (its
      // writableLength is its own buffer plus the socket's), so bytes never overtake the headers.
      const direct =
        socket &&
        res.chunkedEncoding &&
        res.headersSent &&
        !res.writableEnded &&
        res.writableLength === socket.writableLength;
      if (direct) socket.write(framed(chunk));
      else res.write(chunk);
    },
    bufferedBytes: () => (socket ? socket.writableLength : res.writableLength),
    end(last) {
      if (closed) return;
      // The response is the connection's last: once the closing frame is flushed, close the socket too,
      // or keep-alive would hold it open and make server.close() wait for it.
      const timer = setTimeout(drop, END_GRACE_MS);
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        drop();
      };
      if (last) res.end(last, done);
      else res.end(done);
    },
    destroy: drop,
    onClose(fn) {
      if (closed) fn();
      else listeners.push(fn);
    },
    get closed() {
      return closed;
    },
  };
}
