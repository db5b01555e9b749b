// What `driftless get` and `driftless describe` show, assembled from the API server. Printing is the
// CLI's job; this file decides what is shown. Connection Secrets are shown by name and KEYS only.
import type { CoreV1Event } from "@kubernetes/client-node";
import { CHANGE_LOG_REASON, type ChangeRecord, parseChangeRecord } from "../api/change-log.ts";
import {
  type ManagedKindDef,
  type ManagedResource,
  providerConfigOf,
  withOwnNamespace,
} from "../api/managed.ts";
import { Annotations, type Condition, DEFAULT_PROVIDER_CONFIG, type ResourceType } from "../api/meta.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { holdersOf } from "../api/reference.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import { NotFoundError } from "./errors.ts";

// Events about cluster-scoped objects live in "default" (see shared/kube/events.ts).
const CLUSTER_SCOPED_EVENT_NAMESPACE = "default";
const LIST_PAGE = 500;

type AnyObject = KubeObject & ManagedResource;

/**
 * Lists every object of the given kinds, page by page; a kind whose CRD is not installed lists nothing.
 * Namespaced kinds are listed in `namespace`, or in every namespace without it.
 */
export async function listAll(
  kube: Kube,
  types: readonly ResourceType[],
  opts: { labelSelector?: string; namespace?: string } = {},
): Promise<AnyObject[]> {
  const items: AnyObject[] = [];
  for (const t of types) {
    // Custom-object lists leave apiVersion and kind off their items on some servers.
    for await (const page of kube.listPages<AnyObject>(t, {
      limit: LIST_PAGE,
      ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
    }))
      items.push(...page.map((i) => ({ ...i, apiVersion: `${t.group}/${t.version}`, kind: t.kind })));
  }
  return items;
}

const condition = (o: { status?: { conditions?: Condition[] } }, type: string) =>
  o.status?.conditions?.find((c) => c.type === type);

