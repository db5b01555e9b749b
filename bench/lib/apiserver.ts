// Reading a kube-apiserver the benchmark started: its CPU time (/proc), when it has gone quiet, one value of
// its /metrics, and CRDs to load it with.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { sleep } from "./stats.ts";

/** utime + stime, in clock ticks, from the text of /proc/<pid>/stat (the command may hold spaces and parens). */
export function parseCpuTicks(stat: string): number {
  // Fields after the command's closing paren start at field 3 (state); utime and stime are fields 14 and 15.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]);
}

/** The unlabelled sample of `metric` in a Prometheus text exposition. */
export function promValue(text: string, metric: string): number {
  const m = new RegExp(`^${metric} ([0-9.eE+-]+)$`, "m").exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/** `count` copies of `crd`, each in a fake group of its own (names and kinds only clash within a group). */
export function syntheticCrds<
  C extends { metadata: { name: string }; spec: { group: string; names: { plural: string } } },
>(crd: C, count: number): C[] {
  return Array.from({ length: count }, (_, i) => {
    const copy = structuredClone(crd);
    const group = `s${i}.synthetic.bench.driftless.dev`;
    copy.spec.group = group;
    copy.metadata.name = `${copy.spec.names.plural}.${group}`;
    delete (copy.spec.names as { shortNames?: string[] }).shortNames;
    return copy;
  });
}

const TICKS_PER_S = 100; // USER_HZ on Linux

/**
 * Waits until `pid` has used less than `maxCpu` of one core over `quietMs` (its asynchronous work after a
 * change — OpenAPI, discovery — is done); returns the time it took, or the timeout.
 */
export async function waitUntilQuiet(
  pid: number,
  o: { maxCpu: number; quietMs: number; timeoutMs: number },
): Promise<number> {
  const started = performance.now();
  const ticks = () => parseCpuTicks(readFileSync(`/proc/${pid}/stat`, "utf8"));
  for (;;) {
    const before = ticks();
    const t = performance.now();
    await sleep(o.quietMs);
    const cpu = (ticks() - before) / TICKS_PER_S / ((performance.now() - t) / 1000);
    const elapsed = performance.now() - started;
    if (cpu < o.maxCpu || elapsed >= o.timeoutMs) return elapsed;
  }
}

/** GET on an API server with a bearer token and its CA (the body as text; anything but 200 fails). */
export function getText(server: string, urlPath: string, auth: { token: string; caFile: string }) {
  return new Promise<string>((resolve, reject) => {
    const req = request(
      `${server}${urlPath}`,
      {
        ca: readFileSync(auth.caFile),
        headers: { authorization: `Bearer ${auth.token}` },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString())
            : reject(new Error(`GET ${urlPath}: HTTP ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error(`GET ${urlPath}: timed out`)));
    req.end();
  });
}
