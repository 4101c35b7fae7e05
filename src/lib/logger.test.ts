import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { lazyChildLogger, loggerOptions } from "./logger.js";

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, log: pino(loggerOptions(level), sink) };
}

describe("lazy request logger", () => {
  it("writes like pino's own child: bindings, redaction, levels", () => {
    const { lines, log } = capture("info");
    const child = lazyChildLogger(log, { reqId: "req-1" }, {});
    child.debug("below the level");
    expect(lines).toHaveLength(0);
    expect(child.isLevelEnabled("debug")).toBe(false);
    expect(child.level).toBe("info");
    child.info({ creds: { secretValue: "plain" } }, "first");
    child.error("second");
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ["req-1", "first"],
      ["req-1", "second"],
    ]);
    expect(JSON.stringify(lines[0])).not.toContain("plain");
    expect(JSON.stringify(lines[0])).toContain("[redacted]");
    expect(child.bindings()).toMatchObject({ reqId: "req-1" });
    child.child({ step: "x" }).warn("grandchild");
    expect(lines[2]).toMatchObject({ reqId: "req-1", step: "x", msg: "grandchild" });
  });

  it("follows a level set on it, and a route level makes a real child at once", () => {
    const { lines, log } = capture("info");
    const child = lazyChildLogger(log, { reqId: "req-2" }, {});
    child.level = "debug";
    child.debug("now enabled");
    expect(lines.map((l) => l.msg)).toEqual(["now enabled"]);
    expect(log.level).toBe("info");
    const quiet = lazyChildLogger(log, { reqId: "req-3" }, { level: "error" });
    quiet.warn("dropped");
    quiet.error("kept");
    expect(lines.map((l) => l.msg)).toEqual(["now enabled", "kept"]);
    expect(lines[1]?.reqId).toBe("req-3");
  });
});
