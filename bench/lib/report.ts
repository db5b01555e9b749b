// The benchmark's output: one table row per metric (value, target, pass/fail, min–max), printed to
// stdout and written, with every raw number, to bench/results/latest.json.
import { cpus, freemem, loadavg, totalmem } from "node:os";

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
  };
}

export const ms = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);
export const mb = (x: number) => `${x.toFixed(1)} MB`;
export const range = (min: number, max: number, f: (x: number) => string) =>
  Number.isFinite(min) ? `${f(min)}–${f(max)}` : "—";
