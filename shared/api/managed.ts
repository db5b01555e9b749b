import { z } from "zod";
import {
  API_DOMAIN,
  Condition,
  DEFAULT_PROVIDER_CONFIG,
  DeletionPolicy,
  ManagementAction,
  type ObjectMeta,
  type ResourceType,
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
  /** Cloud name for the CRD category and the ProviderConfig group: aws, gcp, azure. */
  cloud: "aws" | "gcp" | "azure";
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
}

export const ProviderConfigReference = z
  .object({ name: z.string().min(1).describe("Name of the ProviderConfig.") })
  .describe("The ProviderConfig that holds the credentials for this resource.");

/** The spec fields every managed kind shares, Crossplane's ResourceSpec. */
export function managedSpec<F extends AnyObjectSchema>(forProvider: F) {
  return z
    .object({
      forProvider: forProvider.describe("The desired state of the external resource."),
      writeConnectionSecretToRef: SecretReference.optional().describe(
        "Where to write the connection details (endpoints, credentials) of the external resource.",
      ),
      providerConfigRef: ProviderConfigReference.default({ name: DEFAULT_PROVIDER_CONFIG }),
      deletionPolicy: DeletionPolicy.default("Delete").describe(
        "What happens to the external resource when this managed resource is deleted: Delete or Orphan.",
      ),
      managementPolicies: z
        .array(ManagementAction)
        .default(["*"])
        .describe(
          "Which actions driftless may take on the external resource: Observe, Create, Update, Delete, LateInitialize or *.",
        ),
    })
    .describe("The desired state of the managed resource and how driftless manages it.");
}

export function managedStatus<A extends AnyObjectSchema>(atProvider: A) {
  return z
    .object({
      atProvider: atProvider.optional().describe("The observed state of the external resource."),
      conditions: z.array(Condition).optional().describe("Ready and Synced conditions."),
      lastExternalUpdate: z
        .object({
          time: z.string().describe("When driftless last updated the external resource (RFC3339)."),
          generation: z.number().int().describe("The metadata.generation it updated to."),
        })
        .optional()
        .describe(
          "The last update of the external resource, for kinds whose cloud shows updates only after a while: drift seen before then is not updated again.",
        ),
      lastHandledReconcileAt: z
        .string()
        .optional()
        .describe(
          "The value of the crossplane.io/reconcile-requested-at annotation the last reconcile handled: equal to the annotation once a requested reconcile has run.",
        ),
    })
    .describe("The observed state of the managed resource, written by driftless.");
}

export function providerConfigType(cloud: string): ResourceType {
  return {
    group: `${cloud}.${API_DOMAIN}`,
    version: "v1alpha1",
    kind: "ProviderConfig",
    plural: "providerconfigs",
    namespaced: false,
  };
}

export function defineManagedKind<F extends AnyObjectSchema, A extends AnyObjectSchema>(
  o: ManagedKindOptions<F, A>,
): ManagedKindDef<F, A> {
  const group = `${o.group}.${API_DOMAIN}`;
  const version = o.version ?? "v1alpha1";
  return {
    group,
    version,
    kind: o.kind,
    plural: o.plural ?? `${o.kind.toLowerCase()}s`,
    namespaced: false,
    apiVersion: `${group}/${version}`,
    cloud: o.cloud,
    description: o.description,
    forProvider: o.forProvider,
    atProvider: o.atProvider,
    spec: managedSpec(o.forProvider),
    status: managedStatus(o.atProvider),
    immutable: (o.immutable ?? []) as string[],
    connectionKeys: o.connectionKeys ?? [],
    externalName: o.externalName ?? "fromAnnotation",
    providerConfig: providerConfigType(o.cloud),
    ownershipLookup: o.ownershipLookup ?? false,
    references: o.references ?? [],
    fields: o.fields ?? {},
    updateSettleMs: o.updateSettleMs ?? 0,
    ...(o.shortNames ? { shortNames: o.shortNames } : {}),
  };
}

/** A managed resource as read from the API server. */
export interface ManagedResource<F = Record<string, unknown>, A = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: {
    forProvider: F;
    writeConnectionSecretToRef?: SecretReference;
    providerConfigRef?: { name: string };
    deletionPolicy?: DeletionPolicy;
    managementPolicies?: ManagementAction[];
  };
  status?: {
    atProvider?: A;
    conditions?: Condition[];
    lastExternalUpdate?: { time: string; generation: number };
    lastHandledReconcileAt?: string;
  };
}

export type ForProviderOf<D> = D extends ManagedKindDef<infer F, AnyObjectSchema> ? z.infer<F> : never;
export type AtProviderOf<D> = D extends ManagedKindDef<AnyObjectSchema, infer A> ? z.infer<A> : never;
