// Small statistics for benchmark samples: medians with their min–max, and percentiles.

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: percentile(s, 50), min: s[0] ?? Number.NaN, max: s.at(-1) ?? Number.NaN, n: s.length };
}

/** Nearest-rank percentile of sorted samples (p in 0–100); the median interpolates between the middle two. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (p === 50 && sorted.length % 2 === 0) {
    const mid = sorted.length / 2;
    return ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  }
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

export function percentiles(samples: readonly number[], ps: readonly number[] = [50, 95, 99]) {
  const s = [...samples].sort((a, b) => a - b);
  return Object.fromEntries(ps.map((p) => [`p${p}`, percentile(s, p)])) as Record<string, number>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const round = (x: number, digits = 1) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};
