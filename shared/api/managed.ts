import { z } from "zod";
import { optionalString } from "./fields.ts";
import {
  API_DOMAIN,
  Condition,
  DEFAULT_PROVIDER_CONFIG,
  DeletionPolicy,
  ManagementAction,
  type ObjectMeta,
  type ResourceType,
  SecretKeySelector,
  SecretReference,
} from "./meta.ts";

// biome-ignore lint/suspicious/noExplicitAny: zod's own constraint for "any object schema"
export type AnyObjectSchema = z.ZodObject<any>;

/** How the cloud resource's name is chosen: from the external-name annotation, or by the cloud on create. */
export type ExternalNamePolicy = "fromAnnotation" | "providerChosen";

/**
 * A cross-resource reference: forProvider.`field` is filled from the managed resource named by
 * forProvider.`refField` or chosen by forProvider.`selectorField`, once that resource is Ready.
 */
export interface ReferenceDef {
  field: string;
  refField: string;
  selectorField: string;
  /** The referenced kind. */
  to: ResourceType & { apiVersion: string };
  /** The value taken from the target; default its crossplane.io/external-name. */
  extract?: (target: ManagedResource) => string | undefined;
  /** A list reference: field is string[], refField is Reference[]. */
  list?: boolean;
  /**
   * A nested reference: the path of the forProvider object(s) holding field, refField and selectorField
   * (field names joined by `.`; every item of a list on the way is resolved on its own). Absent: the top.
   */
  at?: string;
  /**
   * A reference that names its target's kind (`apiVersion` and `kind` beside `name`, or in the selector):
   * the kind it may name by that apiVersion and kind, undefined for one it may not. `to` is the target
   * when the reference names no kind.
   */
  anyKind?: (apiVersion: string, kind: string) => (ResourceType & { apiVersion: string }) | undefined;
}

/** How the engine treats one forProvider field (a dotted path) when comparing and late-initializing. */
export interface FieldBehaviour {
  /**
   * The cloud never reports this field (a password, a create-time input): it is never compared and never
   * late-initialized. Every other field the user sets and the cloud does not report is drift. A
   * reference's name and selector fields (`references`) need no declaration: the engine skips them.
   */
  writeOnly?: boolean;
  /**
   * "version": "16" matches any 16.x, and a newer minor or patch of the same major than the spec asks for
   * is not drift (the cloud upgrades minor versions by itself). Default: exact equality.
   */
  compare?: "exact" | "version";
  /** false: late-initialization never copies the cloud's value into spec (values the cloud changes by itself). */
  lateInitialize?: boolean;
}

export interface ManagedKindOptions<F extends AnyObjectSchema, A extends AnyObjectSchema> {
  /** e.g. "sqs.aws" → group sqs.aws.driftless.dev */
  group: string;
  kind: string;
  version?: string;
  plural?: string;
  shortNames?: string[];
  /**
   * Cloud name for the CRD category and the ProviderConfig group: aws, gcp, azure. Default: the group's
   * last part (`ec2.aws` → aws); a group that does not end in the cloud's name says it here.
   */
  cloud?: "aws" | "gcp" | "azure";
  description: string;
  forProvider: F;
  atProvider: A;
  /** forProvider fields (top-level names) the cloud cannot change after create. */
  immutable?: Array<keyof z.infer<F> & string>;
  /** Keys this kind writes to its connection Secret (documentation and tests). */
  connectionKeys?: string[];
  externalName?: ExternalNamePolicy;
  /**
   * Provider-chosen kinds whose observe finds the resource by an ownership tag (the managed resource's
   * uid) even without an external name: "not found" is then proof that no create reached the cloud.
   */
  ownershipLookup?: boolean;
  references?: ReferenceDef[];
  /** Per-field behaviour, keyed by dotted forProvider path (e.g. "engineVersion", "redrivePolicy.maxReceiveCount"). */
  fields?: Record<string, FieldBehaviour>;
  /**
   * How long the cloud may take to show an update in its reads (eventually consistent APIs such as SQS
   * attributes): the engine does not update again for drift it sees within this time. Default 0.
   */
  updateSettleMs?: number;
  /** Where the cloud keeps the resource's tags or labels: Crossplane's default external tags go there. */
  tagging?: TagPlacement;
  /** What the cloud publishes no call for on this kind (CloudLacks). */
  lacks?: CloudLacks;
}

