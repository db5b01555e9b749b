import type { z } from "zod";
import { namedError } from "../named-error.ts";
import type { CloudEventsDeclaration } from "./cloud-events.ts";
import {
  type AnyObjectSchema,
  type ManagedKindDef,
  type ManagedResource,
  namespacedVariantOf,
} from "./managed.ts";
import { Annotations, type SecretKeySelector } from "./meta.ts";
import { type ProviderConfig, providerConfigs, v2ProviderConfigs } from "./provider-config.ts";

/** Connection details as published to the connection Secret: key → value. */
export type ConnectionDetails = Record<string, string>;

/** Whether the external resource can be used, as Crossplane's Ready condition reasons. */
export type Availability = "Available" | "Creating" | "Unavailable" | "Deleting";

/** What the provider saw of the external resource, Crossplane's ExternalObservation. */
export interface ExternalObservation<F, A> {
  resourceExists: boolean;
  /** The cloud's state in forProvider's shape: drives late-initialization, drift and immutability checks. */
  observed?: Partial<F>;
  /** Overrides the engine's comparison of spec.forProvider with `observed` (fields the cloud cannot show). */
  resourceUpToDate?: boolean;
  atProvider?: A;
  availability?: Availability;
  /** Why the resource is not available, when the cloud says. */
  message?: string;
  connectionDetails?: ConnectionDetails;
  /**
   * The external name the provider found the resource by, when the annotation had none (a
   * provider-chosen id looked up by a tag carrying the managed resource's uid): the engine records it.
   */
  externalName?: string;
}

export interface ExternalCreation {
  /** The name the cloud chose (provider-chosen names: ids such as vpc-…). */
  externalName?: string;
  connectionDetails?: ConnectionDetails;
  /**
   * Annotations of the provider's own the engine records with the create's result, in the same write
   * (e.g. the token of an asynchronous create request, for observe to follow). Never crossplane.io/ ones.
   */
  annotations?: Record<string, string>;
}

export interface ExternalUpdate {
  connectionDetails?: ConnectionDetails;
  /**
   * Annotations of the provider's own the engine records after the update (what it applied that the cloud
   * cannot answer again, e.g. the statements appended to a database). Never crossplane.io/ ones.
   */
  annotations?: Record<string, string>;
}

/**
 * Where an external resource lives, as the client connected for it would reach it: the cloud's own words
 * as keys (`account`, `region` on AWS; `subscription`, `resourceGroup`, `location` on Azure; `project`,
 * `location` on Google Cloud; `endpoint` when a ProviderConfig overrides one) and their values. The engine
 * records it at create or import (`driftless.dev/home`) and refuses, never follows, a reconcile whose
 * client would reach another home: a changed region, account, project, subscription or location.
 */
export type Home = Readonly<Record<string, string>>;

// A plan reads the record up to twice per look (a batched check: per object, of a few distinct texts — one
// per account and region): each text is parsed once, its Home frozen and shared.
const homesByText = new Map<string, Home>();
const MAX_HOME_TEXTS = 256;

/** The home recorded at create or import (Annotations.home), or undefined. */
export function recordedHome(mr: ManagedResource<unknown, unknown>): Home | undefined {
  const raw = mr.metadata.annotations?.[Annotations.home];
  if (!raw) return undefined;
  let home = homesByText.get(raw);
  if (!home) {
    home = Object.freeze(parseHome(raw));
    if (homesByText.size >= MAX_HOME_TEXTS) homesByText.clear();
    homesByText.set(raw, home);
  }
  return home;
}

/** A home record's text as a Home: its string members; unreadable text as { "": text } (a changed home). */
function parseHome(raw: string): Home {
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === "string")) as Home;
  } catch {
    // An unreadable record is treated as a changed home, never as none: see reconciler/plan.ts homeChanges.
  }
  return { "": raw };
}

