// `driftless plan`: what a reconcile of managed resources would do now, without doing it — for live objects
// (kind/name) or for manifests (-f), which need not be in the cluster yet.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { parseAllDocuments } from "yaml";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { NotFoundError, UsageError } from "../../../shared/ops/errors.ts";
import type { NamespaceFlags } from "../../../shared/ops/kinds.ts";
import {
  type FieldChange,
  ManagedReconciler,
  Reason,
  type ResourceKey,
  type Simulation,
  type Step,
  type Verdict,
} from "../../../shared/reconciler/reconciler.ts";
import { ReferenceNotReadyError } from "../../../shared/reconciler/references.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import {
  addressedObject,
  type CliContext,
  EXIT,
  expandPaths,
  namespaceIn,
  namespaceOptions,
  outputOption,
  registry,
} from "../common.ts";
import { type Output, printObject, stdout } from "../output.ts";

/** What a reconcile would do to one resource, in the words of a plan. */
export type Action = "create" | "update" | "delete" | "replace-refused" | "waits" | "nothing" | "error";

/** Changes pending: exit 2 (0: nothing to do; 1: an error, which wins). */
const EXIT_CHANGES = 2;
const PENDING: ReadonlySet<Action> = new Set(["create", "update", "delete", "waits"]);

interface ResourcePlan {
  resource: string;
  action: Action;
  changes: FieldChange[];
  message?: string;
}

export function registerPlan(program: Command, cli: CliContext): void {
  const cmd = program
    .command("plan")
    .description(
      "show what a reconcile of managed resources would do now — the same plan the reconcile and the batched drift check follow — writing nothing",
    )
    .argument(
      "[kind/name]",
      "a live object, e.g. queue/orders, table.dynamodb.awscc/t1, queue.sqs.aws.m/orders -n team-a",
    )
    .option(
      "-f, --filename <paths...>",
      "manifests: YAML files or directories of them (- reads standard input)",
    )
    .option("--steps", "also list every step of each plan (status, events, finalizer, connection details)")
    .addOption(outputOption());
  namespaceOptions(cmd)
    .addHelpText(
      "after",
      `
Reads each object (from the cluster, or from -f: an object not in the cluster yet is planned as it would be
once applied), its references' targets and the cloud (one observe) with the resource's ProviderConfig;
creates, updates, deletes and writes nothing. Per resource it prints one of
  create           (the fields it would send; an external name that exists in the cloud is imported instead)
  update           (each drifted field: current → desired)
  replace refused  (an immutable field differs: driftless never deletes and recreates)
  delete           (the object is being deleted and its policies delete the cloud resource)
  waits            (a referenced resource is not ready yet: the create or update follows once it is)
  nothing          (in sync, paused, or observe-only and found)
Values of secret fields are shown as (redacted); connection details by key only.

Exit codes of plan: 0 nothing to do, 1 an error (or a replace refused), 2 changes are pending.`,
    )
    .action(
      async (
        ref: string | undefined,
        opts: NamespaceFlags & { output: Output; filename?: string[]; steps?: boolean },
      ) => {
        if (!ref === !opts.filename) throw new UsageError("plan takes either <kind/name> or -f <paths...>");
        const { managedKinds } = await registry();
        const { cfg, kc } = cli.kubeConfig();
        const kube = new Kube(kc);
        const engine = new ManagedReconciler(kube, new KindRegistry(managedKinds), {
          secretRefNamespaces: cfg.DRIFTLESS_SECRET_REF_NAMESPACES,
          tenancy: { ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES },
        });
        const defs = managedKinds.map((k) => k.definition);
        const contextNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace || undefined;

        const targets: Array<{ key: ResourceKey; manifest?: ManagedResource }> = [];
        if (ref) {
          const { type, name } = await addressedObject(ref, opts);
          if (!defs.some((d) => d.group === type.group && d.kind === type.kind))
            throw new UsageError(`plan works for managed resources; ${type.kind}.${type.group} is not one`);
          const namespace = namespaceIn(type, opts, kc);
          targets.push({
            key: {
              apiVersion: `${type.group}/${type.version}`,
              kind: type.kind,
              name,
              ...(namespace ? { namespace } : {}),
            },
          });
        } else {
          for (const doc of readManifests(opts.filename ?? [])) {
            const def = defs.find((d) => d.apiVersion === doc.apiVersion && d.kind === doc.kind);
            if (!def)
              throw new UsageError(
                `${doc.source}: ${doc.kind} ${doc.apiVersion} is not a managed resource kind driftless serves`,
              );
            const namespace =
              def.scope === "Namespaced"
                ? (doc.metadata.namespace ?? opts.namespace ?? contextNamespace ?? "default")
                : undefined;
            const key = {
              apiVersion: def.apiVersion,
              kind: def.kind,
              name: doc.metadata.name,
              ...(namespace ? { namespace } : {}),
            };
            const live = await kube.get<ManagedResource & { [k: string]: unknown }>(def, key.name, namespace);
            targets.push({ key, manifest: asApplied(doc.object, live, namespace) });
          }
        }

        const plans: ResourcePlan[] = [];
        const details: Array<{ steps: string[]; verdict?: Verdict }> = [];
        for (const { key, manifest } of targets) {
          const resource = `${key.kind.toLowerCase()}.${key.apiVersion.split("/")[0]}/${key.namespace ? `${key.namespace}/` : ""}${key.name}`;
          try {
            const simulated = await engine.simulate(key, manifest);
            if (simulated.verdict?.outcome === "gone")
              throw new NotFoundError(
                `${key.kind} ${key.apiVersion} "${key.name}" not found${key.namespace ? ` in namespace ${key.namespace}` : ""}`,
              );
            plans.push({ resource, ...actionOf(simulated) });
            details.push({
              steps: simulated.steps.map(stepText),
              ...(simulated.verdict ? { verdict: simulated.verdict } : {}),
            });
          } catch (err) {
            if (err instanceof NotFoundError && ref) throw err;
            const waits = err instanceof ReferenceNotReadyError;
            plans.push({
              resource,
              action: waits ? "waits" : "error",
              changes: [],
              message: (err as Error).message,
            });
            details.push({ steps: [] });
          }
        }

        if (opts.output === "table") {
          stdout.write(plans.map((p, i) => planText(p, opts.steps || ref ? details[i] : undefined)).join(""));
          stdout.write(`${summary(plans)}\n`);
        } else
          printObject(
            stdout,
            opts.output,
            plans.map((p, i) => ({ ...p, ...(details[i] ?? {}) })),
          );
        const errors = plans.some((p) => p.action === "error" || p.action === "replace-refused");
        process.exitCode = errors
          ? EXIT.failure
          : plans.some((p) => PENDING.has(p.action))
            ? EXIT_CHANGES
            : EXIT.ok;
      },
    );
}