/** Short age as kubectl prints it: 42s, 7m, 3h, 5d. */
export function age(ts: string | undefined, now = Date.now()): string {
  if (!ts) return "";
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** The latest transition of Ready or Synced: when the resource last changed state. */
export function lastChange(o: { status?: { conditions?: Condition[] } }): string | undefined {
  return (o.status?.conditions ?? [])
    .filter((c) => c.type === "Ready" || c.type === "Synced")
    .map((c) => c.lastTransitionTime)
    .sort()
    .at(-1);
}

/** The message worth reading: Synced's when it is not True, else Ready's when it is not True. */
export function headline(o: { status?: { conditions?: Condition[] } }): string {
  const synced = condition(o, "Synced");
  const ready = condition(o, "Ready");
  if (synced && synced.status !== "True") return synced.message ?? synced.reason;
  if (ready && ready.status !== "True") return ready.message ?? ready.reason;
  return "";
}

export type Row = Record<string, string>;

const isProviderConfigKind = (kind: string) => kind === "ProviderConfig" || kind === "ClusterProviderConfig";

/**
 * One `driftless get` row: KIND, NAME, READY, SYNCED, EXTERNAL-NAME, LAST-CHANGE, AGE, MESSAGE, and
 * NAMESPACE for a namespaced object.
 */
export function summaryRow(o: AnyObject, now = Date.now()): Row {
  const group = o.apiVersion.split("/")[0] ?? "";
  const ns: Row = o.metadata.namespace ? { NAMESPACE: o.metadata.namespace } : {};
  if (isProviderConfigKind(o.kind)) {
    const pc = o as unknown as ProviderConfig<{ credentials?: { source?: string } }>;
    return {
      ...ns,
      KIND: `${o.kind}.${group}`,
      NAME: o.metadata.name,
      READY: condition(o, "Ready")?.status ?? "",
      SYNCED: `users=${pc.status?.users ?? 0}`,
      "EXTERNAL-NAME": pc.spec?.credentials?.source ?? "",
      "LAST-CHANGE": age(lastChange(o), now),
      AGE: age(o.metadata.creationTimestamp, now),
      MESSAGE: condition(o, "Ready")?.status === "True" ? "" : (condition(o, "Ready")?.message ?? ""),
    };
  }
  return {
    ...ns,
    KIND: `${o.kind}.${group}`,
    NAME: o.metadata.name,
    READY: condition(o, "Ready")?.status ?? "",
    SYNCED: condition(o, "Synced")?.status ?? "",
    "EXTERNAL-NAME": o.metadata.annotations?.[Annotations.externalName] ?? "",
    "LAST-CHANGE": age(lastChange(o), now),
    AGE: age(o.metadata.creationTimestamp, now),
    MESSAGE: headline(o),
  };
}

export interface ReferenceState {
  /** The forProvider field the reference fills, e.g. topic. */
  field: string;
  /** How it is given: by name (xRef) or by selector (xSelector). */
  via: "ref" | "selector";
  /** The referenced kind. */
  kind: string;
  /** Names of the referenced resources (a selector's once it chose; empty before). */
  names: string[];
  /** matchLabels / matchControllerRef of a selector, as text. */
  selector?: string;
  /** Whether the field holds a value (the reference was resolved). */
  resolved: boolean;
  value?: unknown;
  /** Per target: exists and Ready? */
  targets: Array<{ name: string; exists: boolean; ready: boolean }>;
}

export interface EventSummary {
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  source: string;
}

export interface ConnectionSecretState {
  namespace: string;
  name: string;
  exists: boolean;
  /** Keys present in the Secret; values are never read out of it. */
  keys: string[];
  /** Keys this kind writes (documentation). */
  expectedKeys: string[];
  /** Whether the Secret is owned by this managed resource (else driftless refuses to write it). */
  ownedByResource: boolean;
}

export interface Description {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  externalName?: string;
  /** The ProviderConfig's name. */
  providerConfig?: string;
  /** Namespaced kinds: which kind providerConfig names, ProviderConfig (this namespace) or ClusterProviderConfig. */
  providerConfigKind?: string;
  managementPolicies?: string[];
  deletionPolicy?: string;
  forProvider?: Record<string, unknown>;
  atProvider?: Record<string, unknown>;
  /** ProviderConfigs only. */
  credentials?: { source?: string; secret?: string };
  users?: number;
  /** ClusterProviderConfigs only: the namespaces (or globs) that may use it; unset in the spec is `*`. */
  allowedNamespaces?: string[];
  conditions: Condition[];
  references: ReferenceState[];
  connectionSecret?: ConnectionSecretState;
  events: EventSummary[];
  /**
   * The recent change-log records (external create / update / delete), oldest first, from the object's
   * ChangeLog Events: as long as the API server keeps Events (--event-ttl, 1 h by default).
   */
  changeLog: ChangeRecord[];
}

/** Annotations whose value is a copy of the whole object: shown by name only. */
const BULKY_ANNOTATIONS = new Set(["kubectl.kubernetes.io/last-applied-configuration"]);

/** Reads a managed resource (or ProviderConfig), its references, connection Secret keys and Events. */
export async function describeObject(
  kube: Kube,
  type: ResourceType | ManagedKindDef,
  name: string,
  namespace?: string,
): Promise<Description> {
  const o = await kube.get<AnyObject>(type, name, namespace);
  if (!o)
    throw new NotFoundError(
      `${type.kind}.${type.group} "${name}" not found${type.namespaced ? ` in namespace ${namespace ?? "default"}` : ""}`,
    );
  const annotations = Object.fromEntries(
    Object.entries(o.metadata.annotations ?? {}).map(([k, v]) => [
      k,
      BULKY_ANNOTATIONS.has(k) ? `(${v.length} characters)` : v,
    ]),
  );
  const d: Description = {
    apiVersion: `${type.group}/${type.version}`,
    kind: type.kind,
    name: o.metadata.name,
    ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    ...(o.metadata.uid ? { uid: o.metadata.uid } : {}),
    ...(o.metadata.creationTimestamp ? { creationTimestamp: o.metadata.creationTimestamp } : {}),
    ...(o.metadata.deletionTimestamp ? { deletionTimestamp: o.metadata.deletionTimestamp } : {}),
    labels: o.metadata.labels ?? {},
    annotations,
    finalizers: o.metadata.finalizers ?? [],
    conditions: o.status?.conditions ?? [],
    references: [],
    events: [],
    changeLog: [],
  };
  if (isProviderConfigKind(type.kind)) {
    const pc = o as unknown as ProviderConfig<{
      credentials?: { source?: string; secretRef?: { namespace?: string; name: string; key: string } };
      allowedNamespaces?: string[];
    }>;
    const ref = pc.spec?.credentials?.secretRef;
    // A namespaced ProviderConfig's Secret is in its own namespace (its secretRef has no namespace).
    const secretNamespace = ref?.namespace ?? o.metadata.namespace;
    d.credentials = {
      ...(pc.spec?.credentials?.source ? { source: pc.spec.credentials.source } : {}),
      ...(ref ? { secret: `${secretNamespace}/${ref.name} key ${ref.key}` } : {}),
    };
    d.users = pc.status?.users ?? 0;
    if (type.kind === "ClusterProviderConfig") d.allowedNamespaces = pc.spec?.allowedNamespaces ?? ["*"];
  } else {
    const def = type as ManagedKindDef;
    // The namespaced shape's Secrets are in the object's own namespace, whatever it says (as the engine reads them).
    const mr = withOwnNamespace(def, o);
    const externalName = o.metadata.annotations?.[Annotations.externalName];
    if (externalName) d.externalName = externalName;
    if (def.scope === "Namespaced") {
      const pc = providerConfigOf(def, o);
      d.providerConfig = pc.name;
      d.providerConfigKind = pc.type.kind;
    } else {
      d.providerConfig = o.spec?.providerConfigRef?.name ?? DEFAULT_PROVIDER_CONFIG;
      d.deletionPolicy = o.spec?.deletionPolicy ?? "Delete";
    }
    d.managementPolicies = o.spec?.managementPolicies ?? ["*"];
    d.forProvider = (o.spec?.forProvider ?? {}) as Record<string, unknown>;
    if (o.status?.atProvider) d.atProvider = o.status.atProvider as Record<string, unknown>;
    d.references = await referenceStates(kube, def, o);
    const ref = mr.spec?.writeConnectionSecretToRef;
    if (ref) {
      const secret = await kube.getSecret(ref.namespace, ref.name);
      d.connectionSecret = {
        namespace: ref.namespace,
        name: ref.name,
        exists: Boolean(secret),
        keys: Object.keys(secret?.data ?? {}).sort(),
        expectedKeys: def.connectionKeys ?? [],
        ownedByResource: Boolean(
          secret?.metadata?.ownerReferences?.some((r) => r.uid === o.metadata.uid && o.metadata.uid),
        ),
      };
    }
  }
  if (o.metadata.uid) d.events = await eventsFor(kube, o.metadata.uid, o.metadata.namespace);
  d.changeLog = d.events
    .flatMap((e) => {
      const r = e.reason === CHANGE_LOG_REASON ? parseChangeRecord(e.message) : undefined;
      return r ? [r] : [];
    })
    .sort((a, b) => a.at.localeCompare(b.at));
  return d;
}

/** core/v1 Events whose involvedObject is this uid, oldest first. */
export async function eventsFor(kube: Kube, uid: string, namespace?: string): Promise<EventSummary[]> {
  const items = await kube.listEvents<CoreV1Event>(
    namespace ?? CLUSTER_SCOPED_EVENT_NAMESPACE,
    `involvedObject.uid=${uid}`,
  );
  const ts = (e: CoreV1Event) =>
    toIso(e.lastTimestamp) ?? toIso(e.eventTime) ?? toIso(e.metadata?.creationTimestamp) ?? "";
  return items
    .sort((a, b) => ts(a).localeCompare(ts(b)))
    .map((e) => {
      const first = toIso(e.firstTimestamp) ?? toIso(e.eventTime);
      const last = ts(e) || undefined;
      return {
        type: e.type ?? "",
        reason: e.reason ?? "",
        message: e.message ?? "",
        count: e.count ?? 1,
        ...(first ? { firstTimestamp: first } : {}),
        ...(last ? { lastTimestamp: last } : {}),
        source: e.source?.component ?? e.reportingComponent ?? "",
      };
    });
}

function toIso(v: Date | string | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.toISOString();
  return v;
}

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);

