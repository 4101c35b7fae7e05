import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { REPO_ROOT } from "./procs.js";

/**
 * Summary of a V8 CPU profile (`--cpu-prof`) written by a server child: self time by function and by
 * module (a package under node_modules, a file under src/, or a Node internal), so a missed target can
 * be traced to where the time goes without opening DevTools.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  busyMs: number;
  topFunctions: { name: string; where: string; selfMs: number; pct: number }[];
  topModules: { module: string; selfMs: number; pct: number }[];
}

function moduleOf(url: string): string {
  if (!url) return "(native/V8)";
  if (url.startsWith("node:")) return url;
  const path = url.replace(/^file:\/\//, "");
  const nm = path.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = path.slice(nm + "node_modules/".length).split("/");
    return `npm:${rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  return relative(REPO_ROOT, path);
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
    samples: number[];
  };
  const totalMs = (p.endTime - p.startTime) / 1000;
  const msPerSample = totalMs / (p.samples.length || 1);
  // Percentages of busy time: the server idles while the baseline is measured.
  const idle = p.nodes
    .filter((n) => n.callFrame.functionName === "(idle)")
    .reduce((a, n) => a + (n.hitCount ?? 0), 0);
  const samples = Math.max(1, p.samples.length - idle);
  const byFn = new Map<string, { name: string; where: string; hits: number }>();
  const byModule = new Map<string, number>();
  for (const n of p.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits || n.callFrame.functionName === "(idle)") continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const mod = moduleOf(url);
    const where = url ? `${mod}:${lineNumber + 1}` : mod;
    const name = functionName || "(anonymous)";
    const key = `${name}@${where}`;
    const e = byFn.get(key) ?? { name, where, hits: 0 };
    e.hits += hits;
    byFn.set(key, e);
    byModule.set(mod, (byModule.get(mod) ?? 0) + hits);
  }
  const pct = (h: number) => (100 * h) / samples;
  return {
    file,
    totalMs,
    busyMs: samples * msPerSample,
    topFunctions: [...byFn.values()]
      .sort((a, b) => b.hits - a.hits)
      .slice(0, top)
      .map((e) => ({ name: e.name, where: e.where, selfMs: e.hits * msPerSample, pct: pct(e.hits) })),
    topModules: [...byModule.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([module, h]) => ({ module, selfMs: h * msPerSample, pct: pct(h) })),
  };
}

export function formatProfile(s: ProfileSummary): string {
  const lines = [`CPU profile ${s.file} (${(s.totalMs / 1000).toFixed(1)} s):`, "  self time by module:"];
  for (const m of s.topModules) lines.push(`    ${m.pct.toFixed(1).padStart(5)}%  ${m.module}`);
  lines.push("  self time by function:");
  for (const f of s.topFunctions) lines.push(`    ${f.pct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  return lines.join("\n");
}