/**
 * The actions a cloud publishes no call for on a kind (Google's protos: no DeleteKeyRing; no create of a
 * singleton of settings), each with the sentence a person reads. The engine's policies never include such an
 * action (reconciler/policies.ts), the CRD refuses asking for it (deletionPolicy Orphan only; management
 * policies without Create), and deleting the object of a kind without a delete releases the cloud resource.
 */
export type CloudLacks = Readonly<Partial<Record<"Create" | "Update" | "Delete", string>>>;

/**
 * Where a taggable kind keeps its tags: a forProvider map of strings (top-level `field`), with AWS/Azure tag
 * values (`tags`) or Google label values (`labels`: lowercase, [a-z0-9_-], at most 63 characters).
 */
export interface TagPlacement {
  field: string;
  format: "tags" | "labels";
}

export interface ManagedKindDef<
  F extends AnyObjectSchema = AnyObjectSchema,
  A extends AnyObjectSchema = AnyObjectSchema,
> extends ResourceType {
  apiVersion: string;
  cloud: "aws" | "gcp" | "azure";
  description: string;
  forProvider: F;
  atProvider: A;
  spec: AnyObjectSchema;
  status: AnyObjectSchema;
  immutable: string[];
  connectionKeys: string[];
  externalName: ExternalNamePolicy;
  providerConfig: ResourceType;
  ownershipLookup: boolean;
  references: ReferenceDef[];
  fields: Record<string, FieldBehaviour>;
  updateSettleMs: number;
  shortNames?: string[];
  /**
   * The namespaced (Crossplane v2) shape: the kind in its `.m.` group. Its providerConfigRef names a
   * ProviderConfig in the resource's namespace or a ClusterProviderConfig (`providerConfigKinds`), its
   * connection Secret and Secret references are in its own namespace, and it has no deletionPolicy.
   */
  scope: "Cluster" | "Namespaced";
  /** The namespaced variant's ProviderConfig kinds (namespaced ProviderConfig, ClusterProviderConfig). */
  providerConfigKinds?: { ProviderConfig: ResourceType; ClusterProviderConfig: ResourceType };
  /** forProvider paths (dotted) holding a Secret key selector; in the namespaced shape they have no namespace. */
  secretRefPaths: string[];
  /** Where the kind keeps its tags or labels; absent: the kind is not taggable. */
  tagging?: TagPlacement;
  /** What the cloud publishes no call for on this kind; absent: all of create, update and delete exist. */
  lacks?: CloudLacks;
}

export const ProviderConfigReference = z
  .object({ name: z.string().min(1).describe("Name of the ProviderConfig.") })
  .describe("The ProviderConfig that holds the credentials for this resource.");

const managementPolicies = (more: string) =>
  z
    .array(ManagementAction)
    .default(["*"])
    .describe(
      `Which actions driftless may take on the external resource: Observe, Create, Update, Delete, LateInitialize or *.${more}`,
    );

/** A managed kind's spec: forProvider first, then `fields` (how driftless manages it). */
const specOf = <F extends AnyObjectSchema, S extends z.ZodRawShape>(forProvider: F, fields: S) =>
  z
    .object({ forProvider: forProvider.describe("The desired state of the external resource."), ...fields })
    .describe("The desired state of the managed resource and how driftless manages it.");

/**
 * The management policies of a kind whose cloud lacks a create: every action but Create (and `*`), of those
 * the cloud has, refused by the schema with the kind's reason; by default Observe, Update and LateInitialize
 * (Crossplane's "adopt and manage"), or Observe alone where the cloud has no update either (observe-only).
 * Otherwise: all, default *.
 */