/**
 * One managed kind's link to its cloud, Crossplane's ExternalClient. `mr.spec.forProvider` is already
 * validated and late-initialized; the external name is `externalName` (undefined only for a
 * provider-chosen name before create).
 */
export interface ExternalClient<F, A> {
  observe(mr: ManagedResource<F, A>, externalName: string | undefined): Promise<ExternalObservation<F, A>>;
  create(mr: ManagedResource<F, A>, externalName: string | undefined): Promise<ExternalCreation>;
  update(
    mr: ManagedResource<F, A>,
    externalName: string,
    observed: ExternalObservation<F, A>,
  ): Promise<ExternalUpdate>;
  delete(mr: ManagedResource<F, A>, externalName: string): Promise<void>;
  /**
   * Where this client would find or make the resource (see Home): from the ProviderConfig's identity
   * (the account its credentials resolve to, cached per ProviderConfig) and the resource's own home
   * fields (region, location, resource group…). No call to the resource itself.
   */
  home?(mr: ManagedResource<F, A>): Promise<Home>;
  /**
   * The batched drift check, present exactly when the kind's provider declares `observeMany`: observes
   * many resources of this client's ProviderConfig with the cloud's list/describe calls, each result
   * equal to what `observe` returns for that resource alone (a resource the cloud does not list:
   * `resourceExists: false`). The engine passes at most the provider's `observeMany.maxItems` items.
   * Returns one entry per item, in order: its observation, or an Error for that item alone. Throws when
   * the whole call failed (a ThrottledError makes the engine split the batch and back off). Awaits
   * `ctx.rateLimit()` before each request it sends, so the rate limit counts cloud calls, not resources.
   */
  observeMany?(
    items: ReadonlyArray<ObserveManyItem<F, A>>,
  ): Promise<Array<ExternalObservation<F, A> | Error>>;
  /**
   * Every resource of this kind where the client reaches (its ProviderConfig's account and region), with
   * the cloud's list calls, for `driftless import`: its external name and the spec fields that say where
   * it lives (region …). Present on kinds that can be discovered.
   */
  list?(ctx?: ListContext): Promise<ExternalListing[]>;
}

/** What `driftless import` offers a kind's `list` besides the cloud. */
export interface ListContext {
  /**
   * The managed resources of a kind (either shape) of the importing ProviderConfig, when parents are read
   * from the cluster (`--parents managed`): a child type is then listed under those only, without listing
   * its parent types in the cloud. Absent: parents are listed in the cloud.
   */
  managed?: (def: ManagedKindDef) => Promise<ManagedResource[]>;
  /**
   * The parent to list under (`--parent organizations/1`): a kind whose parent is a spec field (a generated
   * Google Folder, Project, TagKey) lists what lies directly under it; absent, such a kind is not listable.
   */
  parent?: string;
}

/**
 * Whether a resource name fits a name pattern of `*` segments (`folders/*` holds `folders/123`, not
 * `folders/1/x`; `projects/*\/locations/*` holds `projects/p/locations/l`).
 */
export function fitsPattern(pattern: string, name: string): boolean {
  const t = pattern.split("/");
  const n = name.split("/");
  return t.length === n.length && t.every((x, i) => (x === "*" ? Boolean(n[i]) : x === n[i]));
}

/** A kind whose client cannot list what exists (yet): `driftless import` names it and goes on. */
export class NotListableError extends namedError("NotListableError", Error) {}

/** One resource found by a kind's `list`. */
export interface ExternalListing {
  externalName: string;
  /** The forProvider fields an Observe-only managed resource needs to find it (its home fields). */
  forProvider: Record<string, unknown>;
  /**
   * A child's forProvider field(s) naming its parent (a Cloud SQL database's `instance`; a subnet's
   * `resourceGroupName` and `virtualNetworkName`), when the external name is unique only within that parent:
   * a managed resource holds it only when it names the same parent, and the object written is named after
   * the parent too.
   */
  parent?: string | readonly string[];
  /**
   * The same resource under the other external name a managed resource of the kind may hold (a Google
   * resource's full name beside its id within the parent): a managed resource holding that one holds it too.
   */
  alsoNamed?: { externalName: string; parent?: string | readonly string[] };
  /**
   * Its full name where resources of kinds whose parent is a spec field may lie under it (ManagedKindProvider
   * listsUnder: a Folder's `folders/1`, a Project's `projects/<number>`): `driftless import --depth` lists them there.
   */
  fullName?: string;
}

