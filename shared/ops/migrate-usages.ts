// `driftless migrate` for Crossplane's Usages: protection.crossplane.io Usage and ClusterUsage, and the legacy
// apiextensions.crossplane.io Usage (cluster-scoped, Crossplane v1). The Usage keeps its name, labels, reason,
// replayDeletion and selectors; each end (`of`, `by`) that names a resource migrate converts is renamed to the
// driftless kind it becomes, where it becomes it (cluster-scoped, or namespaced in the same namespace). An end
// of a kind driftless does not serve (a composite resource, another provider's kind) is carried unchanged and
// reported; a Usage naming nothing driftless serves is not migrated. Pure: no cluster access.
import { type ManagedKindDef, namespacedVariantOf } from "../api/managed.ts";
import { PROTECTION_GROUP, PROTECTION_VERSION, USAGE_DETAILS_ANNOTATION } from "../api/protection/usage.ts";
import type { DriftlessObject, IssueSeverity } from "./migrate-types.ts";

type Obj = Record<string, unknown>;
type Report = (severity: IssueSeverity, message: string, field?: string) => void;

const LEGACY_GROUP = "apiextensions.crossplane.io";

/** Whether a document is a Usage migrate converts with migrateUsage. */
export function isUsage(apiVersion: string, kind: string): boolean {
  const group = apiVersion.split("/")[0];
  return (
    (group === PROTECTION_GROUP && (kind === "Usage" || kind === "ClusterUsage")) ||
    (group === LEGACY_GROUP && kind === "Usage")
  );
}

/** What a Crossplane kind becomes: the driftless kind, and whether the source was v2's namespaced shape. */
export type KindTarget = (
  apiVersion: string,
  kind: string,
) => { def: ManagedKindDef; v2: boolean } | undefined;

export interface UsageMigration {
  /** Upjet (and driftless) kinds → the driftless kind each becomes (migrate.ts's mappings). */
  target: KindTarget;
  /** Cluster-scoped input moves into this namespace (`--namespaced`). */
  namespaced?: string;
}

/** The Usage as driftless serves it, or undefined (reported) when it names nothing driftless serves. */
export function migrateUsage(o: Obj, m: UsageMigration, issue: Report): DriftlessObject | undefined {
  const meta = (o.metadata ?? {}) as Obj;
  const spec = (o.spec ?? {}) as Obj;
  const clusterInput =
    String(o.kind) === "ClusterUsage" || String(o.apiVersion).startsWith(`${LEGACY_GROUP}/`);
  const namespace = clusterInput ? m.namespaced : (meta.namespace as string | undefined);
  const namespacedOut = namespace !== undefined;
  let known = 0;
  const end = (which: "of" | "by"): Obj | undefined => {
    const r = spec[which] as Obj | undefined;
    if (!r) return undefined;
    const apiVersion = String(r.apiVersion ?? "");
    const kind = String(r.kind ?? "");
    const t = m.target(apiVersion, kind);
    if (!t) {
      issue(
        "warning",
        `spec.${which} names ${kind} (${apiVersion}), which driftless does not serve: carried unchanged; it is enforced only where something serves that kind (Crossplane)`,
        which,
      );
      return r;
    }
    known++;
    // Where the resource migrates to: v2 input stays namespaced; v1 input moves with --namespaced.
    const toNamespaced = t.v2 || (!t.v2 && m.namespaced !== undefined && t.def.scope === "Cluster");
    const def = toNamespaced ? namespacedVariantOf(t.def) : t.def;
    if (def.scope === "Namespaced" && !namespacedOut) {
      issue(
        "error",
        `spec.${which} becomes the namespaced ${def.kind} (${def.apiVersion}), which a ClusterUsage cannot name: migrate with --namespaced, or write a Usage in its namespace; not migrated`,
        which,
      );
    }
    return { ...r, apiVersion: def.apiVersion, kind: def.kind };
  };
  const of = end("of");
  const by = end("by");
  if (!of) {
    issue("error", "has no spec.of: not a Usage; not migrated");
    return undefined;
  }
  if (known === 0) {
    issue("note", "names no kind driftless serves: not migrated (Crossplane keeps serving it)");
    return undefined;
  }
  const annotations = Object.fromEntries(
    Object.entries((meta.annotations ?? {}) as Record<string, string>).filter(
      ([k]) => k !== USAGE_DETAILS_ANNOTATION && k !== "kubectl.kubernetes.io/last-applied-configuration",
    ),
  );
  const labels = meta.labels as Record<string, string> | undefined;
  return {
    apiVersion: `${PROTECTION_GROUP}/${PROTECTION_VERSION}`,
    kind: namespacedOut ? "Usage" : "ClusterUsage",
    metadata: {
      name: String(meta.name),
      ...(namespace ? { namespace } : {}),
      ...(labels && Object.keys(labels).length > 0 ? { labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    },
    spec: {
      of,
      ...(by ? { by } : {}),
      ...(spec.reason !== undefined ? { reason: spec.reason } : {}),
      ...(spec.replayDeletion !== undefined ? { replayDeletion: spec.replayDeletion } : {}),
    },
  };
}