function policiesOf(more: string, lacks: CloudLacks | undefined) {
  if (!lacks?.Create) return managementPolicies(more);
  if (lacks.Update)
    return z
      .array(z.enum(["Observe"]))
      .default(["Observe"])
      .meta({
        description: `Which actions driftless may take on the external resource: Observe only. ${lacks.Create}; ${lacks.Update}.${more}`,
        "x-kubernetes-validations": [
          { rule: "self.all(a, a == 'Observe')", message: `${lacks.Create}; ${lacks.Update}` },
        ],
      });
  const may = ManagementAction.options.filter(
    (a) => a === "Observe" || a === "Update" || a === "LateInitialize" || (a === "Delete" && !lacks.Delete),
  );
  return z
    .array(z.enum(may))
    .default(["Observe", "Update", "LateInitialize"])
    .meta({
      description: `Which actions driftless may take on the external resource: ${may.join(", ")}. Never Create (nor *): ${lacks.Create}.${more}`,
      "x-kubernetes-validations": [{ rule: "self.all(a, a != 'Create' && a != '*')", message: lacks.Create }],
    });
}

/**
 * deletionPolicy: Delete or Orphan (default Delete); Orphan alone where the cloud lacks a delete, or where the
 * kind is observe-only; default Orphan for a kind Google makes itself.
 */
function deletionPolicyOf(lacks: CloudLacks | undefined) {
  const text = "What happens to the external resource when this managed resource is deleted";
  const orphanOnly = lacks?.Delete ?? (lacks?.Create && lacks.Update ? lacks.Update : undefined);
  if (orphanOnly)
    return z
      .enum(["Orphan"])
      .default("Orphan")
      .meta({
        description: `${text}: Orphan only. ${orphanOnly}`,
        "x-kubernetes-validations": [{ rule: "self == 'Orphan'", message: orphanOnly }],
      });
  // A kind made by Google with its parent (no create) is released, not deleted, unless the object says Delete.
  return DeletionPolicy.default(lacks?.Create ? "Orphan" : "Delete").describe(`${text}: Delete or Orphan.`);
}

/** The spec fields every managed kind shares, Crossplane's ResourceSpec. */
export function managedSpec<F extends AnyObjectSchema>(forProvider: F, lacks?: CloudLacks) {
  return specOf(forProvider, {
    writeConnectionSecretToRef: SecretReference.optional().describe(
      "Where to write the connection details (endpoints, credentials) of the external resource.",
    ),
    providerConfigRef: ProviderConfigReference.default({ name: DEFAULT_PROVIDER_CONFIG }),
    deletionPolicy: deletionPolicyOf(lacks),
    managementPolicies: policiesOf("", lacks),
  });
}

export function managedStatus<A extends AnyObjectSchema>(atProvider: A) {
  return z
    .object({
      atProvider: atProvider.optional().describe("The observed state of the external resource."),
      conditions: z.array(Condition).optional().describe("Ready, Synced and UpToDate conditions."),
      lastExternalUpdate: z
        .object({
          time: z.string().describe("When driftless last updated the external resource (RFC3339)."),
          generation: z.number().int().describe("The metadata.generation it updated to."),
          fields: z
            .array(z.string())
            .optional()
            .describe("The forProvider fields (dotted paths) that update changed back to the spec."),
          repeats: z
            .number()
            .int()
            .optional()
            .describe(
              "How many updates of this generation in a row found the same fields changed back before the cloud was ever seen to match (the update-loop detector).",
            ),
        })
        .optional()
        .describe(
          "The last update of the external resource, for kinds whose cloud shows updates only after a while: drift seen before then is not updated again.",
        ),
      lastHandledReconcileAt: optionalString(
        "The value of the crossplane.io/reconcile-requested-at annotation the last reconcile handled: equal to the annotation once a requested reconcile has run.",
      ),
    })
    .describe("The observed state of the managed resource, written by driftless.");
}

const providerConfigTypeIn = (
  group: string,
  kind: "ProviderConfig" | "ClusterProviderConfig",
  namespaced: boolean,
): ResourceType => ({ group, version: "v1alpha1", kind, plural: `${kind.toLowerCase()}s`, namespaced });