/** A manifest's object as it would be once applied: the live object's metadata and status under its spec. */
function asApplied(
  manifest: ManagedResource,
  live: ManagedResource | undefined,
  namespace: string | undefined,
): ManagedResource {
  const metadata = { ...manifest.metadata, ...(namespace ? { namespace } : {}) };
  if (!live) return { ...manifest, metadata: { ...metadata, generation: 1 } };
  return {
    ...live,
    metadata: {
      ...live.metadata,
      labels: { ...live.metadata.labels, ...metadata.labels },
      annotations: { ...live.metadata.annotations, ...metadata.annotations },
    },
    spec: manifest.spec,
  };
}

interface Manifest {
  source: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  object: ManagedResource;
}

/** The documents of the files (a directory: its *.yaml files), each with a kind and a name. */
function readManifests(paths: readonly string[]): Manifest[] {
  return expandPaths(paths).flatMap((file) =>
    parseAllDocuments(readFileSync(file === "-" ? 0 : file, "utf8")).flatMap((d, i) => {
      const source = `${file === "-" ? "<stdin>" : file}#${i + 1}`;
      if (d.errors.length > 0) throw new UsageError(`${source}: not YAML: ${d.errors[0]?.message ?? ""}`);
      const o = d.toJS() as Record<string, unknown> | null;
      if (o === null) return [];
      const metadata = (o.metadata ?? {}) as { name?: unknown; namespace?: unknown };
      if (typeof o.apiVersion !== "string" || typeof o.kind !== "string" || typeof metadata.name !== "string")
        throw new UsageError(
          `${source}: not a Kubernetes object (apiVersion, kind and metadata.name are required)`,
        );
      return [
        {
          source,
          apiVersion: o.apiVersion,
          kind: o.kind,
          metadata: {
            name: metadata.name,
            ...(typeof metadata.namespace === "string" ? { namespace: metadata.namespace } : {}),
          },
          object: { spec: {}, ...o } as unknown as ManagedResource,
        },
      ];
    }),
  );
}

