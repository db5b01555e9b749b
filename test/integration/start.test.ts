// `npm start --once` (infra/local/start.ts) on the shared test stack: it applies every example in
// examples/, runs `driftless run` limited by DRIFTLESS_LABEL_SELECTOR to the objects carrying the example
// label (other suites' objects are left alone), and exits 0 once every example is Ready. The examples have
// fixed names, so afterwards they are deleted through the engine (a brief `driftless run` on the same
// selector deletes the cloud resources and releases the finalizers).
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT, STACK_DIR } from "../../infra/local/stack.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import { allCrds } from "../../shared/crds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { newKube, sleep } from "../support/env.ts";
import { testBundle } from "../support/test-bundles.ts";

const EXAMPLE_LABEL = "driftless.dev/example";
const SELECTOR = `${EXAMPLE_LABEL}=true`;
const kube = newKube();
const children: ChildProcess[] = [];

interface Example {
  def: ManagedKindDef;
  name: string;
  namespace?: string;
  labels: Record<string, string>;
}

/** The managed resources in examples/*.yaml: what `npm start` applies. */
function examples(): Example[] {
  const dir = join(REPO_ROOT, "examples");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS()))
    .flatMap(
      (
        o: {
          apiVersion?: string;
          kind?: string;
          metadata?: { name: string; namespace?: string; labels?: Record<string, string> };
        } | null,
      ) => {
        const def = managedKinds.find(
          (k) => k.definition.apiVersion === o?.apiVersion && k.definition.kind === o?.kind,
        )?.definition;
        return def && o?.metadata
          ? [
              {
                def,
                name: o.metadata.name,
                ...(def.namespaced && o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
                labels: o.metadata.labels ?? {},
              },
            ]
          : [];
      },
    );
}

/** Spawns a Node 22 child with the stack's environment; collects its output. */
function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, DRIFTLESS_METRICS_PORT: "0", DRIFTLESS_KEEP_STACK: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const out = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out.stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    out.stderr += d;
  });
  const exit = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
  return { child, out, exit };
}

/** Stops a child (SIGTERM, then SIGKILL after 20 s) and waits until it has exited. */
async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  await exited;
  clearTimeout(timer);
}

const present = async (list: readonly Example[]) =>
  (
    await Promise.all(list.map(async (e) => ((await kube.get(e.def, e.name, e.namespace)) ? [e] : [])))
  ).flat();

afterAll(async () => {
  for (const c of children) await stop(c);
  // Delete the examples through the engine: `driftless run` on the example label, until all are gone.
  const list = examples();
  if ((await present(list)).length === 0) return;
  for (const e of list) await kube.delete(e.def, e.name, e.namespace);
  const run = start([testBundle("cli"), "run", "--no-crds", "--no-metrics"], {
    DRIFTLESS_LABEL_SELECTOR: SELECTOR,
    DRIFTLESS_SWEEP_INTERVAL: "10s",
    LOG_LEVEL: "warn",
  });
  try {
    const deadline = Date.now() + 150_000;
    let left = await present(list);
    while (left.length > 0 && Date.now() < deadline) {
      await sleep(1000);
      left = await present(list);
    }
    expect(left.map((e) => `${e.def.kind}/${e.name}`)).toEqual([]);
  } finally {
    await stop(run.child);
  }
}, 200_000);

describe("npm start --once", () => {
  it("labels every example, so a label-selected `driftless run` serves them all", () => {
    const list = examples();
    expect(list.length).toBeGreaterThan(10);
    expect(list.filter((e) => e.labels[EXAMPLE_LABEL] !== "true").map((e) => e.name)).toEqual([]);
  });

  it("applies the examples and exits 0 when every one is Ready", async () => {
    // Act
    const { out, exit } = start(["infra/local/start.ts", "--once"], {
      DRIFTLESS_LABEL_SELECTOR: SELECTOR,
      DRIFTLESS_START_TIMEOUT_MS: "220000",
    });
    const code = await exit;

    // Assess
    expect({ code, stderr: code === 0 ? "" : out.stderr + out.stdout }).toEqual({ code: 0, stderr: "" });
    expect(out.stdout).toContain(`objects matching ${SELECTOR}`);
    expect(out.stdout).toMatch(
      new RegExp(`^all ${examples().length} example resources are Ready after `, "m"),
    );
    // The CRDs the examples need first; every other one written once the examples are Ready, before the exit.
    const batches =
      /^(\d+) CRDs \(the ProviderConfigs' and the examples' kinds\) written in [\d.]+ s; the other (\d+) go in once the examples are Ready\.$/m.exec(
        out.stdout,
      );
    expect(Number(batches?.[1]) + Number(batches?.[2])).toBe(allCrds().length);
    const ready = out.stdout.search(/^all \d+ example resources are Ready/m);
    const rest = out.stdout.search(new RegExp(`^the other ${batches?.[2]} CRDs written in `, "m"));
    expect({ ready: ready >= 0, rest: rest >= 0, restAfterReady: rest > ready }).toEqual({
      ready: true,
      rest: true,
      restAfterReady: true,
    });
    const timeline = JSON.parse(readFileSync(join(STACK_DIR, "logs", "start-timeline.json"), "utf8")) as {
      phases: Record<string, string | undefined>;
      examples: { ready?: string }[];
    };
    const lastReady = Math.max(...timeline.examples.map((e) => Date.parse(e.ready ?? "")));
    expect(Date.parse(timeline.phases.laterCrdsStarted ?? "")).toBeGreaterThanOrEqual(lastReady);
  }, 240_000);
});
