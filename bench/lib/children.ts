// Measurements that need a process of their own, so the memory they report is theirs alone: the
// forwarder bundle as deployed (`node dist/forwarder.mjs`), and a Lambda reconcile container.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return Number(m?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

export interface ForwarderRss {
  /** RSS after the initial list was forwarded (highest sample over `settleMs`), MB. */
  rssMb: number;
  /** High-water mark over the process's life (VmHWM), MB. */
  peakMb: number;
  /** Live heap after a full GC at the end (what the process keeps; the rest is code and free heap), MB. */
  liveHeapMb: number;
  /** From spawn to the managed kind's initial list being done, ms. */
  syncMs: number;
  keys: number;
}

/**
 * Preloaded into measured children (`--import`): on SIGUSR2 it runs a full GC and prints the heap it
 * keeps. It loads nothing but node:process; the RSS samples are taken before it runs.
 */
export const HEAP_PROBE = [
  'import process from "node:process";',
  'process.on("SIGUSR2", () => {',
  "  globalThis.gc?.();",
  '  process.stderr.write("HEAP " + JSON.stringify(process.memoryUsage()) + "\\n");',
  "});",
  "",
].join("\n");

const heapLine = (stderr: string) => {
  const line = stderr.split("\n").find((l) => l.startsWith("HEAP "));
  return line ? (JSON.parse(line.slice(5)) as NodeJS.MemoryUsage) : undefined;
};

/**
 * Starts the forwarder bundle, waits for its initial list of the Queue kind to report `expectKeys` keys,
 * lets it send them for `settleMs`, samples its RSS meanwhile, then stops it with SIGTERM.
 */
export function measureForwarder(o: {
  bundle: string;
  /** The HEAP_PROBE module's path. */
  probe: string;
  /** Node options before the bundle (those NODE_OPTIONS does not accept). */
  nodeArgs?: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Keys the Queue kind's initial list must report; 0: wait for the list of any kind. */
  expectKeys: number;
  settleMs: number;
  timeoutMs: number;
}): Promise<ForwarderRss> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const args = [...(o.nodeArgs ?? []), "--expose-gc", "--import", o.probe, o.bundle];
    const child = spawn(process.execPath, args, {
      env: o.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let settled = false;
    let sampling = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(e);
    };
    const timer = setTimeout(
      () =>
        fail(
          new Error(
            `forwarder did not list ${o.expectKeys} keys in ${o.timeoutMs} ms:\n${err}${out.slice(-2000)}`,
          ),
        ),
      o.timeoutMs,
    );
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (code) =>
      fail(new Error(`forwarder exited early (${code}):\n${err}${out.slice(-2000)}`)),
    );
    let buffered = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        let rec: { msg?: string; kind?: string; keys?: number };
        try {
          rec = JSON.parse(line) as typeof rec;
        } catch {
          continue;
        }
        if (rec.msg !== "listed" || rec.kind !== "Queue" || settled || sampling) continue;
        if ((rec.keys ?? 0) < o.expectKeys) continue;
        sampling = true;
        const syncMs = Date.now() - started;
        const keys = rec.keys ?? 0;
        const pid = child.pid ?? 0;
        const samples: number[] = [];
        const sampler = setInterval(() => samples.push(statusKb(pid, "VmRSS")), 200);
        setTimeout(() => {
          clearInterval(sampler);
          samples.push(statusKb(pid, "VmRSS"));
          const peakKb = statusKb(pid, "VmHWM");
          child.kill("SIGUSR2");
          setTimeout(() => {
            settled = true;
            clearTimeout(timer);
            child.removeAllListeners("exit");
            const heap = heapLine(err);
            // No graceful stop: its shutdown (sending what is pending) is not what is measured.
            child.once("exit", () =>
              resolve({
                rssMb: Math.max(...samples.filter(Number.isFinite)) / 1024,
                peakMb: peakKb / 1024,
                liveHeapMb: heap ? heap.heapUsed / 1024 / 1024 : Number.NaN,
                syncMs,
                keys,
              }),
            );
            child.kill("SIGKILL");
          }, 500);
        }, o.settleMs);
      }
    });
  });
}

export interface WorkerRun {
  reconciles: number;
  wallMs: number;
  invocationMs: number[];
  outcomes: Record<string, number>;
  rssKb: number;
  peakRssKb: number;
  heapUsedBytes: number;
  /** After a full GC at the end (the child runs with --expose-gc). */
  liveHeapBytes: number;
  externalCalls: Record<string, number>;
  kube: { gets: number; lists: number; writes: number };
}

/** Runs the worker bundle over `reconciles` keys from `namesFile`; returns its report. */
export function runWorker(o: {
  bundle: string;
  env: NodeJS.ProcessEnv;
  namesFile: string;
  reconciles: number;
  timeoutMs: number;
}): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", o.bundle], {
      env: { ...o.env, BENCH_NAMES_FILE: o.namesFile, BENCH_RECONCILES: String(o.reconciles) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      const last = out.trim().split("\n").at(-1) ?? "";
      try {
        resolve(JSON.parse(last) as WorkerRun);
      } catch {
        reject(new Error(`worker child failed (${code}):\n${err.slice(-2000)}${out.slice(-1000)}`));
      }
    });
  });
}