/** One resource of a batched observe: the managed resource and its (recorded) external name. */
export interface ObserveManyItem<F, A> {
  mr: ManagedResource<F, A>;
  externalName: string;
}

/** What a provider gets to build a client: the ProviderConfig and a way to read the Secret keys it names. */
export interface ConnectContext<S = Record<string, unknown>> {
  providerConfig: ProviderConfig<S>;
  readSecretKey(ref: SecretKeySelector): Promise<string>;
  /**
   * The engine's rate limit for this ProviderConfig: resolves when one more cloud call may go out.
   * Providers that declare `limitsEachRequest` await it before every request (SDK retries included).
   */
  rateLimit?(): Promise<void>;
}

/** Errors a provider throws to say what kind of failure it was; the engine branches on type, not text. */
export class ExternalError extends namedError("ExternalError", Error) {}
/** `name` of ThrottledError, for code that sees only an error's class name (metrics). */
export const THROTTLED_ERROR_CLASS = "ThrottledError";
/** The cloud throttled us: the engine backs off (with jitter) and reports it in Synced. */
export class ThrottledError extends namedError("ThrottledError", ExternalError) {}
/**
 * The cloud refused a delete because something still depends on the resource (subnets in a VPC, a
 * group still in use): the engine keeps Ready=False Deleting with the reason and retries soon.
 */
export class DependentsExistError extends namedError("DependentsExistError", ExternalError) {}
/**
 * Not yet: something the resource needs is not there or not ready (a referenced resource, a network's
 * private services connection still being made). A wait, not a failure: the engine looks again soon and
 * the queue never dead-letters it.
 */
export class DependencyNotReadyError extends namedError("DependencyNotReadyError", ExternalError) {}
/** The request can never succeed as specified (bad field value): no fast retry, clear message. */
export class InvalidSpecError extends namedError("InvalidSpecError", ExternalError) {}
/** The credentials were refused: the message names the ProviderConfig. */
export class CredentialsError extends namedError("CredentialsError", ExternalError) {}

/**
 * An AWS IAM statement a provider's SDK calls need when it runs as the function's own role
 * (InjectedIdentity): serverless.yml's reconcile role is generated from these (npm run gen:kinds).
 * Statements of several kinds that share a `sid` merge into one: their actions, resources and condition
 * values are unioned, so share a sid only where each action applies to its own resource type.
 */
export interface IamStatement {
  sid: string;
  actions: string[];
  /**
   * ARN patterns with the placeholders `{partition}`, `{account}` and `{namePrefix}` (the stage's
   * managedNamePrefix); "*" only for calls AWS defines without resource-level permissions.
   */
  resources: string[];
  /** IAM condition block: operator → key → value(s). */
  condition?: Record<string, Record<string, string | string[]>>;
  /** Why the statement is shaped this way: written above it in serverless.yml. */
  comment?: string;
}