/** A cloud's cluster-scoped ProviderConfig (the cluster-scoped kinds' own). */
export const providerConfigType = (cloud: string) =>
  providerConfigTypeIn(`${cloud}.${API_DOMAIN}`, "ProviderConfig", false);

/** `sqs.aws.driftless.dev` → `sqs.aws.m.driftless.dev`: where the namespaced (Crossplane v2) kinds live. */
export function namespacedGroupOf(group: string): string {
  const suffix = `.${API_DOMAIN}`;
  if (!group.endsWith(suffix) || group.endsWith(`.m${suffix}`))
    throw new Error(`${group} is not a cluster-scoped driftless group`);
  return `${group.slice(0, -suffix.length)}.m${suffix}`;
}

/** The namespaced ProviderConfig of a cloud's `.m.` group: usable by resources in its own namespace only. */
export const namespacedProviderConfigType = (cloud: string) =>
  providerConfigTypeIn(`${cloud}.m.${API_DOMAIN}`, "ProviderConfig", true);

/** The platform's ClusterProviderConfig of a cloud's `.m.` group (default `default`). */
export const clusterProviderConfigType = (cloud: string) =>
  providerConfigTypeIn(`${cloud}.m.${API_DOMAIN}`, "ClusterProviderConfig", false);

/** A Secret in the object's own namespace (the namespaced shape has no namespace field to point elsewhere). */
export const LocalSecretReference = z
  .object({ name: z.string().min(1).max(253).describe("Name of the Secret, in this resource's namespace.") })
  .describe("A Secret in this resource's namespace.");

export const LocalSecretKeySelector = LocalSecretReference.extend({
  key: z.string().min(1).max(253).describe("The key within the Secret."),
}).describe("A key in a Secret in this resource's namespace.");

export const ProviderConfigKindName = z
  .enum(["ProviderConfig", "ClusterProviderConfig"])
  .describe(
    "ProviderConfig: one in this resource's namespace. ClusterProviderConfig: one the platform provides to namespaces it allows.",
  );

export const TypedProviderConfigReference = z
  .object({
    kind: ProviderConfigKindName.default("ClusterProviderConfig"),
    name: z.string().min(1).describe("Name of the ProviderConfig or ClusterProviderConfig."),
  })
  .describe("The ProviderConfig (this namespace) or ClusterProviderConfig that holds the credentials.");

/** The spec of the namespaced (Crossplane v2) shape: no deletionPolicy, typed providerConfigRef, local Secrets. */
export function namespacedManagedSpec<F extends AnyObjectSchema>(forProvider: F, lacks?: CloudLacks) {
  return specOf(forProvider, {
    writeConnectionSecretToRef: LocalSecretReference.optional().describe(
      "The Secret, in this resource's namespace, to write the connection details (endpoints, credentials) of the external resource to.",
    ),
    providerConfigRef: TypedProviderConfigReference.default({
      kind: "ClusterProviderConfig",
      name: DEFAULT_PROVIDER_CONFIG,
    }),
    managementPolicies: policiesOf(
      lacks?.Delete
        ? ` The external resource is kept when this object is deleted: ${lacks.Delete}`
        : " Leave out Delete to keep the external resource when this object is deleted.",
      lacks,
    ),
  });
}

type Wrapped = { schema: z.ZodType; paths: string[] };

/**
 * Replaces every SecretKeySelector in an object schema (at any depth, optional or not) with
 * LocalSecretKeySelector, and says where they were: the namespaced shape cannot name another namespace.
 */
export function localizeSecretRefs<S extends AnyObjectSchema>(schema: S): { schema: S; paths: string[] } {
  const r = localize(schema, "");
  return { schema: r.schema as S, paths: r.paths };
}

