// The benchmark's output: one table row per metric (value, target, pass/fail, min–max), printed to
// stdout and written, with every raw number, to bench/results/latest.json.
import { execFileSync } from "node:child_process";
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { summarize } from "./stats.ts";

export interface Row {
  section: string;
  metric: string;
  value: string;
  target: string;
  /** undefined: informational, no target. */
  pass: boolean | undefined;
  /** min–max over the repetitions (or "—"). */
  range: string;
}

export const verdict = (pass: boolean | undefined) => (pass === undefined ? "" : pass ? "pass" : "FAIL");

export function formatTable(rows: readonly Row[]): string {
  const header = ["section", "metric", "value", "target", "", "min–max"];
  const cells = rows.map((r) => [r.section, r.metric, r.value, r.target, verdict(r.pass), r.range]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? "").length)));
  const fmt = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [fmt(header), fmt(widths.map((w) => "─".repeat(w))), ...cells.map(fmt)].join("\n");
}

/** The same rows as a Markdown table (for docs/performance.md). */
export function markdownTable(rows: readonly Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return [
    "| section | metric | value | target | | min–max |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${esc(r.section)} | ${esc(r.metric)} | ${esc(r.value)} | ${esc(r.target)} | ${verdict(r.pass)} | ${esc(r.range)} |`,
    ),
  ].join("\n");
}

export function machineFacts() {
  const cpu = cpus();
  return {
    nproc: cpu.length,
    cpuModel: cpu[0]?.model ?? "unknown",
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    freeMemoryGbAtStart: Math.round((freemem() / 1024 ** 3) * 10) / 10,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
    uptimeAtStart: uptime(),
  };
}

/** `uptime`'s line (the machine is shared: every measurement records the load it was taken under). */
export function uptime(): string {
  try {
    return execFileSync("uptime", { encoding: "utf8" }).trim();
  } catch {
    return `load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(", ")}`;
  }
}

export const ms = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
export const mb = (x: number) => `${x.toFixed(1)} MB`;
export const range = (min: number, max: number, f: (x: number) => string) =>
  Number.isFinite(min) ? `${f(min)}–${f(max)}` : "—";

/** Samples of fresh processes importing one bundle: wall and CPU time each. */
export type ImportSamples = ReadonlyArray<{ wallMs: number; cpuMs: number }>;

/**
 * The two cold-import rows of a generated-kinds section: no kind activated, and `kinds` activated at run
 * time — that one judged by its wall median against `budgetMs`. On a loaded machine the wall time is mostly
 * the queue for a core: the CPU time stands beside it.
 */
export function coldImportRows(
  section: string,
  bundle: string,
  samples: { none: ImportSamples; some: ImportSamples },
  kinds: number,
  budgetMs: number,
): Row[] {
  const msf = (x: number) => `${Math.round(x)} ms`;
  return (
    [
      ["0 generated kinds", samples.none, false],
      [`${kinds} generated kinds activated at run time`, samples.some, true],
    ] as const
  ).map(([what, s, judged]) => {
    const wall = summarize(s.map((x) => x.wallMs));
    const cpu = summarize(s.map((x) => x.cpuMs));
    return {
      section,
      metric: `${bundle}cold import, ${what}: wall (CPU ${msf(cpu.median)}, ${range(cpu.min, cpu.max, msf)})`,
      value: msf(wall.median),
      target: judged ? `≤ ${budgetMs} ms` : "—",
      pass: judged ? wall.median <= budgetMs : undefined,
      range: range(wall.min, wall.max, msf),
    };
  });
}
