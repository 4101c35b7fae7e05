import { createParser, type EventSourceMessage } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ProjectEvent } from "./event-bus.js";
import {
  DATA_LINE_BUDGET,
  encodeErrorFrame,
  encodeEventFrames,
  encodeEventOnce,
  MAX_SSE_LINE_BYTES,
  PING_FRAME,
} from "./sse-format.js";

const NOW = 1754300000123;

const ev = (over: Partial<ProjectEvent> = {}): ProjectEvent => ({
  projectId: "p1",
  type: "secret:update",
  environment: "dev",
  secretPath: "/app",
  keys: ["DB_URL"],
  ...over,
});

/** Parse like a spec-compliant client (what eventsource-parser implements). */
function parseSse(bytes: Buffer): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => out.push(m) });
  parser.feed(bytes.toString("utf8"));
  return out;
}

interface Payload {
  projectType: string;
  data: { eventType: string; payload: { environment: string; secretPath: string; secretKey: string }[] };
}

describe("happy", () => {
  it("frames a single change exactly as upstream does", () => {
    const { bytes, frames } = encodeEventFrames(ev(), { now: NOW });
    expect(frames).toBe(1);
    expect(bytes.toString()).toBe(
      "id: 1754300000123\nevent: secret:update\n" +
        'data: {"projectType":"secret-manager","data":{"eventType":"secret:update","payload":' +
        '[{"environment":"dev","secretPath":"/app","secretKey":"DB_URL"}]}}\n\n',
    );
  });

  it("carries several keys in one frame, in order", () => {
    const { bytes } = encodeEventFrames(ev({ type: "secret:create", keys: ["A", "B", "C"] }), { now: NOW });
    const [msg, ...rest] = parseSse(bytes);
    expect(rest).toEqual([]);
    expect(msg).toMatchObject({ id: String(NOW), event: "secret:create" });
    const data = JSON.parse(msg?.data ?? "") as Payload;
    expect(data).toEqual({
      projectType: "secret-manager",
      data: {
        eventType: "secret:create",
        payload: ["A", "B", "C"].map((secretKey) => ({ environment: "dev", secretPath: "/app", secretKey })),
      },
    });
  });

  it("sends import mutations with a single-object payload", () => {
    const { bytes } = encodeEventFrames(ev({ type: "secret:import-mutation", keys: [] }), { now: NOW });
    expect(bytes.toString()).toBe(
      "id: 1754300000123\nevent: secret:import-mutation\n" +
        'data: {"projectType":"secret-manager","data":{"eventType":"secret:import-mutation",' +
        '"payload":{"environment":"dev","secretPath":"/app"}}}\n\n',
    );
  });

  it("formats pings and errors with an event line and LF endings", () => {
    expect(PING_FRAME.toString()).toBe("event: ping\n\n");
    expect(encodeErrorFrame("Permission denied or refresh failed").toString()).toBe(
      'event: error\ndata: {"message":"Permission denied or refresh failed"}\n\n',
    );
    const multiLine = encodeErrorFrame("line one\r\nline two").toString();
    expect(multiLine.split("\n")).toHaveLength(4); // event, data, "", "" : still one data line
    expect(multiLine).not.toContain("\r");
    expect(JSON.parse(parseSse(Buffer.from(multiLine))[0]?.data ?? "")).toEqual({
      message: "line one\r\nline two",
    });
    expect(encodeErrorFrame("x".repeat(100_000)).length).toBeLessThan(1100);
  });

  it("encodes an event once and reuses the bytes for every subscriber", () => {
    const shared = Object.freeze(ev());
    const first = encodeEventOnce(shared);
    expect(encodeEventOnce(shared)).toBe(first);
    expect(encodeEventOnce(Object.freeze(ev())).bytes).not.toBe(first.bytes);
  });
});