function localize(schema: z.ZodType, path: string): Wrapped {
  const description = schema.description;
  const keep = (s: z.ZodType) => (description ? s.describe(description) : s);
  // SecretKeySelector itself or a described copy of it (a generated kind's secret field): a copy shares
  // its definition.
  if (schema._zod.def === SecretKeySelector._zod.def)
    return { schema: keep(LocalSecretKeySelector), paths: [path] };
  if (schema instanceof z.ZodOptional) {
    const inner = localize(schema.unwrap() as z.ZodType, path);
    return inner.paths.length
      ? { schema: keep(inner.schema.optional()), paths: inner.paths }
      : { schema, paths: [] };
  }
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    const paths: string[] = [];
    for (const [k, v] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const inner = localize(v, path ? `${path}.${k}` : k);
      shape[k] = inner.schema;
      paths.push(...inner.paths);
    }
    // safeExtend: a generated union body's object carries its "one variant at most" refinement, which
    // extend() refuses to carry over and safeExtend keeps.
    return paths.length ? { schema: keep(schema.safeExtend(shape)), paths } : { schema, paths: [] };
  }
  return { schema, paths: [] };
}

const CLOUDS = ["aws", "gcp", "azure"] as const;

/** The cloud a kind's group ends in (`ec2.aws` → aws). */
function cloudOfGroup(group: string): (typeof CLOUDS)[number] {
  const last = group.slice(group.lastIndexOf(".") + 1);
  const cloud = CLOUDS.find((c) => c === last);
  if (!cloud) throw new Error(`group ${group} does not end in a cloud (${CLOUDS.join(", ")}): say cloud`);
  return cloud;
}

export function defineManagedKind<F extends AnyObjectSchema, A extends AnyObjectSchema>(
  o: ManagedKindOptions<F, A>,
): ManagedKindDef<F, A> {
  return defineManagedKindLazily(o, () => ({ forProvider: o.forProvider, atProvider: o.atProvider }));
}

/**
 * A kind that keeps its tags in a top-level forProvider map named after their format: `tags` (AWS, Azure tag
 * values) or `labels` (Google label values). The placement every hand-written taggable kind uses, checked
 * against the schema when it compiles.
 */
export function defineTaggedKind<
  P extends TagPlacement["format"],
  F extends AnyObjectSchema & { shape: Record<P, unknown> },
  A extends AnyObjectSchema,
>(format: P, o: Omit<ManagedKindOptions<F, A>, "tagging">): ManagedKindDef<F, A> {
  return defineManagedKind({ ...o, tagging: { field: format, format } });
}

/**
 * A managed kind whose zod schemas are built on first use: `schemas` runs once, when forProvider,
 * atProvider, spec, status or secretRefPaths is first read (validation, CRD, docs), never at definition.
 * A process that activates many generated kinds pays only for the kinds it meets (cold start).
 */
export function defineManagedKindLazily<F extends AnyObjectSchema, A extends AnyObjectSchema>(
  o: Omit<ManagedKindOptions<F, A>, "forProvider" | "atProvider">,
  schemas: () => { forProvider: F; atProvider: A },
): ManagedKindDef<F, A> {
  const group = `${o.group}.${API_DOMAIN}`;
  const version = o.version ?? "v1alpha1";
  const cloud = o.cloud ?? cloudOfGroup(o.group);
  const def = {
    group,
    version,
    kind: o.kind,
    plural: o.plural ?? `${o.kind.toLowerCase()}s`,
    namespaced: false,
    apiVersion: `${group}/${version}`,
    cloud,
    description: o.description,
    immutable: (o.immutable ?? []) as string[],
    connectionKeys: o.connectionKeys ?? [],
    externalName: o.externalName ?? "fromAnnotation",
    providerConfig: providerConfigType(cloud),
    ownershipLookup: o.ownershipLookup ?? false,
    references: o.references ?? [],
    fields: o.fields ?? {},
    updateSettleMs: o.updateSettleMs ?? 0,
    ...(o.shortNames ? { shortNames: o.shortNames } : {}),
    ...(o.tagging ? { tagging: o.tagging } : {}),
    ...(o.lacks ? { lacks: o.lacks } : {}),
    scope: "Cluster",
  } as ManagedKindDef<F, A>;
  const built = once(schemas);
  lazily(def, "forProvider", () => built().forProvider);
  lazily(def, "atProvider", () => built().atProvider);
  lazily(def, "spec", () => managedSpec(built().forProvider, o.lacks));
  lazily(def, "status", () => managedStatus(built().atProvider));
  lazily(def, "secretRefPaths", () => localizeSecretRefs(built().forProvider).paths);
  return def;
}

