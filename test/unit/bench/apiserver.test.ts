// The activation benchmark's readings of a kube-apiserver: CPU ticks from /proc/<pid>/stat, one metric from
// a Prometheus exposition, and synthetic copies of a CRD that the API server accepts side by side.
import { describe, expect, it } from "vitest";
import { parseCpuTicks, promValue, syntheticCrds } from "../../../bench/lib/apiserver.ts";
import { allCrds } from "../../../shared/crds.ts";

describe("bench: reading a kube-apiserver", () => {
  it("CPU ticks: utime + stime, also when the command holds spaces and parentheses", () => {
    const stat = (comm: string) =>
      `4242 (${comm}) S 1 4242 4242 0 -1 4194560 9120 0 3 0 1234 567 0 0 20 0 12 0 3196008 1048576 4096`;
    expect(parseCpuTicks(stat("kube-apiserver"))).toBe(1234 + 567);
    expect(parseCpuTicks(stat("odd (name) x"))).toBe(1234 + 567);
  });

  it("a metric's unlabelled sample, in plain or exponent notation; absent: NaN", () => {
    const text = [
      "# HELP go_memstats_heap_alloc_bytes Number of heap bytes allocated and still in use.",
      "# TYPE go_memstats_heap_alloc_bytes gauge",
      "go_memstats_heap_alloc_bytes 1.30987264e+08",
      "go_memstats_heap_alloc_bytes_total 99",
      'apiserver_request_total{code="200"} 7',
      "process_resident_memory_bytes 332251136",
    ].join("\n");
    expect(promValue(text, "go_memstats_heap_alloc_bytes")).toBe(130_987_264);
    expect(promValue(text, "process_resident_memory_bytes")).toBe(332_251_136);
    expect(promValue(text, "apiserver_request_total")).toBeNaN();
    expect(promValue(text, "go_gc_duration_seconds")).toBeNaN();
  });

  it("synthetic CRDs: one fake group each, name = plural.group, no short names; the original untouched", () => {
    const [original] = allCrds().filter((c) => c.spec.names.shortNames !== undefined);
    if (!original) throw new Error("no generated CRD with short names");
    const before = JSON.stringify(original);
    const copies = syntheticCrds(original, 3);
    expect(new Set(copies.map((c) => c.spec.group)).size).toBe(3);
    for (const c of copies) {
      expect(c.metadata.name).toBe(`${c.spec.names.plural}.${c.spec.group}`);
      expect(c.spec.group).not.toBe(original.spec.group);
      expect(c.spec.names.shortNames).toBeUndefined();
      expect(c.spec.versions).toEqual(original.spec.versions);
    }
    expect(JSON.stringify(original)).toBe(before);
  });
});