describe("large batches", () => {
  it("splits thousands of long keys into frames whose lines all stay under 64 KiB", () => {
    // Long, escape-heavy, multi-byte keys stress the byte accounting (a quote or backslash doubles in JSON,
    // Cyrillic is two bytes per char in UTF-8).
    const keys = Array.from(
      { length: 5000 },
      (_, i) => `KEY_${i}_${"ключ".repeat(20)}_"quoted"_\\${"X".repeat(i % 300)}`,
    );
    const event = ev({ environment: "production", secretPath: "/deep/folder/path", keys });
    const { bytes, frames, oversizedItems } = encodeEventFrames(event, { now: NOW });
    expect(oversizedItems).toBe(0);
    expect(frames).toBeGreaterThan(5);

    // What Go's bufio.Scanner sees: LF-separated lines, none as long as the 64 KiB buffer.
    const text = bytes.toString("utf8");
    expect(text).not.toContain("\r");
    for (const line of text.split("\n")) {
      expect(Buffer.byteLength(line)).toBeLessThan(MAX_SSE_LINE_BYTES);
      expect(Buffer.byteLength(line)).toBeLessThanOrEqual(DATA_LINE_BUDGET);
    }

    const messages = parseSse(bytes);
    expect(messages).toHaveLength(frames);
    const union: string[] = [];
    for (const m of messages) {
      expect(m.event).toBe("secret:update");
      expect(m.id).toBe(String(NOW));
      const data = JSON.parse(m.data) as Payload;
      expect(data.projectType).toBe("secret-manager");
      expect(data.data.eventType).toBe("secret:update");
      for (const item of data.data.payload) {
        expect(item.environment).toBe("production");
        expect(item.secretPath).toBe("/deep/folder/path");
        union.push(item.secretKey);
      }
    }
    expect(union).toEqual(keys);
  });

  it("packs greedily and never exceeds the budget (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary", minLength: 1, maxLength: 80 }), { maxLength: 200 }),
        fc.integer({ min: 200, max: 4000 }),
        (keys, budget) => {
          const { bytes, frames, oversizedItems } = encodeEventFrames(ev({ keys }), {
            now: NOW,
            maxDataLineBytes: budget,
          });
          const dataLines = bytes
            .toString("utf8")
            .split("\n")
            .filter((l) => l.startsWith("data: "));
          expect(dataLines).toHaveLength(frames);
          const union: string[] = [];
          let previousSize = 0;
          for (const line of dataLines) {
            const size = Buffer.byteLength(line);
            expect(size).toBeLessThanOrEqual(budget);
            const items = (JSON.parse(line.slice(6)) as Payload).data.payload;
            // Greedy: the previous frame was closed only because this frame's first item didn't fit.
            if (previousSize > 0) {
              const firstItem = JSON.stringify(items[0]);
              expect(previousSize + 1 + Buffer.byteLength(firstItem)).toBeGreaterThan(budget);
            }
            previousSize = size;
            union.push(...items.map((i) => i.secretKey));
          }
          expect(union.length + oversizedItems).toBe(keys.length);
          if (oversizedItems === 0) expect(union).toEqual(keys);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("errors", () => {
  it("skips a key too large for any frame and reports it", () => {
    const huge = "K".repeat(MAX_SSE_LINE_BYTES);
    const { bytes, frames, oversizedItems } = encodeEventFrames(ev({ keys: ["A", huge, "B"] }), { now: NOW });
    expect(oversizedItems).toBe(1);
    expect(frames).toBe(1);
    const data = JSON.parse(parseSse(bytes)[0]?.data ?? "") as Payload;
    expect(data.data.payload.map((p) => p.secretKey)).toEqual(["A", "B"]);
  });

  it("emits nothing for a keyed event without keys", () => {
    const { bytes, frames } = encodeEventFrames(ev({ type: "secret:delete", keys: [] }));
    expect(frames).toBe(0);
    expect(bytes.length).toBe(0);
  });
});