/** `f`, called at most once. */
export function once<T>(f: () => T): () => T {
  let done: { v: T } | undefined;
  return () => {
    done ??= { v: f() };
    return done.v;
  };
}

/**
 * `o[key]` computed on first read, then a plain value. The getter keeps its value in its closure, so a
 * copy of the property (namespacedVariantOf copies descriptors) computes it at most once as well.
 */
function lazily<T extends object, K extends keyof T>(o: T, key: K, compute: () => T[K]): void {
  const value = once(compute);
  Object.defineProperty(o, key, {
    configurable: true,
    enumerable: true,
    get(this: T) {
      const v = value();
      Object.defineProperty(this, key, { value: v, writable: true, configurable: true, enumerable: true });
      return v;
    },
    set(this: T, v: T[K]) {
      Object.defineProperty(this, key, { value: v, writable: true, configurable: true, enumerable: true });
    },
  });
}

const namespacedVariants = new WeakMap<ManagedKindDef, ManagedKindDef>();

/** The type of a kind's namespaced variant (same kind and version, `.m.` group). */
export function namespacedTypeOf<T extends ResourceType>(t: T): ResourceType & { apiVersion: string } {
  const group = namespacedGroupOf(t.group);
  return {
    group,
    version: t.version,
    kind: t.kind,
    plural: t.plural,
    namespaced: true,
    apiVersion: `${group}/${t.version}`,
  };
}

/** A namespaced resource's kind-naming reference: the `.m.` kinds of the cluster-scoped kinds it may name. */
function namespacedAnyKind(of: NonNullable<ReferenceDef["anyKind"]>): NonNullable<ReferenceDef["anyKind"]> {
  const suffix = `.m.${API_DOMAIN}`;
  return (apiVersion, kind) => {
    const [group = "", version = ""] = apiVersion.split("/");
    if (!group.endsWith(suffix)) return undefined;
    const t = of(`${group.slice(0, -suffix.length)}.${API_DOMAIN}/${version}`, kind);
    return t && namespacedTypeOf(t);
  };
}

/**
 * The namespaced (Crossplane v2) variant of a cluster-scoped kind: the same forProvider and atProvider,
 * reconciled by the same provider, in the kind's `.m.` group. References resolve to namespaced kinds in
 * the same namespace; Secret references and the connection Secret stay in the resource's namespace.
 */
export function namespacedVariantOf<F extends AnyObjectSchema, A extends AnyObjectSchema>(
  def: ManagedKindDef<F, A>,
): ManagedKindDef<F, A> {
  if (def.scope === "Namespaced") return def;
  const known = namespacedVariants.get(def);
  if (known) return known as ManagedKindDef<F, A>;
  const type = namespacedTypeOf(def);
  // The descriptors, not the values: a kind's schemas not yet built stay unbuilt (defineManagedKindLazily).
  const variant = Object.defineProperties({}, Object.getOwnPropertyDescriptors(def)) as ManagedKindDef<F, A>;
  Object.assign(variant, type, {
    providerConfig: clusterProviderConfigType(def.cloud),
    providerConfigKinds: {
      ProviderConfig: namespacedProviderConfigType(def.cloud),
      ClusterProviderConfig: clusterProviderConfigType(def.cloud),
    },
    references: def.references.map((r) => ({
      ...r,
      to: namespacedTypeOf(r.to),
      ...(r.anyKind ? { anyKind: namespacedAnyKind(r.anyKind) } : {}),
    })),
    scope: "Namespaced",
  });
  const forProvider = once(() => localizeSecretRefs(def.forProvider));
  lazily(variant, "forProvider", () => forProvider().schema);
  lazily(variant, "spec", () => namespacedManagedSpec(forProvider().schema, def.lacks));
  lazily(variant, "secretRefPaths", () => forProvider().paths);
  namespacedVariants.set(def, variant);
  return variant;
}

