// The namespaced (Crossplane v2) side of `driftless migrate`: the `.m.` shape of a converted managed
// resource or ProviderConfig, and driftless's own cluster-scoped objects → their namespaced variants.
//
// Moving a driftless object to its namespaced variant never touches the cloud: the new object carries the
// old one's crossplane.io/external-name, so it observes the very resource the old one managed (kinds whose
// ids the cloud chooses find it by that id; the ownership tag keeps the old uid, which nothing reads once
// the external name is known). The old object must be orphaned before it is deleted: `planSteps` says in
// which order. Pure: no cluster or cloud access.
import {
  localizeSecretRefs,
  type ManagedKindDef,
  namespacedGroupOf,
  namespacedVariantOf,
} from "../api/managed.ts";
import { Annotations, LEGACY_RECONCILE_REQUESTED_AT } from "../api/meta.ts";
import { providerConfigs, v2ProviderConfigs } from "../api/provider-config.ts";
import { holdersOf } from "../api/reference.ts";
import type { DriftlessObject, MigratedObject, MigrateIssue } from "./migrate-types.ts";

type Obj = Record<string, unknown>;
type Issue = (severity: MigrateIssue["severity"], message: string, field?: string) => void;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export type ProviderConfigKindName = "ProviderConfig" | "ClusterProviderConfig";

/** Where cluster-scoped input goes when the namespaced shape is asked for. */
export interface NamespacedTarget {
  namespace: string;
  /** What providerConfigRef.kind the converted resources name; default ClusterProviderConfig. */
  providerConfigKind?: ProviderConfigKindName;
}

/** Annotation on every migrated object: where it came from (shared with migrate.ts). */
export const MIGRATED_FROM_ANNOTATION = "driftless.dev/migrated-from";

/** The management policies of an orphaning resource: everything it had except Delete. */
export function withoutDelete(policies: readonly string[]): string[] {
  if (policies.includes("*")) return ["Observe", "Create", "Update", "LateInitialize"];
  return policies.filter((p) => p !== "Delete");
}

/** The value at a dotted path of an object, or undefined. */
function at(o: Obj, path: string): unknown {
  let cur: unknown = o;
  for (const k of path.split(".")) {
    if (!cur || typeof cur !== "object" || Array.isArray(cur)) return undefined;
    cur = (cur as Obj)[k];
  }
  return cur;
}

/**
 * Secret key selectors at `paths` lose their namespace (the namespaced shape reads Secrets from the
 * object's own namespace); one that named another namespace is a Secret to copy, and says so.
 */
export function localizeSecrets(
  o: Obj,
  paths: readonly string[],
  namespace: string,
  issue: Issue,
  prefix = "",
) {
  for (const path of paths) {
    const ref = at(o, path);
    if (!ref || typeof ref !== "object" || Array.isArray(ref)) continue;
    const r = ref as Obj;
    const from = r.namespace;
    delete r.namespace;
    if (typeof from === "string" && from !== namespace) {
      issue(
        "warning",
        `${prefix}${path} named Secret ${from}/${String(r.name)}: the namespaced shape reads it from namespace ${namespace}; copy the Secret there before applying`,
        path.split(".")[0],
      );
    }
  }
}

/**
 * Crossplane v2's references and selectors may name a namespace; driftless's resolve within the
 * resource's own namespace only, so the field goes (and one naming another namespace cannot resolve).
 */
function localizeReferences(
  def: ManagedKindDef,
  fp: Obj,
  namespace: string,
  issue: Issue,
  section: "forProvider" | "initProvider" = "forProvider",
) {
  for (const r of def.references) {
    for (const { holder, where } of holdersOf(fp, r.at))
      for (const f of [r.refField, r.selectorField]) {
        const field = `${where}${f}`;
        const values = Array.isArray(holder[f]) ? (holder[f] as unknown[]) : [holder[f]];
        for (const v of values) {
          if (!v || typeof v !== "object") continue;
          const ns = (v as Obj).namespace;
          if (ns === undefined) continue;
          delete (v as Obj).namespace;
          if (ns !== namespace) {
            issue(
              "error",
              `${section}.${field} points into namespace ${String(ns)}: driftless resolves references within the resource's own namespace (${namespace}) only; move the referenced resource or set ${section}.${where}${r.field} instead; not migrated`,
              field,
            );
          }
        }
      }
  }
}

