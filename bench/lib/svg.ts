// Two small charts as hand-written SVG (no plotting dependency): latency percentiles per path, and
// RSS against the number of resources.

const W = 640;
const H = 360;
const M = { left: 64, right: 24, top: 48, bottom: 56 };
const COLORS = ["#2563eb", "#f59e0b", "#10b981", "#ef4444"];

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function frame(title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${W / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`,
    ...body,
    "</svg>",
    "",
  ].join("\n");
}

/** A "nice" upper bound for an axis. */
function niceMax(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

function yAxis(max: number, label: string, fmt: (v: number) => string): string[] {
  const out: string[] = [];
  const plotH = H - M.top - M.bottom;
  for (let i = 0; i <= 5; i++) {
    const v = (max * i) / 5;
    const y = M.top + plotH - (plotH * i) / 5;
    out.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
    out.push(`<text x="${M.left - 6}" y="${y + 4}" text-anchor="end" fill="#374151">${esc(fmt(v))}</text>`);
  }
  out.push(
    `<text transform="translate(16 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#374151">${esc(label)}</text>`,
  );
  return out;
}

export interface LatencySeries {
  name: string;
  /** p50, p95, p99 in ms. */
  values: Record<"p50" | "p95" | "p99", number>;
  targetMs: number;
}

/** Grouped bars: one group per percentile, one bar per path, dashed lines at each path's p99 target. */
export function latencyChart(series: readonly LatencySeries[], subtitle: string): string {
  const keys = ["p50", "p95", "p99"] as const;
  const max = niceMax(
    Math.max(...series.flatMap((s) => [...keys.map((k) => s.values[k]), s.targetMs])) * 1.05,
  );
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const groupW = plotW / keys.length;
  const barW = Math.min(56, (groupW * 0.7) / series.length);
  const y = (v: number) => M.top + plotH - (plotH * Math.min(v, max)) / max;
  const body = yAxis(max, "spec change → cloud update call (ms)", (v) => `${Math.round(v)}`);
  keys.forEach((k, gi) => {
    const gx = M.left + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach((s, si) => {
      const v = s.values[k];
      const x = gx + si * barW;
      body.push(
        `<rect x="${x + 2}" y="${y(v)}" width="${barW - 4}" height="${M.top + plotH - y(v)}" fill="${COLORS[si % COLORS.length]}"/>`,
        `<text x="${x + barW / 2}" y="${y(v) - 4}" text-anchor="middle" fill="#111827">${Math.round(v)}</text>`,
      );
    });
    body.push(
      `<text x="${M.left + gi * groupW + groupW / 2}" y="${H - M.bottom + 18}" text-anchor="middle" fill="#111827">${k}</text>`,
    );
  });
  series.forEach((s, si) => {
    body.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${y(s.targetMs)}" y2="${y(s.targetMs)}" stroke="${COLORS[si % COLORS.length]}" stroke-dasharray="6 4"/>`,
      `<text x="${W - M.right - 4}" y="${y(s.targetMs) - 4}" text-anchor="end" fill="${COLORS[si % COLORS.length]}">${esc(`${s.name} p99 target ${s.targetMs} ms`)}</text>`,
    );
    const lx = M.left + si * 200;
    body.push(
      `<rect x="${lx}" y="${H - 22}" width="12" height="12" fill="${COLORS[si % COLORS.length]}"/>`,
      `<text x="${lx + 18}" y="${H - 12}" fill="#111827">${esc(s.name)}</text>`,
    );
  });
  body.push(`<text x="${W / 2}" y="40" text-anchor="middle" fill="#6b7280">${esc(subtitle)}</text>`);
  return frame("Latency: spec change → cloud update", body);
}

export interface RssSeries {
  name: string;
  dashed?: boolean;
  color?: string;
  /** Which side of a point its value is written on (series that share x values use both). */
  labelSide?: "left" | "right";
  points: Array<{ resources: number; mb: number; min?: number; max?: number }>;
}

/** Lines of RSS against resources, with min–max whiskers and a dashed target line. */
export function rssChart(series: readonly RssSeries[], targetMb: number, note: string): string {
  const xs = series.flatMap((s) => s.points.map((p) => p.resources));
  const xMax = niceMax(Math.max(...xs) * 1.05);
  const yMax = niceMax(
    Math.max(targetMb, ...series.flatMap((s) => s.points.map((p) => p.max ?? p.mb))) * 1.1,
  );
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const x = (v: number) => M.left + (plotW * v) / xMax;
  const y = (v: number) => M.top + plotH - (plotH * v) / yMax;
  const body = yAxis(yMax, "RSS (MB)", (v) => `${Math.round(v)}`);
  for (let i = 0; i <= 5; i++) {
    const v = (xMax * i) / 5;
    body.push(
      `<text x="${x(v)}" y="${H - M.bottom + 18}" text-anchor="middle" fill="#374151">${v >= 1000 ? `${v / 1000}k` : v}</text>`,
    );
  }
  body.push(
    `<text x="${M.left + plotW / 2}" y="${H - M.bottom + 36}" text-anchor="middle" fill="#374151">managed resources (forwarder) / reconciles handled (worker)</text>`,
  );
  body.push(
    `<line x1="${M.left}" x2="${W - M.right}" y1="${y(targetMb)}" y2="${y(targetMb)}" stroke="#ef4444" stroke-dasharray="6 4"/>`,
    `<text x="${W - M.right - 4}" y="${y(targetMb) + 14}" text-anchor="end" fill="#ef4444">${esc(`forwarder target ${targetMb} MB`)}</text>`,
  );
  let legendX = M.left;
  series.forEach((s, si) => {
    const c = s.color ?? COLORS[si % COLORS.length];
    const pts = [...s.points].sort((a, b) => a.resources - b.resources);
    body.push(
      `<polyline fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ""} points="${pts.map((p) => `${x(p.resources)},${y(p.mb)}`).join(" ")}"/>`,
    );
    for (const p of pts) {
      if (p.min !== undefined && p.max !== undefined)
        body.push(
          `<line x1="${x(p.resources)}" x2="${x(p.resources)}" y1="${y(p.min)}" y2="${y(p.max)}" stroke="${c}"/>`,
        );
      // Dashed (live heap) labels go below their point, solid (RSS) ones above: they do not collide.
      const ly = s.dashed ? y(p.mb) + 16 : y(p.mb) - 6;
      body.push(
        `<circle cx="${x(p.resources)}" cy="${y(p.mb)}" r="4" fill="${c}"/>`,
        s.labelSide === "left"
          ? `<text x="${x(p.resources) - 6}" y="${ly}" text-anchor="end" fill="${c}">${p.mb.toFixed(0)}</text>`
          : `<text x="${x(p.resources) + 6}" y="${ly}" fill="${c}">${p.mb.toFixed(0)}</text>`,
      );
    }
    const lx = legendX;
    legendX += 30 + s.name.length * 7;
    body.push(
      `<line x1="${lx}" x2="${lx + 14}" y1="${H - 10}" y2="${H - 10}" stroke="${c}" stroke-width="3"${s.dashed ? ' stroke-dasharray="4 3"' : ""}/>`,
      `<text x="${lx + 18}" y="${H - 6}" fill="#111827">${esc(s.name)}</text>`,
    );
  });
  body.push(`<text x="${W / 2}" y="40" text-anchor="middle" fill="#6b7280">${esc(note)}</text>`);
  return frame("Memory (RSS) against scale", body);
}