/** Which ProviderConfig object a managed resource names: its type, name and (namespaced) namespace. */
export interface ProviderConfigTarget {
  type: ResourceType;
  name: string;
  namespace?: string;
}

export function providerConfigOf(def: ManagedKindDef, mr: ManagedResource): ProviderConfigTarget {
  const ref = mr.spec?.providerConfigRef;
  const name = ref?.name || DEFAULT_PROVIDER_CONFIG;
  if (def.scope !== "Namespaced" || !def.providerConfigKinds) return { type: def.providerConfig, name };
  if (ref?.kind === "ProviderConfig") {
    return { type: def.providerConfigKinds.ProviderConfig, name, namespace: mr.metadata.namespace ?? "" };
  }
  return { type: def.providerConfigKinds.ClusterProviderConfig, name };
}

/** A ProviderConfig object's cache key: `<group>/<kind>/<namespace>/<name>`. */
export const providerConfigKey = (t: ProviderConfigTarget): string =>
  `${t.type.group}/${t.type.kind}/${t.namespace ?? ""}/${t.name}`;

/**
 * A namespaced resource as the engine works with it: its connection Secret and every Secret reference in
 * forProvider and initProvider carry its own namespace (whatever the object says), so the code that reads and writes
 * Secrets never needs to know the shape. Cluster-scoped resources are returned as they are.
 */
export function withOwnNamespace<M extends ManagedResource>(def: ManagedKindDef, mr: M): M {
  if (def.scope !== "Namespaced") return mr;
  const namespace = mr.metadata.namespace ?? "";
  const spec = { ...mr.spec };
  if (spec.writeConnectionSecretToRef) {
    spec.writeConnectionSecretToRef = { name: spec.writeConnectionSecretToRef.name, namespace };
  }
  delete spec.deletionPolicy;
  const localize = <T>(fields: T): T => {
    const out = structuredClone(fields);
    for (const path of def.secretRefPaths) {
      const ref = valueAt(out as Record<string, unknown>, path);
      if (ref && typeof ref === "object" && !Array.isArray(ref))
        (ref as Record<string, unknown>).namespace = namespace;
    }
    return out;
  };
  if (def.secretRefPaths.length > 0) {
    if (spec.forProvider) spec.forProvider = localize(spec.forProvider);
    if (spec.initProvider) spec.initProvider = localize(spec.initProvider);
  }
  return { ...mr, spec };
}

function valueAt(o: Record<string, unknown>, path: string): unknown {
  let cur: unknown = o;
  for (const k of path.split(".")) {
    if (!cur || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** A managed resource as read from the API server. */
export interface ManagedResource<F = Record<string, unknown>, A = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: {
    forProvider: F;
    /** Fields set on create only, then left to others (Crossplane's initProvider); forProvider wins. */
    initProvider?: Partial<F>;
    writeConnectionSecretToRef?: SecretReference;
    providerConfigRef?: { name: string; kind?: "ProviderConfig" | "ClusterProviderConfig" };
    deletionPolicy?: DeletionPolicy;
    managementPolicies?: ManagementAction[];
  };
  status?: {
    atProvider?: A;
    conditions?: Condition[];
    lastExternalUpdate?: LastExternalUpdate;
    lastHandledReconcileAt?: string;
  };
}

/** status.lastExternalUpdate: driftless's last update of the external resource. */
export interface LastExternalUpdate {
  time: string;
  generation: number;
  fields?: string[];
  repeats?: number;
}

export type ForProviderOf<D> = D extends ManagedKindDef<infer F, AnyObjectSchema> ? z.infer<F> : never;
export type AtProviderOf<D> = D extends ManagedKindDef<AnyObjectSchema, infer A> ? z.infer<A> : never;