export interface NamespacedSpecInput {
  def: ManagedKindDef;
  /** forProvider in driftless's field names (a copy: it is changed in place). */
  forProvider: Obj;
  /** initProvider likewise (fields set on create only), when the source has one. */
  initProvider?: Obj;
  namespace: string;
  policies: readonly string[];
  /** The source would have orphaned the cloud resource on delete: Delete is left out of the policies. */
  orphan: boolean;
  providerConfigRef?: { kind: ProviderConfigKindName; name: string };
  /** The source's connection Secret; a namespace other than the target is warned about. */
  connectionSecret?: { name: string; namespace?: string };
}

/** The spec of a namespaced (`.m.`) managed resource: no deletionPolicy, typed providerConfigRef, local Secrets. */
export function namespacedSpec(input: NamespacedSpecInput, issue: Issue): Obj {
  const variant = namespacedVariantOf(input.def);
  const fp = input.forProvider;
  localizeSecrets(fp, variant.secretRefPaths, input.namespace, issue, "forProvider.");
  localizeReferences(input.def, fp, input.namespace, issue);
  const spec: Obj = {
    forProvider: fp,
    managementPolicies: input.orphan ? withoutDelete(input.policies) : [...input.policies],
  };
  const init = input.initProvider;
  if (init) {
    const initIssue: Issue = (severity, message, field) =>
      issue(severity, message, field === undefined ? undefined : `initProvider.${field}`);
    localizeSecrets(init, variant.secretRefPaths, input.namespace, initIssue, "initProvider.");
    localizeReferences(input.def, init, input.namespace, initIssue, "initProvider");
    spec.initProvider = init;
  }
  if (input.providerConfigRef) spec.providerConfigRef = input.providerConfigRef;
  const secret = input.connectionSecret;
  if (secret) {
    spec.writeConnectionSecretToRef = { name: secret.name };
    if (secret.namespace && secret.namespace !== input.namespace) {
      issue(
        "warning",
        `the connection Secret moves from ${secret.namespace}/${secret.name} to ${input.namespace}/${secret.name} (the namespaced shape writes it in the resource's namespace): move its consumers`,
        "writeConnectionSecretToRef",
      );
    }
  }
  return spec;
}

/** Annotations carried from one managed resource to its successor: not the old controller's bookkeeping. */
const NOT_CARRIED = new Set([
  "kubectl.kubernetes.io/last-applied-configuration",
  Annotations.createPending,
  Annotations.createSucceeded,
  Annotations.createFailed,
  Annotations.reconcileRequestedAt,
  LEGACY_RECONCILE_REQUESTED_AT,
]);

export function carriedAnnotations(meta: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((meta.annotations ?? {}) as Record<string, string>)) {
    if (!NOT_CARRIED.has(k)) out[k] = v;
  }
  return out;
}

/** A create that was started and has no recorded result yet: the external name may not be final. */
function createInFlight(annotations: Record<string, string>): boolean {
  const pending = Date.parse(annotations[Annotations.createPending] ?? "");
  if (Number.isNaN(pending)) return false;
  const done = [Annotations.createSucceeded, Annotations.createFailed]
    .map((a) => Date.parse(annotations[a] ?? ""))
    .filter((t) => !Number.isNaN(t));
  return !done.some((t) => t >= pending);
}

/**
 * A driftless cluster-scoped managed resource → its namespaced variant in `target.namespace`, adopting
 * the same cloud resource. `def` is the object's (cluster-scoped) kind.
 */
