import type { ProjectEvent } from "./event-bus.js";

/**
 * SSE wire format, as the Infisical Go CLI proxy and Kubernetes operator parse it (real-clients.md §3):
 *
 *   id: <epoch ms>\n
 *   event: secret:update\n
 *   data: {"projectType":"secret-manager","data":{"eventType":"secret:update","payload":[…]}}\n
 *   \n
 *
 * - Every frame carries `event:` (the operator drops frames without one) and exactly one `data:` line.
 * - LF line endings only.
 * - No line may reach 64 KiB: both Go clients read lines with bufio.Scanner, whose default limit kills
 *   the whole stream on a longer line. A big batch is therefore split into several frames of the same
 *   event type, each under DATA_LINE_BUDGET; the CLI proxy handles each payload item independently,
 *   so splitting changes nothing for it.
 * - create/update/delete payloads are arrays of {environment, secretPath, secretKey}. Import mutations
 *   send ONE OBJECT {environment, secretPath}, as upstream and its docs do, and as our issue specifies.
 *   Known trade-off: the CLI proxy cannot decode that object and drops the frame (it logs "Failed to
 *   parse SSE event data"); the operator reconciles on any frame and does not care.
 */

/** bufio.Scanner's MaxScanTokenSize: a line (including its LF) must fit in this many bytes. */
export const MAX_SSE_LINE_BYTES = 64 * 1024;

/** Target for the data line. The margin leaves room for proxies that add bytes and for rounding. */
export const DATA_LINE_BUDGET = MAX_SSE_LINE_BYTES - 4 * 1024;

const PROJECT_TYPE = "secret-manager";
const MAX_ERROR_MESSAGE_CHARS = 1024;

/** Keep-alive, every ~15 s: `event:` and no data line (the CLI ignores it, the operator's watchdog needs it). */
export const PING_FRAME: Buffer = Buffer.from("event: ping\n\n");

export interface EncodedEvent {
  /** All frames for the event, concatenated: write this one Buffer to every matching subscriber. */
  bytes: Buffer;
  frames: number;
  /** Payload items too large for any frame on their own (absurdly long key or path); skipped, so log them. */
  oversizedItems: number;
}

export interface EncodeOptions {
  /** The `id:` value; defaults to Date.now(). */
  now?: number;
  /** For tests: the data-line budget in bytes. */
  maxDataLineBytes?: number;
}

function frame(id: number, type: string, dataJson: string): string {
  return `id: ${id}\nevent: ${type}\ndata: ${dataJson}\n\n`;
}

export function encodeEventFrames(event: ProjectEvent, opts: EncodeOptions = {}): EncodedEvent {
  const id = opts.now ?? Date.now();
  const budget = opts.maxDataLineBytes ?? DATA_LINE_BUDGET;
  const env = JSON.stringify(event.environment);
  const path = JSON.stringify(event.secretPath);
  const head = `data: {"projectType":"${PROJECT_TYPE}","data":{"eventType":"${event.type}","payload":`;

  if (event.type === "secret:import-mutation") {
    const data = `${head}{"environment":${env},"secretPath":${path}}}}`;
    if (Buffer.byteLength(data) > budget) return { bytes: Buffer.alloc(0), frames: 0, oversizedItems: 1 };
    return {
      bytes: Buffer.from(frame(id, event.type, data.slice("data: ".length))),
      frames: 1,
      oversizedItems: 0,
    };
  }

  // Greedy packing. The JSON is assembled by hand so each item's byte size is known without re-encoding
  // the whole payload; every value still goes through JSON.stringify, so escaping is exact.
  const itemHead = `{"environment":${env},"secretPath":${path},"secretKey":`;
  const fixed = Buffer.byteLength(head) + "[]}}".length; // data line = head + "[" + items + "]}}"
  const frames: string[] = [];
  let items: string[] = [];
  let size = fixed;
  let oversizedItems = 0;

  const flush = () => {
    if (items.length === 0) return;
    frames.push(frame(id, event.type, `${head.slice("data: ".length)}[${items.join(",")}]}}`));
    items = [];
    size = fixed;
  };

  for (const key of event.keys) {
    const item = `${itemHead}${JSON.stringify(key)}}`;
    const itemBytes = Buffer.byteLength(item);
    if (fixed + itemBytes > budget) {
      oversizedItems++;
      continue;
    }
    if (items.length > 0 && size + 1 + itemBytes > budget) flush();
    size += (items.length > 0 ? 1 : 0) + itemBytes; // +1 for the comma before every item but the first
    items.push(item);
  }
  flush();
  return { bytes: Buffer.from(frames.join("")), frames: frames.length, oversizedItems };
}

// Bus events are frozen and shared by every listener (event-bus.ts), so the first subscriber to need
// the bytes encodes them and the other N-1 reuse the Buffer: fan-out does no per-subscriber JSON work.
const encodedByEvent = new WeakMap<ProjectEvent, EncodedEvent>();

export function encodeEventOnce(event: ProjectEvent): EncodedEvent {
  let encoded = encodedByEvent.get(event);
  if (!encoded) {
    encoded = encodeEventFrames(event);
    encodedByEvent.set(event, encoded);
  }
  return encoded;
}

/** In-band error, sent just before the server ends a stream (e.g. permission revoked). */
export function encodeErrorFrame(message: string): Buffer {
  const text = message.length > MAX_ERROR_MESSAGE_CHARS ? message.slice(0, MAX_ERROR_MESSAGE_CHARS) : message;
  return Buffer.from(`event: error\ndata: ${JSON.stringify({ message: text })}\n\n`);
}
