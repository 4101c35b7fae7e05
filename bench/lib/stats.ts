/**
 * Small statistics for the benchmark: every figure is a median with its min and max over interleaved
 * runs, and every ratio is taken run by run (full stack of run i ÷ baseline of run i) before the median,
 * so a burst of noise from other work on the machine lands on both sides of the same ratio.
 */

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** The per-run values, in run order. */
  runs: number[];
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((v) => Number.isFinite(v));
  const sorted = [...finite].sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: [...values] };
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, runs: [...values] };
}

/** Run-by-run ratios a[i] ÷ b[i], summarised. */
export function pairRatio(a: readonly number[], b: readonly number[]): Spread {
  return spread(a.map((x, i) => x / (b[i] ?? Number.NaN)));
}

/** Latency summary of raw samples (ms). */
export function latencySummary(samples: readonly number[]): {
  p50: number;
  p99: number;
  max: number;
  n: number;
} {
  const sorted = [...samples].sort((x, y) => x - y);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    n: sorted.length,
  };
}

/** "12.3 (11.9–13.0)": median with min and max. */
export function fmtSpread(s: Spread, digits = 1): string {
  if (!Number.isFinite(s.median)) return "n/a";
  const f = (v: number) => fmt(v, digits);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

export function fmt(v: number, digits = 1): string {
  if (!Number.isFinite(v)) return "n/a";
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString("en-US");
  return v.toFixed(digits);
}
