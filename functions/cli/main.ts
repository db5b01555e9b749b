#!/usr/bin/env node
// The `driftless` command line: an adapter over shared/ — parsing, printing and exit codes only.
import { Command, Option } from "commander";
import { stringify } from "yaml";
import type { ManagedResource } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { allCrds } from "../../shared/crds.ts";
import { Kube } from "../../shared/kube/client.ts";
import { loadKubeConfig } from "../../shared/kube/config.ts";
import { applyCrds } from "../../shared/kube/crds.ts";
import { createLogger } from "../../shared/log.ts";
import { startRun } from "../../shared/pipeline/run.ts";
import { managedKinds, providerConfigKinds } from "../../shared/providers/index.ts";
import { readConfig } from "../config.ts";

type Output = "table" | "json" | "yaml";
const outputOption = () =>
  new Option("-o, --output <format>", "output format").choices(["table", "json", "yaml"]).default("table");

const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

function kubeFromEnv() {
  const cfg = readConfig();
  return { cfg, kc: loadKubeConfig({ path: cfg.KUBECONFIG, yaml: cfg.DRIFTLESS_KUBECONFIG_YAML }) };
}

function print(rows: Array<Record<string, string>>, output: Output, raw: unknown) {
  if (output === "json") return void process.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
  if (output === "yaml") return void process.stdout.write(stringify(raw));
  if (rows.length === 0) return void process.stdout.write("No resources found.\n");
  const cols = Object.keys(rows[0] ?? {});
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (r: Record<string, string>) =>
    cols
      .map((c, i) => (r[c] ?? "").padEnd(width[i] ?? 0))
      .join("   ")
      .trimEnd();
  process.stdout.write(
    `${[line(Object.fromEntries(cols.map((c) => [c, c]))), ...rows.map(line)].join("\n")}\n`,
  );
}

function age(ts: string | undefined): string {
  if (!ts) return "";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** Finds a managed kind by `Kind`, `kind.group` or plural, as kubectl does. */
function findKind(ref: string) {
  const [kindPart, ...groupParts] = ref.split(".");
  const group = groupParts.join(".");
  const matches = managedKinds
    .map((k) => k.definition)
    .filter(
      (d) =>
        [d.kind.toLowerCase(), d.plural].includes((kindPart ?? "").toLowerCase()) &&
        (!group || d.group === group || d.group.startsWith(`${group}.`)),
    );
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) {
    throw new UsageError(
      `"${ref}" is ambiguous: ${matches.map((m) => `${m.kind}.${m.group}`).join(", ")} — add the group`,
    );
  }
  throw new UsageError(
    `unknown kind "${ref}"; known: ${managedKinds.map((k) => `${k.definition.kind}.${k.definition.group}`).join(", ")}`,
  );
}

class UsageError extends Error {
  override name = "UsageError";
}