export function driftlessToNamespaced(
  def: ManagedKindDef,
  o: Obj,
  target: NamespacedTarget,
  issue: Issue,
): DriftlessObject | undefined {
  const meta = (o.metadata ?? {}) as Obj;
  const spec = (o.spec ?? {}) as Obj;
  const name = String(meta.name);
  const all = (meta.annotations ?? {}) as Record<string, string>;
  if (createInFlight(all)) {
    issue(
      "error",
      `a create started at ${all[Annotations.createPending]} has no recorded result: wait until the object is Ready (its external name is then final) and convert it again`,
    );
    return undefined;
  }
  const annotations = carriedAnnotations(meta);
  if (!annotations[Annotations.externalName]) {
    if (def.externalName === "providerChosen") {
      issue(
        "error",
        `no ${Annotations.externalName}: ${def.kind} ids are chosen by the cloud and the new object would not find this one's; wait until it is Ready (driftless records the id) and convert it again`,
      );
      return undefined;
    }
    annotations[Annotations.externalName] = name;
    issue("note", `no ${Annotations.externalName} yet: set to the object's name, which the engine uses too`);
  }
  annotations[MIGRATED_FROM_ANNOTATION] = `${def.kind}.${def.apiVersion}`;

  const policies = Array.isArray(spec.managementPolicies) ? (spec.managementPolicies as string[]) : ["*"];
  const orphan = spec.deletionPolicy === "Orphan";
  if (orphan) issue("note", "deletionPolicy Orphan → managementPolicies without Delete");
  const pcRef = spec.providerConfigRef as Obj | undefined;
  const secretRef = spec.writeConnectionSecretToRef as Obj | undefined;
  const outSpec = namespacedSpec(
    {
      def,
      forProvider: structuredClone((spec.forProvider ?? {}) as Obj),
      ...(isObj(spec.initProvider) ? { initProvider: structuredClone(spec.initProvider) } : {}),
      namespace: target.namespace,
      policies,
      orphan,
      providerConfigRef: {
        kind: target.providerConfigKind ?? "ClusterProviderConfig",
        name: typeof pcRef?.name === "string" && pcRef.name ? pcRef.name : "default",
      },
      ...(typeof secretRef?.name === "string"
        ? {
            connectionSecret: {
              name: secretRef.name,
              ...(typeof secretRef.namespace === "string" ? { namespace: secretRef.namespace } : {}),
            },
          }
        : {}),
    },
    issue,
  );
  const variant = namespacedVariantOf(def);
  const labels = meta.labels as Record<string, string> | undefined;
  return {
    apiVersion: variant.apiVersion,
    kind: variant.kind,
    metadata: {
      name,
      namespace: target.namespace,
      ...(labels && Object.keys(labels).length ? { labels } : {}),
      annotations,
    },
    spec: outSpec,
  };
}

type Cloud = keyof typeof v2ProviderConfigs;

/**
 * A ProviderConfig spec (in driftless's v1 field names) as the `.m.` ProviderConfig (namespaced, Secrets
 * in its own namespace) or ClusterProviderConfig (the v1 spec, plus allowedNamespaces).
 */
export function v2ProviderConfigObject(
  cloud: Cloud,
  kind: ProviderConfigKindName,
  name: string,
  namespace: string | undefined,
  spec: Obj,
  issue: Issue,
): DriftlessObject | undefined {
  const pc = v2ProviderConfigs[cloud];
  const out = structuredClone(spec);
  if (kind === "ProviderConfig") {
    if (!namespace) {
      issue("error", "a namespaced ProviderConfig needs a namespace: pass --namespace");
      return undefined;
    }
    localizeSecrets(out, localizeSecretRefs(providerConfigs[cloud].spec).paths, namespace, issue, "spec.");
    if ((out.credentials as Obj | undefined)?.source === "InjectedIdentity") {
      issue(
        "warning",
        `credentials source InjectedIdentity: a namespaced ProviderConfig may use the functions' own identity only in namespaces the platform allows (DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES); otherwise use a ClusterProviderConfig`,
      );
    }
  }
  const type = kind === "ProviderConfig" ? pc.namespaced.type : pc.cluster.type;
  return {
    apiVersion: `${type.group}/${type.version}`,
    kind,
    metadata: { name, ...(kind === "ProviderConfig" ? { namespace } : {}) },
    spec: out,
  };
}

/** A driftless cluster-scoped ProviderConfig (`<cloud>.driftless.dev`) → its `.m.` counterpart. */
export function driftlessProviderConfigToV2(
  cloud: Cloud,
  o: Obj,
  target: NamespacedTarget,
  issue: Issue,
): DriftlessObject | undefined {
  const kind = target.providerConfigKind ?? "ClusterProviderConfig";
  const meta = (o.metadata ?? {}) as Obj;
  const out = v2ProviderConfigObject(
    cloud,
    kind,
    String(meta.name),
    target.namespace,
    (o.spec ?? {}) as Obj,
    issue,
  );
  if (out) {
    issue(
      "note",
      `keep ${String(meta.name)} (${providerConfigs[cloud].type.group}) until no cluster-scoped resource uses it; the ${kind} is a new object`,
    );
  }
  return out;
}

/** The driftless cluster-scoped group → the cloud of its ProviderConfig, if `group` is one. */
export function driftlessProviderConfigCloud(group: string): Cloud | undefined {
  return (Object.keys(providerConfigs) as Cloud[]).find((c) => providerConfigs[c].type.group === group);
}

