// `npm start`: the local demo. Brings up the stack, installs CRDs and local ProviderConfigs, runs
// `driftless run`, applies the example managed resources (each as soon as the examples it refers to are
// Ready, seen through one watch per kind), and shows a live table, with what each row waits for, until every
// resource is Ready. Ctrl-C
// stops everything this command started and exits 0. `--once` exits when all are Ready (for tests).
// DRIFTLESS_LABEL_SELECTOR (e.g. driftless.dev/example=true, the label every example carries) is handed
// to `driftless run`, so on a cluster shared with other work it reconciles the examples only.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig, type V1Secret } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { allCrds } from "../../shared/crds.ts";
import { isConflict, Kube, type KubeObject } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { waitForCrds, writeCrds } from "../../shared/kube/crds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { sleep } from "../../shared/queue/backoff.ts";
import { localProviderConfigCrds, localProviderConfigs } from "./provider-configs.ts";
import { down, REPO_ROOT, STACK_DIR, type StackEnv, up } from "./stack.ts";

const once = process.argv.includes("--once");
// Counted from the CRDs written (the examples go in while the API server establishes them): 180 s after the
// CRDs were served before, plus the up to a minute a loaded API server takes to establish them.
const timeoutMs = Number(process.env.DRIFTLESS_START_TIMEOUT_MS ?? 240_000);
const tty = process.stdout.isTTY && !once;
const selector = process.env.DRIFTLESS_LABEL_SELECTOR || undefined;

/** One example document, what it refers to among the other examples, and whether it is applied yet. */
interface Example {
  obj: ManagedResource;
  def: ManagedKindDef;
  namespace: string | undefined;
  /** Examples it refers to (kind/name, same namespace when namespaced): applied once these are Ready. */
  needs: { kind: string; name: string; namespace: string | undefined }[];
  applied: boolean;
  /** An apply is in flight (examples are applied concurrently, each once). */
  applying?: boolean;
  /** When it was applied and when first seen Ready (ms since epoch): the TIMES column, the critical path. */
  appliedAt?: number;
  readyAt?: number;
  /** The object as the watch last showed it. */
  mr?: ManagedResource;
  /** Its connection Secret as last read, and when. */
  secret?: { value: V1Secret | undefined; at: number };
}

function readExamples(): Example[] {
  const list: Example[] = [];
  const dir = join(REPO_ROOT, "examples");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), "utf8"))) {
      const obj = doc.toJS() as ManagedResource | null;
      if (!obj) continue;
      const def = managedKinds.find(
        (k) => k.definition.apiVersion === obj.apiVersion && k.definition.kind === obj.kind,
      )?.definition;
      if (!def) continue;
      const namespace = def.namespaced ? obj.metadata.namespace : undefined;
      const fp = (obj.spec.forProvider ?? {}) as Record<string, unknown>;
      const needs = def.references.flatMap((ref) => {
        const value = fp[ref.refField] as { name?: string } | { name?: string }[] | undefined;
        const refs = Array.isArray(value) ? value : value ? [value] : [];
        return refs.flatMap((r) =>
          r.name
            ? [{ kind: ref.to.kind, name: r.name, namespace: ref.to.namespaced ? namespace : undefined }]
            : [],
        );
      });
      list.push({ obj, def, namespace, needs, applied: false });
    }
  }
  // Only examples gate examples: a reference to something outside examples/ is the engine's to wait for.
  for (const e of list)
    e.needs = e.needs.filter((n) =>
      list.some(
        (o) => o.def.kind === n.kind && o.obj.metadata.name === n.name && o.namespace === n.namespace,
      ),
    );
  return list;
}

const keyOf = (kind: string, name: string, namespace: string | undefined) =>
  `${kind}/${namespace ? `${namespace}/` : ""}${name}`;

/**
 * Applies one example (create, or patch spec and labels when it exists). Examples are applied as what
 * they refer to becomes Ready, as a person would: a dependent applied too early only waits in error
 * backoff (up to a minute) for its reference, which made the demo wait on backoff, not on the clouds.
 */
