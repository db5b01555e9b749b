// `npm start`: the local demo. Brings up the stack, installs CRDs, local ProviderConfigs and the
// example managed resources, runs `driftless run`, and shows a live table until every resource is
// Ready. Ctrl-C stops everything this command started. `--once` exits when all are Ready (for tests).
// DRIFTLESS_LABEL_SELECTOR (e.g. driftless.dev/example=true, the label every example carries) is handed
// to `driftless run`, so on a cluster shared with other work it reconciles the examples only.
import { spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import type { ManagedResource } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { allCrds } from "../../shared/crds.ts";
import { isConflict, Kube, type KubeObject } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { applyCrds } from "../../shared/kube/crds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { localProviderConfigs } from "./provider-configs.ts";
import { down, REPO_ROOT, STACK_DIR, type StackEnv, up } from "./stack.ts";

const once = process.argv.includes("--once");
const timeoutMs = Number(process.env.DRIFTLESS_START_TIMEOUT_MS ?? 180_000);
const tty = process.stdout.isTTY && !once;
const selector = process.env.DRIFTLESS_LABEL_SELECTOR || undefined;

async function applyExamples(kube: Kube): Promise<ManagedResource[]> {
  const applied: ManagedResource[] = [];
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
      applied.push(obj);
    }
  }
  return applied;
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

async function table(kube: Kube, wanted: ManagedResource[]): Promise<{ text: string; ready: number }> {
  const rows = [["KIND", "NAME", "READY", "SYNCED", "EXTERNAL-NAME", "SECRET", "MESSAGE"]];
  let ready = 0;
  for (const w of wanted) {
    const def = managedKinds.find(
      (k) => k.definition.kind === w.kind && k.definition.apiVersion === w.apiVersion,
    )?.definition;
    if (!def) continue;
    const namespace = def.namespaced ? w.metadata.namespace : undefined;
    const mr = await kube.get<ManagedResource & KubeObject>(def, w.metadata.name, namespace);
    const c = (t: string) => mr?.status?.conditions?.find((x) => x.type === t);
    // A namespaced object's connection Secret is in its own namespace.
    const ref = w.spec.writeConnectionSecretToRef
      ? {
          name: w.spec.writeConnectionSecretToRef.name,
          namespace: namespace ?? w.spec.writeConnectionSecretToRef.namespace,
        }
      : undefined;
    const secret = ref ? await kube.getSecret(ref.namespace, ref.name) : undefined;
    const isReady = c("Ready")?.status === "True" && c("Synced")?.status === "True";
    if (isReady) ready++;
    rows.push([
      def.namespaced ? `${w.kind}.${def.group.split(".")[0]}.m` : w.kind,
      namespace ? `${namespace}/${w.metadata.name}` : w.metadata.name,
      c("Ready")?.status ?? "-",
      c("Synced")?.status ?? "-",
      mr?.metadata.annotations?.[Annotations.externalName] ?? "",
      ref
        ? secret
          ? `${ref.namespace}/${ref.name} (${Object.keys(secret.data ?? {}).join(",")})`
          : "pending"
        : "",
      (c("Synced")?.status === "False" ? c("Synced")?.message : c("Ready")?.message) ?? "",
    ]);
  }
  return { text: render(rows), ready };
}

async function main() {
  const { env, started } = await up();
  const kc = new KubeConfig();
  kc.loadFromFile(env.KUBECONFIG ?? "");
  const kube = new Kube(kc);
  process.stdout.write("installing CRDs, local ProviderConfigs and examples/ …\n");
  await applyCrds(kc, allCrds());
  await localProviderConfigs(kube, env);
  const wanted = await applyExamples(kube);

  const logFile = join(STACK_DIR, "logs", "driftless-run.log");
  const args = ["run", "--no-crds", ...(selector ? ["--selector", selector] : [])];
  const child = spawn(process.execPath, [join(REPO_ROOT, "functions/cli/main.ts"), ...args], {
    env: {
      ...process.env,
      ...(env as StackEnv),
      DRIFTLESS_SWEEP_INTERVAL: "30s",
      LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    },
    stdio: ["ignore", openSync(logFile, "a"), openSync(logFile, "a")],
  });
  process.stdout.write(
    `driftless run started (pid ${child.pid}${selector ? `, objects matching ${selector}` : ""}); logs: ${logFile}\n\n`,
  );

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write("\nstopping driftless run …\n");
    child.kill("SIGTERM");
    await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once("exit", () => r())));
    if (started && !process.env.DRIFTLESS_KEEP_STACK) await down();
    process.exit(code);
  };
  process.once("SIGINT", () => void stop(0));
  process.once("SIGTERM", () => void stop(0));
  child.once("exit", (code) => {
    if (!stopping) {
      process.stderr.write(`driftless run exited with ${code}; see ${logFile}\n`);
      void stop(1);
    }
  });

  const t0 = Date.now();
  let announced = false;
  for (;;) {
    const { text, ready } = await table(kube, wanted);
    if (tty)
      process.stdout.write(
        `\x1b[2J\x1b[H${text}\n\n${ready}/${wanted.length} Ready — Ctrl-C stops everything npm start started\n`,
      );
    if (ready === wanted.length && !announced) {
      announced = true;
      if (!tty) process.stdout.write(`${text}\n`);
      process.stdout.write(
        `\nall ${wanted.length} example resources are Ready after ${((Date.now() - t0) / 1000).toFixed(1)} s.\n` +
          `Try: source ${join(STACK_DIR, "env.sh")} && npm run driftless -- get\n`,
      );
      if (once) return stop(0);
    }
    if (once && Date.now() - t0 > timeoutMs) {
      process.stderr.write(`not all resources Ready after ${timeoutMs} ms:\n${text}\n`);
      return stop(1);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

main().catch(async (err: unknown) => {
  process.stderr.write(`npm start failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