/**
 * Warns about references whose target is not among the converted objects: a namespaced resource's
 * references resolve only to namespaced objects in its own namespace, so the target must move too.
 */
export function checkReferences(objects: readonly MigratedObject[], defs: readonly ManagedKindDef[]) {
  const issues: MigrateIssue[] = [];
  const present = new Set(
    objects.map(
      (m) =>
        `${m.object.apiVersion}/${m.object.kind}/${m.object.metadata.namespace ?? ""}/${m.object.metadata.name}`,
    ),
  );
  for (const m of objects) {
    const ns = m.object.metadata.namespace;
    if (!ns) continue;
    const def = defs.find(
      (d) => d.kind === m.object.kind && `${namespacedGroupOf(d.group)}/${d.version}` === m.object.apiVersion,
    );
    if (!def) continue;
    const fp = (m.object.spec.forProvider ?? {}) as Obj;
    for (const r of namespacedVariantOf(def).references) {
      const refs = fp[r.refField];
      for (const ref of Array.isArray(refs) ? refs : refs ? [refs] : []) {
        const name = (ref as Obj).name;
        if (typeof name !== "string" || present.has(`${r.to.apiVersion}/${r.to.kind}/${ns}/${name}`))
          continue;
        issues.push({
          severity: "warning",
          source: m.source,
          field: r.refField,
          message: `forProvider.${r.refField} names ${r.to.kind} ${name}, which is not among the converted objects: it must exist as ${r.to.kind}.${r.to.group} in namespace ${ns} (convert it too), or the reference never resolves`,
        });
      }
      if (fp[r.selectorField]) {
        issues.push({
          severity: "note",
          source: m.source,
          field: r.selectorField,
          message: `forProvider.${r.selectorField} selects among ${r.to.kind}.${r.to.group} objects in namespace ${ns} only`,
        });
      }
    }
  }
  return issues;
}

/** One step of moving driftless cluster-scoped objects to their namespaced variants, in order. */
export interface PlanStep {
  title: string;
  commands: string[];
}

const plural = (def: ManagedKindDef) => `${def.plural}.${def.group}`;

/**
 * The safe order for replacing cluster-scoped driftless objects by the namespaced ones in `file`: the old
 * object is orphaned (and the patch stored) before the new one exists, and deleted only after the new one
 * adopted the resource — at no moment can deleting an object delete the cloud resource, and never do two
 * objects with Delete manage one resource.
 */
export function planSteps(
  moved: ReadonlyArray<{ def: ManagedKindDef; name: string }>,
  namespace: string,
  file: string,
): PlanStep[] {
  if (moved.length === 0) return [];
  const each = (f: (m: { def: ManagedKindDef; name: string }) => string) => moved.map(f);
  return [
    {
      title: "Orphan the cluster-scoped objects, so deleting them can never delete the cloud resource",
      commands: each(
        (m) =>
          `kubectl patch ${plural(m.def)} ${m.name} --type merge -p '{"spec":{"deletionPolicy":"Orphan"}}'`,
      ),
    },
    {
      title: "Check that the patch is stored (the engine reads the object fresh on every reconcile)",
      commands: each(
        (m) =>
          `kubectl get ${plural(m.def)} ${m.name} -o jsonpath='{.spec.deletionPolicy}{"\\n"}'   # Orphan`,
      ),
    },
    {
      title: `Create the namespaced objects in ${namespace} (same external names: they adopt, nothing is created)`,
      commands: [
        `kubectl create namespace ${namespace} --dry-run=client -o yaml | kubectl apply -f -`,
        `kubectl apply -f ${file}`,
      ],
    },
    {
      title: "Wait until every namespaced object is Ready and Synced",
      commands: [
        ...new Set(
          moved.flatMap((m) =>
            ["Ready", "Synced"].map(
              (c) =>
                `kubectl wait --for=condition=${c} -n ${namespace} ${plural(namespacedVariantOf(m.def))} --all --timeout=10m`,
            ),
          ),
        ),
      ],
    },
    {
      title:
        "Delete the cluster-scoped objects: orphaned, the engine only drops its finalizer and their connection Secrets (the namespaced objects then write theirs). With no engine running, remove the finalizer yourself — only after step 2 showed Orphan",
      commands: [
        ...each((m) => `kubectl delete ${plural(m.def)} ${m.name} --timeout=2m`),
        ...each(
          (m) =>
            `# did not finish (no engine running): kubectl patch ${plural(m.def)} ${m.name} --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]'`,
        ),
      ],
    },
  ];
}