/** A managed kind as the engine sees it: its definition plus how to reach its cloud. */
export interface ManagedKindProvider<F = Record<string, unknown>, A = Record<string, unknown>> {
  // biome-ignore lint/suspicious/noExplicitAny: definitions are heterogeneous; F and A type the client
  definition: import("./managed.ts").ManagedKindDef<any, any>;
  // biome-ignore lint/suspicious/noExplicitAny: each cloud's ProviderConfig spec type differs
  connect(ctx: ConnectContext<any>): Promise<ExternalClient<F, A>>;
  /**
   * The client awaits `ctx.rateLimit()` before each cloud request. Otherwise the engine awaits it once
   * per external operation (observe, create, update, delete), which may make several requests.
   */
  limitsEachRequest?: boolean;
  /**
   * The kind's batched drift check: which list/describe calls its client's `observeMany` makes and how
   * many resources one call covers (shown in the README's kind table). Absent: one observe per resource.
   */
  observeMany?: { calls: string; maxItems: number };
  /** AWS IAM statements its calls need under InjectedIdentity (AWS kinds; generated into serverless.yml). */
  iam?: readonly IamStatement[];
  /**
   * The forProvider fields naming a parent the resource's id is built under (a Subnet's
   * `virtualNetworkName`, a Cloud SQL database's `instance`), each with its key in the home: another parent
   * would be another resource, so the parent is part of the home and a changed one is refused, never
   * followed. The cloud's home function reads it (providers/home.ts withHome).
   */
  homeParents?: Readonly<Record<string, string>>;
  /**
   * A kind whose parent is a spec field: the name patterns of the parents its `list` takes in
   * ListContext.parent (`organizations/*`, `folders/*`). `driftless import --depth` lists it under every
   * resource found whose full name fits one (see fitsPattern).
   */
  listsUnder?: readonly string[];
  /**
   * Which cloud audit events can change a resource of this kind and where its external name is in one
   * (docs/cloud-events.md): an event becomes a reconcile of the resource in seconds, not at the next poll.
   */
  cloudEvents?: CloudEventsDeclaration;
}

/**
 * A managed kind's provider, typed by its forProvider/atProvider shapes where it is written and
 * type-erased for the registries: the engine hands the client only objects it has validated against
 * `definition`, so the client's F and A hold at run time.
 */
export function defineProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(
  provider: ManagedKindProvider<z.infer<FS>, z.infer<AS>> & { definition: ManagedKindDef<FS, AS> },
): ManagedKindProvider {
  // The one place the erasure happens: a registry holds kinds of every shape.
  return provider as unknown as ManagedKindProvider;
}

/** A cloud's cheap credential check (STS GetCallerIdentity, a token fetch…); resolves to who we are. */
export type CredentialCheck = (ctx: ConnectContext) => Promise<string>;

/** A cloud's ProviderConfig kind and how to check its credentials. */
export interface ProviderConfigKind {
  cloud: string;
  type: import("./meta.ts").ResourceType;
  check: CredentialCheck;
  /** AWS IAM statements the check needs under InjectedIdentity (generated into serverless.yml). */
  iam?: readonly IamStatement[];
}

/**
 * A cloud's three ProviderConfig kinds: the cluster-scoped one of the v1 shape (`<cloud>.driftless.dev`)
 * and, for the namespaced kinds, the namespaced ProviderConfig and the ClusterProviderConfig
 * (`<cloud>.m.driftless.dev`), all checked the same way. The check is typed by the cloud's ProviderConfig
 * spec: the engine passes it only ProviderConfigs of that cloud, validated against that spec.
 */
export function providerConfigKindsOf<S>(
  cloud: keyof typeof providerConfigs,
  check: (ctx: ConnectContext<S>) => Promise<string>,
  iam?: readonly IamStatement[],
): ProviderConfigKind[] {
  const kind = { cloud, check: check as unknown as CredentialCheck, ...(iam ? { iam } : {}) };
  const v2 = v2ProviderConfigs[cloud];
  return [providerConfigs[cloud].type, v2.namespaced.type, v2.cluster.type].map((type) => ({
    ...kind,
    type,
  }));
}

/**
 * Every kind twice: the cluster-scoped (Crossplane v1) shape as written, and its namespaced (Crossplane
 * v2) variant in the `.m.` group, reconciled by the same provider.
 */
export function withNamespacedVariants(providers: readonly ManagedKindProvider[]): ManagedKindProvider[] {
  return [...providers, ...providers.map((p) => ({ ...p, definition: namespacedVariantOf(p.definition) }))];
}
