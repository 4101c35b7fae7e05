import autocannon from "autocannon";
import { serveWorker } from "../lib/procs.js";

/**
 * Load generator, in its own process so that its CPU never counts against the server's. Runs one
 * autocannon job per `run` message. Each request takes the next path from `paths`: cycling through them
 * for reads, or consuming each exactly once for deletes (each DELETE needs a secret that still exists),
 * in which case the run also stops when the list is used up.
 */

export interface LoadJob {
  url: string;
  method: "GET" | "DELETE" | "POST" | "PATCH";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
  paths: string[];
  /** true: reuse paths round-robin; false: each path once, at most paths.length requests. */
  cycle: boolean;
  /** Requests per second across all connections (unset: as fast as possible). */
  overallRate?: number;
}

export interface LoadResult {
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** 2xx responses per second over the whole run. */
  rps: number;
  /**
   * Latency percentiles (ms) of requests on established connections: each connection's first response
   * is left out, because it also waited for the server to accept the connection (see below).
   */
  p50: number;
  p99: number;
  /** autocannon's own p99 over every response, connection set-up included. */
  p99WithConnect: number;
  /** Slowest response, connection set-up included. */
  max: number;
  /** Paths handed to requests (a consumed list's unused tail starts here). */
  issued: number;
}

/** Nearest-rank percentile of response times (ms). */
function percentile(values: number[], q: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

function run(job: LoadJob): Promise<LoadResult> {
  let i = 0;
  const { paths } = job;
  const nextPath = () => {
    const p = paths[job.cycle ? i % paths.length : Math.min(i, paths.length - 1)] as string;
    i++;
    return p;
  };
  return new Promise((ok, fail) => {
    // autocannon reports `duration` in whole seconds, and a run bounded by its list of names (deletes)
    // is only noticed as finished on its next one-second tick: a fast server that used up its names in
    // 1.1 s would be credited with 2 s. So the rate is taken over the active period, from the start to
    // the last response.
    const started = performance.now();
    let lastResponse = started;
    const inst = autocannon(
      {
        url: job.url,
        connections: job.connections,
        duration: job.durationS,
        // A consumed list bounds the run by count as well as by time (the timer below).
        amount: job.cycle ? undefined : paths.length,
        overallRate: job.overallRate,
        // autocannon checks its stop flag (its own duration timer, and inst.stop() below) only at each
        // sample tick, 1 s by default: a 1.2 s run went on until its 2 s tick. (A documented option that
        // the bundled typings lack.)
        ...({ sampleInt: 100 } as object),
        timeout: 10,
        requests: [
          {
            method: job.method,
            headers: job.headers,
            body: job.body,
            setupRequest: (req) => {
              req.path = nextPath();
              return req;
            },
          },
        ],
      },
      (err, r) => {
        clearTimeout(timer);
        const elapsedS = (lastResponse - started) / 1000;
        if (err) {
          fail(err);
          return;
        }
        ok({
          ok: r["2xx"],
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          durationS: elapsedS,
          rps: r["2xx"] / Math.max(elapsedS, 0.001),
          p50: warm.length > 0 ? percentile(warm, 0.5) : r.latency.p50,
          p99: warm.length > 0 ? percentile(warm, 0.99) : r.latency.p99,
          p99WithConnect: r.latency.p99,
          max: r.latency.max,
          issued: Math.min(i, paths.length),
        });
      },
    );
    // Every run opens fresh connections, and Node accepts ONE pending connection per event-loop turn:
    // a busy server with long turns accepts the last of 50 connections hundreds of ms into a 1-second
    // run, and those first requests then made the whole top percentile. Percentiles are therefore taken
    // over the requests after each connection's first, for both servers alike.
    const warm: number[] = [];
    const opened = new WeakSet<object>();
    inst.on("response", (client: unknown, _status: number, _bytes: number, responseTime: number) => {
      lastResponse = performance.now();
      const c = client as object;
      if (opened.has(c)) warm.push(responseTime);
      else opened.add(c);
    });
    const timer = setTimeout(() => inst.stop(), job.durationS * 1000 + 50);
  });
}

serveWorker({ run: async (m) => run(m.job as LoadJob) });