async function applyExample(kube: Kube, e: Example): Promise<void> {
  const { obj, def, namespace } = e;
  if (namespace) await ensureNamespace(kube, namespace);
  try {
    await kube.create(def, obj as unknown as KubeObject);
  } catch (err) {
    if (!isConflict(err)) throw err;
    // Labels too: an example applied by an older version gains the example label.
    await kube.patch(
      def,
      obj.metadata.name,
      { metadata: { labels: obj.metadata.labels ?? {} }, spec: obj.spec },
      { namespace },
    );
  }
  e.applied = true;
  e.appliedAt = Date.now();
}

async function ensureNamespace(kube: Kube, name: string) {
  try {
    await coreApi(kube).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

function render(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("   ")
        .trimEnd(),
    )
    .join("\n");
}

/** A promise with its resolve, and whether it has resolved. */
function deferred(): { promise: Promise<void>; resolve: () => void; done: boolean } {
  const d = { promise: Promise.resolve(), resolve: () => {}, done: false };
  d.promise = new Promise<void>((r) => {
    d.resolve = () => {
      d.done = true;
      r();
    };
  });
  return d;
}

/** How often a Ready row's connection Secret is read again while the table is shown. */
const SECRET_REFRESH_MS = 5_000;
/** Attempts at writing the local ProviderConfigs before npm start gives up. */
const CONFIG_ATTEMPTS = 3;
/** How often the live table is drawn (a terminal, not --once). */
const TABLE_REDRAW_MS = 500;

const isReady = (mr: ManagedResource | undefined) =>
  ["Ready", "Synced"].every((t) => mr?.status?.conditions?.find((x) => x.type === t)?.status === "True");

/** The examples applied and Ready now (as the watches last showed them). */
const readyNow = (examples: Example[]) =>
  new Set(
    examples
      .filter((e) => e.applied && isReady(e.mr))
      .map((e) => keyOf(e.def.kind, e.obj.metadata.name, e.namespace)),
  );

/** One row per example; MESSAGE says what a not-yet-Ready one waits for. Reads only connection Secrets. */
async function table(kube: Kube, examples: Example[], t0: number, cloudsUp = true): Promise<string> {
  const rows = [
    ["KIND", "NAME", "READY", "SYNCED", "APPLIED→READY", "EXTERNAL-NAME", "SECRET", "WAITING FOR / MESSAGE"],
  ];
  const at = (t: number | undefined) => (t === undefined ? "" : `${((t - t0) / 1000).toFixed(1)}`);
  const ready = readyNow(examples);
  const now = Date.now();
  const observed = await Promise.all(
    examples.map(async (e) => {
      // A namespaced object's connection Secret is in its own namespace.
      const to = e.obj.spec.writeConnectionSecretToRef;
      const ref = to ? { name: to.name, namespace: e.namespace ?? to.namespace } : undefined;
      // Published with Ready: read once the row is Ready, and now and then after.
      if (ref && isReady(e.mr) && !(e.secret?.value && now - e.secret.at < SECRET_REFRESH_MS))
        e.secret = { value: await kube.getSecret(ref.namespace, ref.name), at: now };
      return { e, mr: e.mr, ref, secret: e.secret?.value };
    }),
  );
  for (const { e, mr, ref, secret } of observed) {
    const key = keyOf(e.def.kind, e.obj.metadata.name, e.namespace);
    const c = (t: string) => mr?.status?.conditions?.find((x) => x.type === t);
    rows.push([
      e.def.namespaced ? `${e.def.kind}.${e.def.group.split(".")[0]}.m` : e.def.kind,
      e.namespace ? `${e.namespace}/${e.obj.metadata.name}` : e.obj.metadata.name,
      c("Ready")?.status ?? "-",
      c("Synced")?.status ?? "-",
      e.appliedAt === undefined ? "" : `${at(e.appliedAt)}→${at(e.readyAt)} s`,
      mr?.metadata.annotations?.[Annotations.externalName] ?? "",
      ref
        ? secret
          ? `${ref.namespace}/${ref.name} (${Object.keys(secret.data ?? {}).join(",")})`
          : "pending"
        : "",
      ready.has(key) ? "" : waitingFor(e, mr, ready, cloudsUp),
    ]);
  }
  return render(rows);
}

/**
 * Follows the examples' objects with one watch per kind until `signal` aborts: each event updates its row at
 * once (a Ready dependency releases the next example without polling, and the API server is not asked for
 * every object every round). A watch that ends or fails is opened again; with no resourceVersion it starts
 * with the objects as they are.
 */
function followExamples(
  kube: Kube,
  examples: Example[],
  served: (def: ManagedKindDef) => Promise<void>,
  changed: () => void,
  signal: AbortSignal,
): void {
  const kinds = new Map(examples.map((e) => [`${e.def.plural}.${e.def.group}`, e.def]));
  for (const def of kinds.values()) {
    const onEvent = (type: string, obj: ManagedResource) => {
      if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") return;
      const ns = def.namespaced ? obj.metadata.namespace : undefined;
      const e = examples.find(
        (x) => x.def === def && x.obj.metadata.name === obj.metadata.name && x.namespace === ns,
      );
      if (!e) return;
      e.mr = type === "DELETED" ? undefined : obj;
      if (e.applied && isReady(e.mr)) e.readyAt ??= Date.now();
      changed();
    };
    void (async () => {
      await served(def);
      while (!signal.aborted) {
        try {
          const open = await kube.watch<ManagedResource>(def, { timeoutSeconds: 60 }, onEvent, signal);
          await open.ended;
        } catch {
          // The API server busy or restarting: the next watch starts from the objects as they are.
          await sleep(500, signal);
        }
      }
    })();
  }
}

/** What a row that is not Ready yet is waiting for, in a newcomer's words. */
function waitingFor(
  e: Example,
  mr: ManagedResource | undefined,
  ready: Set<string>,
  cloudsUp: boolean,
): string {
  if (!e.applied && !cloudsUp)
    return "not applied yet: waits for the local clouds (emulators and fakes) to answer";
  if (!e.applied) {
    const missing = e.needs.map((n) => keyOf(n.kind, n.name, n.namespace)).filter((k) => !ready.has(k));
    return `not applied yet: waits for ${missing.join(", ")} to be Ready`;
  }
  const c = (t: string) => mr?.status?.conditions?.find((x) => x.type === t);
  const synced = c("Synced");
  const readyCond = c("Ready");
  if (!synced && !readyCond) return "applied; waiting for its first reconcile";
  if (synced?.status === "False") return synced.message ?? synced.reason;
  if (readyCond && readyCond.status !== "True")
    return `${readyCond.reason}${readyCond.message ? `: ${readyCond.message}` : ""} (the cloud is still working on it)`;
  return "";
}

/**
 * Where the time went, for whoever asks why a start was slow: each phase's end and each example's applied
 * and Ready times (ISO), in .stack/logs/start-timeline.json, beside the stack's and driftless run's logs.
 */
function writeTimeline(phases: Record<string, number | undefined>, examples: Example[]): void {
  const iso = (t: number | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
  const timeline = {
    phases: Object.fromEntries(Object.entries(phases).map(([k, t]) => [k, iso(t)])),
    examples: examples.map((e) => ({
      key: keyOf(e.def.kind, e.obj.metadata.name, e.namespace),
      needs: e.needs.map((n) => keyOf(n.kind, n.name, n.namespace)),
      applied: iso(e.appliedAt),
      ready: iso(e.readyAt),
    })),
  };
  writeFileSync(join(STACK_DIR, "logs", "start-timeline.json"), `${JSON.stringify(timeline, null, 2)}\n`);
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const seconds = (since: number) => secs(Date.now() - since);

async function main() {
  const tStart = Date.now();
  // Every watch event, every CRD served and the clouds coming up wake the loop below; it also looks every second.
  let wake = () => {};
  // Back as soon as the kube-apiserver answers: the CRDs and driftless run's start (loading every kind's
  // SDK) overlap the emulators' and fakes' start; what talks to a cloud waits for `clouds` below.
  const stack = await up({ early: true });
  started = stack.started;
  const env = stack.env;
  if (stopping) return;
  const tStack = Date.now();
  let tClouds: number | undefined;
  let cloudsFailed: Error | undefined;
  const clouds = stack.clouds.then(() => {
    tClouds = Date.now();
    wake();
  });
  clouds.catch((err: unknown) => {
    cloudsFailed = err as Error;
    wake();
  });
  const kc = new KubeConfig();
  kc.loadFromFile(env.KUBECONFIG ?? "");
  const kube = new Kube(kc);
  // driftless run starts now, while the CRDs are installed: its start-up (loading every kind's SDK) overlaps
  // the API server's work, and with --no-crds it waits for the CRDs it serves to be established.
  const logFile = join(STACK_DIR, "logs", "driftless-run.log");
  const args = ["run", "--no-crds", ...(selector ? ["--selector", selector] : [])];
  child = spawn(process.execPath, [join(REPO_ROOT, "functions/cli/main.ts"), ...args], {
    env: {
      ...process.env,
      ...(env as StackEnv),
      DRIFTLESS_SWEEP_INTERVAL: "30s",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    },
    stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
  });
  child.once("exit", (code) => {
    if (!stopping) {
      process.stderr.write(`driftless run exited with ${code}; see ${logFile}\n`);
      void stop(1, "driftless run exited");
    }
  });
  process.stdout.write(
    `driftless run started (pid ${child.pid}${selector ? `, objects matching ${selector}` : ""}); logs: ${logFile}\n` +
      "installing CRDs and local ProviderConfigs …\n",
  );
  const examples = readExamples();
  const crdOf = (def: ManagedKindDef) => `${def.plural}.${def.group}`;
  // What the examples need first: the ProviderConfigs' CRDs, then the examples' kinds (the API server
  // establishes CRDs in about the order they are written). The others (the other shape of each kind, the
  // claims, classes, Usages …) go in once every example is Ready: establishing CRDs is most of the API
  // server's work in this phase, and the examples would wait for it on two cores.
  const rank = (name: string) =>
    localProviderConfigCrds().includes(name) ? 0 : examples.some((e) => crdOf(e.def) === name) ? 1 : 2;
  const crds = allCrds().sort((a, b) => rank(a.metadata.name) - rank(b.metadata.name));
  const first = crds.filter((c) => rank(c.metadata.name) < 2);
  const later = crds.filter((c) => rank(c.metadata.name) === 2);
  const served = new Map(crds.map((c) => [c.metadata.name, deferred()]));
  /** Writes `list` and resolves (with the time) once the API server serves all of them. */
  const install = (list: typeof crds) => {
    // A busy machine's API server can take over a minute to serve 70 new CRDs; the default 30 s is for tests.
    const established = waitForCrds(
      kube,
      list.map((c) => c.metadata.name),
      120_000,
      (name) => {
        served.get(name)?.resolve();
        wake();
      },
    ).then((missing) => {
      if (missing.length > 0) throw new Error(`CRD ${missing[0]} not established after 120 s`);
      return Date.now();
    });
    established.catch(() => undefined); // awaited later; not an unhandled rejection meanwhile
    return { established, written: writeCrds(kube, list).then(() => Date.now()) };
  };
  const firstInstall = install(first);
  const tWritten = await firstInstall.written;
  // The ProviderConfigs go in as soon as their own CRDs are served, while the API server establishes the rest.
  // Their credential checks call the clouds: once those answer.
  const configs = Promise.all([clouds, ...localProviderConfigCrds().map((n) => served.get(n)?.promise)]).then(
    async () => {
      // A loaded machine's API server can miss an answer (30 s) while it establishes CRDs: say so, try again.
      for (let attempt = 1; ; attempt++) {
        try {
          await localProviderConfigs(kube, env);
          return Date.now();
        } catch (err) {
          if (stopping || attempt >= CONFIG_ATTEMPTS) throw err;
          process.stdout.write(`(retrying the local ProviderConfigs: ${(err as Error).message})\n`);
        }
      }
    },
  );
  configs.catch(() => undefined);
  let tCrds: number | undefined;
  let tConfigs: number | undefined;
  let crdLine = "";
  const crdsDone = Promise.all([firstInstall.established, configs]).then(([crdsAt, configsAt]) => {
    tCrds = crdsAt;
    tConfigs = Math.max(crdsAt, configsAt);
    crdLine =
      `${first.length} CRDs installed in ${secs(tCrds - tStack)} (written ${secs(tWritten - tStack)}, ` +
      `established ${secs(tCrds - tWritten)}); ProviderConfigs done ${secs(tConfigs - tCrds)} later`;
    if (!tty) process.stdout.write(`${crdLine}\n`);
  });
  let crdsFailed: Error | undefined;
  crdsDone.catch((err: unknown) => {
    crdsFailed = err as Error;
    wake();
  });
  if (stopping) return;
  process.stdout.write(
    `${first.length} CRDs (the ProviderConfigs' and the examples' kinds) written in ${secs(tWritten - tStack)}; ` +
      `the other ${later.length} go in once the examples are Ready.\n` +
      "Applying examples/ — each one as soon as its CRD is served and what it refers to is Ready\n\n",
  );
  let laterInstall: ReturnType<typeof install> | undefined;
  let tLaterStart: number | undefined;
  let tLater: number | undefined;
  /** The other CRDs, once: written after the examples are Ready; resolves when they are served. */
  const installLater = () => {
    if (!laterInstall) {
      tLaterStart = Date.now();
      laterInstall = install(later);
      laterInstall.established.then(
        (t) => {
          tLater = t;
        },
        () => undefined,
      );
    }
    return laterInstall;
  };

  const phases = () => ({
    start: tStart,
    stack: tStack,
    clouds: tClouds,
    crdsWritten: tWritten,
    crds: tCrds,
    providerConfigs: tConfigs,
    laterCrdsStarted: tLaterStart,
    laterCrds: tLater,
    now: Date.now(),
  });
  const t0 = tWritten;
  const follow = new AbortController();
  followExamples(
    kube,
    examples,
    (def) => served.get(crdOf(def))?.promise ?? Promise.resolve(),
    () => wake(),
    follow.signal,
  );
  const failures = new Set<string>();
  /** Applies, concurrently, every example whose dependencies are Ready and that is not applied yet. */
  const applyReleased = () => {
    const ready = readyNow(examples);
    for (const e of examples) {
      if (
        tClouds === undefined ||
        e.applied ||
        e.applying ||
        !served.get(crdOf(e.def))?.done ||
        !e.needs.every((n) => ready.has(keyOf(n.kind, n.name, n.namespace)))
      )
        continue;
      e.applying = true;
      applyExample(kube, e)
        .then(() => {
          // The watch may have shown the object before this apply was recorded (an older run's object).
          if (isReady(e.mr)) e.readyAt ??= Date.now();
        })
        .catch((err: unknown) => {
          // A loaded machine's API server can miss one answer: say so (once per message) and try again.
          const message = (err as Error).message;
          if (!stopping && !failures.has(message)) process.stdout.write(`(retrying: ${message})\n`);
          failures.add(message);
        })
        .finally(() => {
          e.applying = false;
          wake();
        });
    }
  };
  let lastDrawn = 0;
  while (!stopping) {
    if (crdsFailed) throw crdsFailed;
    if (cloudsFailed) throw cloudsFailed;
    applyReleased();
    const ready = readyNow(examples);
    const all = ready.size === examples.length;
    try {
      if (tty && (all || Date.now() - lastDrawn >= TABLE_REDRAW_MS)) {
        lastDrawn = Date.now();
        process.stdout.write(
          `\x1b[2J\x1b[H${crdLine ? `${crdLine}\n\n` : ""}${await table(kube, examples, t0, tClouds !== undefined)}\n\n${ready.size}/${examples.length} Ready after ${seconds(t0)} — Ctrl-C stops everything npm start started\n`,
        );
      }
      if (all) {
        const rest = installLater();
        // The examples' own CRDs can be served before the last of the others: the phase line comes first.
        await crdsDone;
        if (!tty) process.stdout.write(`${await table(kube, examples, t0)}\n`);
        const last = Math.max(...examples.map((e) => e.readyAt ?? 0));
        process.stdout.write(
          `\nall ${examples.length} example resources are Ready after ${secs(last - t0)} ` +
            `(${secs(last - tStart)} since npm start: kube-apiserver ${secs(tStack - tStart)}, clouds ` +
            `${secs((tClouds ?? tStack) - tStack)} later, ` +
            `CRDs written ${secs(tWritten - tStack)}, then the examples, beside the API server serving the ` +
            `CRDs for ${secs((tCrds ?? last) - tWritten)}).\n`,
        );
        // --once ends here (tests, CI): the other CRDs are written, and established by the API server after.
        if (once) await rest.written;
        else await rest.established;
        writeTimeline(phases(), examples);
        process.stdout.write(
          (once
            ? `the other ${later.length} CRDs written in ${seconds(tLaterStart ?? 0)}.\n`
            : `the other ${later.length} CRDs installed in ${secs((tLater ?? Date.now()) - (tLaterStart ?? 0))}.\n`) +
            `Try: source ${join(STACK_DIR, "env.sh")} && npm run driftless -- get\n`,
        );
        if (once) {
          follow.abort();
          return stop(0, "all Ready");
        }
        break;
      }
    } catch (err) {
      if (stopping) return;
      process.stdout.write(`(retrying: ${(err as Error).message})\n`);
    }
    if (once && Date.now() - t0 > timeoutMs) {
      writeTimeline(phases(), examples);
      process.stderr.write(
        `not all resources Ready after ${timeoutMs} ms:\n${await table(kube, examples, t0, tClouds !== undefined).catch((err: unknown) => (err as Error).message)}\n`,
      );
      return stop(1, "timed out");
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = () => {};
  }
  // All Ready: the table stays on screen, refreshed now and then, until Ctrl-C.
  while (!stopping && tty) {
    await new Promise((r) => setTimeout(r, 2000));
    const ready = readyNow(examples);
    process.stdout.write(
      `\x1b[2J\x1b[H${await table(kube, examples, t0).catch((err: unknown) => `(retrying: ${(err as Error).message})`)}\n\n${ready.size}/${examples.length} Ready — Ctrl-C stops everything npm start started\n`,
    );
  }
}

let child: ChildProcess | undefined;
let started = false;
let stopping = false;

/** Stops driftless run, then the stack if this command started it; prints one closing line and exits. */
async function stop(code: number, why: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${why}: stopping driftless run${started ? " and the local stack" : ""} …\n`);
  const c = child;
  if (c && c.exitCode === null && c.signalCode === null) {
    const exited = new Promise<void>((r) => c.once("exit", () => r()));
    c.kill("SIGTERM");
    await exited;
  }
  if (started && !process.env.DRIFTLESS_KEEP_STACK) await down();
  process.stdout.write(code === 0 ? "stopped.\n" : "stopped after the error above.\n");
  process.exit(code);
}

// Ctrl-C is how a person ends the demo: a clean stop and exit 0, whatever phase it arrives in.
process.once("SIGINT", () => void stop(0, "Ctrl-C"));
process.once("SIGTERM", () => void stop(0, "SIGTERM"));

main().catch(async (err: unknown) => {
  // A request cut off by our own shutdown is not a failure: stop() is already closing up.
  if (stopping) return;
  process.stderr.write(`npm start failed: ${(err as Error).message}\n`);
  await stop(1, "failed");
});
