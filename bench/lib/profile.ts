// Where the reconcile function's CPU goes: V8's sampling profiler run around each measured invocation only
// (not the sweep, the setup or the cloud's stand-in, which has a thread of its own), self time summed over
// every invocation by function and by part (a file of ours, a package, Node's own code, GC). The bench's
// `--profile DIR` (section 17): a profiled run's CPU figures carry the sampler's own cost, so the figures
// compared before and after come from runs without it.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The part a frame's file belongs to: a file of ours, a package, Node's own code. */
export function partOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  const ours = url.match(/\/(shared|functions|bench)\/.*$/);
  return ours ? (ours[0].slice(1) ?? url) : url;
}

export class InvocationProfiler {
  readonly #session = new Session();
  readonly #byFunction = new Map<string, number>();
  readonly #byPart = new Map<string, number>();
  /** Each sample charged to the nearest frame of ours or of a package, from the leaf up (Node's code and
   * natives go to whoever called them; a sample with neither is the event loop's: sockets, parsers, timers). */
  readonly #byOwner = new Map<string, number>();
  #totalMs = 0;
  #profiles = 0;

  async open(): Promise<void> {
    this.#session.connect();
    await this.#session.post("Profiler.enable");
    await this.#session.post("Profiler.setSamplingInterval", { interval: 100 });
  }

  start(): Promise<void> {
    return this.#session.post("Profiler.start");
  }

  async stop(): Promise<void> {
    const { profile } = (await this.#session.post("Profiler.stop")) as { profile: CpuProfile };
    this.#profiles++;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const ownerOf = (id: number): string => {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = byId.get(at)?.callFrame;
        if (!f || f.url === "" || f.url.startsWith("node:")) continue;
        return partOf(f.url, f.functionName);
      }
      const leaf = byId.get(id)?.callFrame;
      return leaf?.url === "" && leaf.functionName.startsWith("(")
        ? leaf.functionName
        : "(event loop: Node's own)";
    };
    profile.samples.forEach((id, i) => {
      const n = byId.get(id);
      const delta = (profile.timeDeltas[i] ?? 0) / 1000;
      // Idle: V8 marks it "(idle)" or, with the sampler started from this thread's session, leaves the
      // waiting loop on the session's own frame.
      if (!n || n.callFrame.functionName === "(idle)" || n.callFrame.url === "node:inspector") return;
      const { functionName, url, lineNumber } = n.callFrame;
      const part = partOf(url, functionName);
      const fn = `${functionName || "(anonymous)"} ${part}:${lineNumber + 1}`;
      this.#byFunction.set(fn, (this.#byFunction.get(fn) ?? 0) + delta);
      this.#byPart.set(part, (this.#byPart.get(part) ?? 0) + delta);
      const owner = ownerOf(id);
      this.#byOwner.set(owner, (this.#byOwner.get(owner) ?? 0) + delta);
      this.#totalMs += delta;
    });
  }

  /** Self time (ms, not idle) by function and by part, largest first; per checked resource with `checked`. */
  summary(checked: number) {
    const rows = (m: Map<string, number>, top: number) =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, msTotal]) => ({
          name,
          ms: Math.round(msTotal * 10) / 10,
          share: Math.round((1000 * msTotal) / Math.max(1e-9, this.#totalMs)) / 10,
          usPerResource: Math.round((1000 * msTotal) / Math.max(1, checked)),
        }));
    return {
      profiles: this.#profiles,
      checked,
      sampledMs: Math.round(this.#totalMs),
      byOwner: rows(this.#byOwner, 40),
      byPart: rows(this.#byPart, 40),
      byFunction: rows(this.#byFunction, 400),
    };
  }

  write(dir: string, name: string, checked: number) {
    mkdirSync(dir, { recursive: true });
    const s = this.summary(checked);
    writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(s, null, 2)}\n`);
    return s;
  }

  close() {
    this.#session.disconnect();
  }
}
