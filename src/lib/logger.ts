import type { Bindings, ChildLoggerOptions, Logger, LoggerOptions } from "pino";

/**
 * pino options. Redaction is a second line of defence: code never logs tokens, client secrets or
 * secret values on purpose, and these paths catch them if a request or object is logged whole.
 */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  "headers.authorization",
  "*.authorization",
  "*.accessToken",
  "*.clientSecret",
  "*.secretValue",
  "*.password",
  "*.token",
  "*.credentials",
  "*.value",
  "body",
  "req.body",
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: {
      // Log method, route and ids only: never the query string, which may carry names but the body never.
      req: (req: { method: string; url: string; id: string; ip?: string }) => ({
        method: req.method,
        url: req.url.split("?")[0],
        reqId: req.id,
        ip: req.ip,
      }),
    },
  };
}

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";
type LogFn = (...args: unknown[]) => void;

/**
 * `request.log` made on first use. Fastify gives every request a child logger bound to its reqId, and
 * with redaction on, pino's `child()` runs the redaction over the bindings: on the bench's cached read
 * that was the largest allocation of the whole request (~1.5 KB), for a logger that almost no request
 * writes to. The stand-in answers level checks from the parent and makes the real child (same bindings,
 * same options) at the first call of an enabled level; after that it forwards everything to it.
 */
class LazyChildLogger {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get logger(): Logger {
    this.real ??= this.parent.child(this.bound, this.opts);
    return this.real;
  }

  private write(level: Level, args: unknown[]): void {
    if (!(this.real ?? this.parent).isLevelEnabled(level)) return;
    (this.logger[level] as LogFn)(...args);
  }

  get level(): string {
    return (this.real ?? this.parent).level;
  }
  set level(l: string) {
    this.logger.level = l;
  }
  isLevelEnabled(l: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(l);
  }
  fatal(...args: unknown[]) {
    this.write("fatal", args);
  }
  error(...args: unknown[]) {
    this.write("error", args);
  }
  warn(...args: unknown[]) {
    this.write("warn", args);
  }
  info(...args: unknown[]) {
    this.write("info", args);
  }
  debug(...args: unknown[]) {
    this.write("debug", args);
  }
  trace(...args: unknown[]) {
    this.write("trace", args);
  }
  silent() {}
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options);
  }
  bindings(): Bindings {
    return this.real ? this.real.bindings() : { ...this.parent.bindings(), ...this.bound };
  }
  flush(cb?: (err?: Error) => void): void {
    this.parent.flush(cb);
  }
}

/**
 * Fastify's `childLoggerFactory`: a lazy child, unless the route sets its own level (then the level
 * checks must be the child's own, so it is made at once).
 */
export function lazyChildLogger(logger: Logger, bindings: Bindings, opts: ChildLoggerOptions): Logger {
  if (opts.level !== undefined) return logger.child(bindings, opts);
  return new LazyChildLogger(logger, bindings, opts) as unknown as Logger;
}