/** The plan's steps in one word: what happens to the cloud resource. */
function actionOf(s: Simulation): Omit<ResourcePlan, "resource"> {
  const failure = s.steps.find((x): x is Extract<Step, { do: "fail" }> => x.do === "fail")?.failure;
  if (failure?.reason === Reason.cannotUpdate)
    return { action: "replace-refused", changes: [], message: failure.message };
  if (failure) return { action: "error", changes: [], message: failure.message };
  const did = (what: Step["do"]) => s.steps.some((x) => x.do === what);
  if (did("create")) return { action: "create", changes: s.changes };
  if (did("update")) return { action: "update", changes: s.changes };
  if (did("delete")) return { action: "delete", changes: [] };
  return { action: "nothing", changes: [] };
}

const shown = (v: unknown) =>
  v === undefined ? "(none)" : typeof v === "string" && v === "(redacted)" ? v : JSON.stringify(v);

function planText(p: ResourcePlan, detail: { steps: string[]; verdict?: Verdict } | undefined): string {
  const head = { "replace-refused": "replace refused" }[p.action as string] ?? p.action;
  const lines = [`${head.toUpperCase()} ${p.resource}${p.message ? `: ${p.message}` : ""}`];
  for (const c of p.changes)
    lines.push(
      p.action === "create"
        ? `    + ${c.field}: ${shown(c.desired)}`
        : `    ~ ${c.field}: ${shown(c.current)} → ${shown(c.desired)}`,
    );
  if (detail) lines.push(...stepsText(detail.steps, detail.verdict).map((l) => `    ${l}`));
  return `${lines.join("\n")}\n`;
}

function summary(plans: readonly ResourcePlan[]): string {
  const n = (a: Action) => plans.filter((p) => p.action === a).length;
  return `\nplan: ${n("create")} to create, ${n("update")} to update, ${n("delete")} to delete, ${n("waits")} waiting, ${n("nothing")} unchanged, ${n("replace-refused")} replace refused, ${n("error")} error(s)`;
}

function stepsText(lines: string[], verdict: Verdict | undefined): string[] {
  const body = lines.length === 0 ? ["in sync: nothing to do"] : lines.map((l, i) => `${i + 1}. ${l}`);
  const after = verdict
    ? [
        `outcome: ${verdict.outcome}`,
        ...(verdict.requeueAfterMs !== undefined
          ? [`look again in ${Math.round(verdict.requeueAfterMs / 1000)}s`]
          : []),
        ...(verdict.pollAfterMs !== undefined
          ? [`next drift check in ${Math.round(verdict.pollAfterMs / 1000)}s`]
          : []),
      ]
    : [];
  return [...body, ...after];
}

/** One step in words; values of connection details and spec fields are never shown. */
export function stepText(step: Step): string {
  switch (step.do) {
    case "initialize":
      return `set ${Object.keys(step.patch.annotations ?? {}).join(", ")} (default external name)`;
    case "resolveReferences":
      return "resolve references";
    case "recordCreate":
      return `record ${Object.keys(step.annotations).join(", ")}`;
    case "meta": {
      const what = [
        ...(step.patch.finalizers ? ["add the finalizer"] : []),
        ...Object.keys(step.patch.labels ?? {}).map((k) => `label ${k}`),
        ...Object.keys(step.patch.annotations ?? {}).map((k) => `annotation ${k}`),
      ];
      return `write ${what.join(", ")}`;
    }
    case "markShape":
      return `mark the kind's shape ${step.to} (driftless-system/driftless-shapes) before its first index label`;
    case "publish":
      return `publish connection details (keys: ${Object.keys(step.details).sort().join(", ")})`;
    case "unpublish":
      return "delete the connection Secret";
    case "removeFinalizer":
      return "remove the finalizer";
    case "lateInitialize":
      return `late-initialize ${step.filled.join(", ")}`;
    case "create":
      return `CREATE the external resource${step.externalName ? ` ${step.externalName}` : ""}`;
    case "update":
      return `UPDATE the external resource: ${step.drift.join(", ") || "(the provider reports it out of date)"}`;
    case "delete":
      return `DELETE the external resource ${step.externalName}`;
    case "event":
      return `event ${step.type} ${step.reason}`;
    case "status":
      return `status: ${step.conditions.map((c) => `${c.type}=${c.status} ${c.reason}`).join(", ")} (${step.why})`;
    case "fail":
      return `refuse (${step.failure.reason}): ${step.failure.message}`;
  }
}