async function referenceStates(kube: Kube, def: ManagedKindDef, mr: AnyObject): Promise<ReferenceState[]> {
  const top = (mr.spec?.forProvider ?? {}) as Record<string, unknown>;
  const out: ReferenceState[] = [];
  // A nested reference is shown once per object holding it (`networkInterfaces[0].network`).
  for (const ref of def.references ?? [])
    for (const { holder: fp, where } of holdersOf(top, ref.at)) out.push(...(await stateOf(ref, fp, where)));
  return out;

  async function stateOf(
    ref: ManagedKindDef["references"][number],
    fp: Record<string, unknown>,
    where: string,
  ): Promise<ReferenceState[]> {
    const refValue = fp[ref.refField] as { name: string } | Array<{ name: string }> | undefined;
    const selector = fp[ref.selectorField] as
      | { matchLabels?: Record<string, string>; matchControllerRef?: boolean }
      | undefined;
    if (isEmpty(refValue) && !selector) return [];
    const names = isEmpty(refValue)
      ? []
      : (Array.isArray(refValue) ? refValue : [refValue]).map((r) => r?.name);
    const targets = [];
    for (const name of names.filter((n): n is string => Boolean(n))) {
      // A namespaced resource references only resources in its own namespace.
      const target = await kube.get<AnyObject>(
        ref.to,
        name,
        ref.to.namespaced ? mr.metadata.namespace : undefined,
      );
      targets.push({
        name,
        exists: Boolean(target),
        ready: condition(target ?? {}, "Ready")?.status === "True",
      });
    }
    const value = fp[ref.field];
    return [
      {
        field: `${where}${ref.field}`,
        via: isEmpty(refValue) ? "selector" : "ref",
        kind: ref.to.kind,
        names: targets.map((t) => t.name),
        ...(selector
          ? {
              selector: [
                ...Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
                ...(selector.matchControllerRef ? ["matchControllerRef"] : []),
              ].join(","),
            }
          : {}),
        resolved: !isEmpty(value),
        ...(isEmpty(value) ? {} : { value }),
        targets,
      },
    ];
  }
}