export function buildCli(): Command {
  const program = new Command("driftless")
    .description("Serverless reconciler for Crossplane-style managed resources")
    .showHelpAfterError()
    .exitOverride();

  program
    .command("run")
    .description("run forwarder, memory queue, workers and drift sweep in one process against KUBECONFIG")
    .option("--workers <n>", "reconciles running at once", (v) => Number(v))
    .option("--no-crds", "do not install/update the CRDs at start")
    .action(async (opts: { workers?: number; crds: boolean }) => {
      const { cfg, kc } = kubeFromEnv();
      const logger = createLogger({ level: cfg.LOG_LEVEL });
      if (opts.crds) await applyCrds(kc, allCrds());
      const running = await startRun({
        kubeConfig: kc,
        logger,
        kinds: managedKinds,
        providerConfigKinds,
        workers: opts.workers ?? cfg.DRIFTLESS_WORKERS,
        pollIntervalMs: cfg.DRIFTLESS_POLL_INTERVAL,
        sweepIntervalMs: cfg.DRIFTLESS_SWEEP_INTERVAL,
      });
      logger.info(
        { kinds: managedKinds.length, workers: opts.workers ?? cfg.DRIFTLESS_WORKERS },
        "driftless run started",
      );
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          logger.info({ signal }, "shutting down: finishing in-flight reconciles");
          running.stop().then(resolve, resolve);
        };
        process.once("SIGTERM", () => shutdown("SIGTERM"));
        process.once("SIGINT", () => shutdown("SIGINT"));
      });
      logger.info({}, "stopped");
    });

  const crds = program.command("crds").description("print or apply the CRDs driftless serves");
  crds
    .command("print")
    .description("print the generated CRDs as YAML")
    .action(() => {
      process.stdout.write(
        allCrds()
          .map((c) => stringify(c))
          .join("---\n"),
      );
    });
  crds
    .command("apply")
    .description("create or update the CRDs in the cluster and wait until they are served")
    .action(async () => {
      const { kc } = kubeFromEnv();
      const list = allCrds();
      await applyCrds(kc, list);
      process.stdout.write(`applied ${list.length} CRDs\n`);
    });

  program
    .command("get")
    .description("list managed resources with READY, SYNCED, EXTERNAL-NAME and the latest message")
    .argument("[kind]", "a managed kind, e.g. queue or queue.sqs.aws")
    .addOption(outputOption())
    .action(async (kindRef: string | undefined, opts: { output: Output }) => {
      const { kc } = kubeFromEnv();
      const kube = new Kube(kc);
      const defs = kindRef ? [findKind(kindRef)] : managedKinds.map((k) => k.definition);
      const items: ManagedResource[] = [];
      for (const def of defs) {
        if (!def) continue;
        let cont: string | undefined;
        do {
          const page = await kube
            .list<ManagedResource & { [k: string]: unknown }>(def, {
              limit: 500,
              ...(cont ? { continue: cont } : {}),
            })
            .catch((err: unknown) => {
              if ((err as { status?: number }).status === 404) return { items: [], continue: undefined };
              throw err;
            });
          items.push(...page.items);
          cont = page.continue;
        } while (cont);
      }
      const cond = (mr: ManagedResource, t: string) => mr.status?.conditions?.find((c) => c.type === t);
      const rows = items.map((mr) => {
        const synced = cond(mr, "Synced");
        const ready = cond(mr, "Ready");
        const last = [synced, ready]
          .map((c) => c?.lastTransitionTime ?? "")
          .sort()
          .at(-1);
        return {
          KIND: `${mr.kind}.${mr.apiVersion.split("/")[0]}`,
          NAME: mr.metadata.name,
          READY: ready?.status ?? "",
          SYNCED: synced?.status ?? "",
          "EXTERNAL-NAME": mr.metadata.annotations?.[Annotations.externalName] ?? "",
          "LAST-CHANGE": age(last),
          AGE: age(mr.metadata.creationTimestamp),
          MESSAGE:
            (synced?.status === "False" ? synced.message : ready?.status === "False" ? ready.message : "") ??
            "",
        };
      });
      print(rows, opts.output, items);
    });

  program
    .command("trigger")
    .description("reconcile a managed resource now (the forwarder sees the annotation change)")
    .argument("<kind/name>", "e.g. queue/orders")
    .action(async (ref: string) => {
      const [kindRef, name] = ref.split("/");
      if (!kindRef || !name) throw new UsageError(`expected KIND/NAME, got "${ref}"`);
      const def = findKind(kindRef);
      if (!def) return;
      const { kc } = kubeFromEnv();
      const kube = new Kube(kc);
      if (!(await kube.get(def, name))) throw new Error(`${def.kind} "${name}" not found`);
      await kube.patch(def, name, {
        metadata: { annotations: { "driftless.dev/reconcile-requested-at": new Date().toISOString() } },
      });
      process.stdout.write(`${def.kind}/${name} queued for reconcile\n`);
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    const e = err as Error & { code?: string; exitCode?: number };
    if (e.code?.startsWith("commander.")) {
      return e.code === "commander.helpDisplayed" || e.code === "commander.version" ? EXIT.ok : EXIT.usage;
    }
    process.stderr.write(`error: ${e.message}\n`);
    return e instanceof UsageError ? EXIT.usage : EXIT.failure;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv);
}
