// The one provider of every generated Azure kind: Azure Resource Manager driven by resource id and the
// kind's api-version — PUT (create or update), GET, DELETE, POST `{id}/list*` — over ARM's REST API
// (../arm-rest.ts, the one pipeline of every Azure kind), not `GenericResource`, whose serializer drops
// top-level members (zones, etag). Long-running operations are never waited on: a
// PUT or DELETE returns once ARM accepted it, and the next observe reads the resource's provisioningState.
// Decisions: docs/adr/0008-azure-generated-kinds.md.
import { loadAzureCatalog } from "../../../api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../api/azure-gen/kind.ts";
import { parseArmScope } from "../../../api/azure-gen/scope.ts";
import { type AzureKindSpec, variantOf } from "../../../api/azure-gen/spec.ts";
import {
  type ConnectContext,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ManagedKindProvider,
  NotListableError,
  type ObserveManyItem,
} from "../../../api/external.ts";
import { isObject, type Json } from "../../../api/json.ts";
import type { ManagedResource } from "../../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../../api/provider-config.ts";
import { listedAmong, observeListed } from "../../listed-models.ts";
import { secretReader } from "../../secret-refs.ts";
import { ArmRequestError, type ArmRest, armError, armRest } from "../arm-rest.ts";
import { azure, classifyAzureError, isGone } from "../config.ts";
import {
  atProviderOf,
  desiredBody,
  flattenSecrets,
  missingRequired,
  observedOf,
  outSecretsOf,
} from "./model.ts";

type MR = ManagedResource<Json, Json>;

/** The provider's own annotation: the last accepted operation's Azure-AsyncOperation URL, read when it failed. */
export const OPERATION_ANNOTATION = "azure.gen.driftless.dev/operation";
const TERMINAL = new Set(["succeeded", "failed", "canceled"]);

/**
 * The scope an extension type's resource is written under: forProvider.scope, an ARM id in the
 * ProviderConfig's subscription (a resource never leaves its ProviderConfig's subscription, as the home rule
 * says: a scope elsewhere is refused, never followed).
 */
export function scopeOf(spec: AzureKindSpec, subscription: string, fp: Json): string {
  const scope = typeof fp.scope === "string" ? fp.scope : "";
  if (!scope)
    throw new InvalidSpecError(
      `${spec.type} is written under a scope: set spec.forProvider.scope (an Azure resource id), scopeRef or scopeSelector`,
    );
  const at = parseArmScope(scope);
  if ("invalid" in at) throw new InvalidSpecError(`spec.forProvider.scope: ${at.invalid}`);
  if (at.subscription.toLowerCase() !== subscription.toLowerCase())
    throw new InvalidSpecError(
      `spec.forProvider.scope ${scope} is in subscription ${at.subscription}, but the ProviderConfig's subscription is ${subscription}: a resource is written only in its ProviderConfig's subscription. Use a scope in subscription ${subscription}, or a ProviderConfig (spec.providerConfigRef) whose subscriptionID is ${at.subscription}.`,
    );
  return scope;
}

/** The management group a management-group type's resource lives in (forProvider.managementGroupId). */
function managementGroupOf(spec: AzureKindSpec, fp: Json): string {
  const id = typeof fp.managementGroupId === "string" ? fp.managementGroupId : "";
  if (!id)
    throw new InvalidSpecError(
      `${spec.type} lives in a management group: set spec.forProvider.managementGroupId, managementGroupIdRef or managementGroupIdSelector`,
    );
  return `/providers/Microsoft.Management/managementGroups/${encodeURIComponent(id)}`;
}

/**
 * The resource's own name: the fixed one, a name-discriminated union's variant (Microsoft.Web/sites/config:
 * the variant set is the name), else the external name.
 */
export function ownNameOf(spec: AzureKindSpec, fp: Json, name: string): string {
  if (spec.fixedName) return spec.fixedName;
  if (spec.union?.on === "name") {
    const set = variantOf(spec, fp);
    if (!set)
      throw new InvalidSpecError(
        `${spec.type} is named by its variant: set one of spec.forProvider.${Object.values(spec.union.variants).join(", ")}`,
      );
    return set.value;
  }
  return name;
}

/** The resource id of a generated kind's resource: home (or scope), parents and name, as ARM spells the type. */
export function resourceIdOf(spec: AzureKindSpec, subscription: string, fp: Json, name: string): string {
  const [namespace = "", ...segs] = spec.type.split("/");
  const own = ownNameOf(spec, fp, name);
  const sub = `/subscriptions/${encodeURIComponent(subscription)}`;
  if (spec.type.toLowerCase() === "microsoft.resources/resourcegroups")
    return `${sub}/resourceGroups/${encodeURIComponent(own)}`;
  // Above the subscriptions: the tenant's `/providers/…` (the ProviderConfig's tenant: its credentials') or
  // a management group's.
  const where =
    spec.scope === "extension"
      ? scopeOf(spec, subscription, fp)
      : spec.scope === "resourceGroup"
        ? `${sub}/resourceGroups/${encodeURIComponent(String(fp.resourceGroupName ?? ""))}`
        : spec.scope === "tenant"
          ? ""
          : spec.scope === "managementGroup"
            ? managementGroupOf(spec, fp)
            : sub;
  const parts = spec.parents.map((p, i) => `${segs[i]}/${encodeURIComponent(String(fp[p.field] ?? ""))}`);
  return `${where}/providers/${namespace}/${[...parts, `${segs.at(-1)}/${encodeURIComponent(own)}`].join("/")}`;
}

/** The home and parent name fields as the id has them (ARM ids are case-insensitive: the spec's spelling wins). */
function namesOf(spec: AzureKindSpec, id: string, fp: Json): Json {
  const out: Json = {};
  const parts = id.split("/");
  const after = (seg: string) => {
    const i = parts.findIndex((p) => p.toLowerCase() === seg.toLowerCase());
    return i >= 0 ? decodeURIComponent(parts[i + 1] ?? "") : undefined;
  };
  const same = (field: string, v: string | undefined) => {
    if (v === undefined) return;
    const w = fp[field];
    out[field] = typeof w === "string" && w.toLowerCase() === v.toLowerCase() ? w : v;
  };
  if (spec.scope === "resourceGroup") same("resourceGroupName", after("resourceGroups"));
  // A management-group type's id starts with its group's (a parent segment of the same name comes after).
  if (spec.scope === "managementGroup" && /^\/providers\/microsoft\.management\/managementgroups\//i.test(id))
    same("managementGroupId", decodeURIComponent(parts[4] ?? ""));
  if (spec.scope === "extension") {
    // The scope is the id before the type's own `/providers/{namespace}/{type}/` (the last such).
    const own = `/providers/${spec.type.split("/").slice(0, 2).join("/")}/`.toLowerCase();
    const at = id.toLowerCase().lastIndexOf(own);
    if (at > 0) same("scope", id.slice(0, at));
  }
  for (const p of spec.parents) same(p.field, after(p.segment));
  return out;
}

/** Resources one batched check takes (its pages stop as soon as every one of them was seen). */
const LIST_MAX_ITEMS = 1000;
/** GETs in flight at once for the objects a batched check reads alone. */
const READ_CONCURRENCY = 8;

/** Types (lowercased) whose list was seen, in this process, to be refused or to leave out what the plan compares. */
const listFallbacks = new Map<string, string>();

/**
 * How a batched drift check reads this type: `"list"` (its collection in each resource group, paged by
 * nextLink), or why it is one GET per resource — from the spec (where the type lives) and what was seen at
 * run time. Decisions: docs/adr/0013-azure-batched-drift-checks.md.
 */
export function batchedReadOf(spec: AzureKindSpec): "list" | string {
  if (spec.fixedName) return `a singleton (always named ${spec.fixedName}): read per resource`;
  if (spec.union?.on === "name") return "named by its variant (a singleton per variant): read per resource";
  if (spec.scope !== "resourceGroup" || spec.type.toLowerCase() === "microsoft.resources/resourcegroups")
    return "not in a resource group: read per resource";
  return listFallbacks.get(spec.type.toLowerCase()) ?? "list";
}

/**
 * Why a list answer is no list of this type: `"group gone"` (its objects are read alone, and each GET
 * says so), ARM's refusal of the collection (a type without a list operation), or undefined (an error to
 * pass on: throttling, credentials, a server error).
 */
function listRefusal(err: unknown): string | undefined {
  if (!(err instanceof ArmRequestError)) return undefined;
  // The group or the parent the collection is under is gone: not the type refusing to be listed.
  if (["ResourceGroupNotFound", "ParentResourceNotFound", "ResourceNotFound"].includes(err.code ?? ""))
    return "group gone";
  if (err.statusCode === 429 || err.statusCode === 401 || err.statusCode === 403) return undefined;
  if (err.statusCode >= 400 && err.statusCode < 500) return `${err.code ?? err.statusCode}: ${err.message}`;
  return undefined;
}

class ArmGenericClient implements ExternalClient<Json, Json> {
  readonly #arm: ArmRest;
  readonly #spec: AzureKindSpec;
  readonly #read: ConnectContext["readSecretKey"];
  constructor(arm: ArmRest, spec: AzureKindSpec, read: ConnectContext["readSecretKey"]) {
    this.#arm = arm;
    this.#spec = spec;
    this.#read = read;
  }

  #id(mr: MR, name: string) {
    return resourceIdOf(this.#spec, this.#arm.subscription, mr.spec.forProvider, name);
  }

  async #get(mr: MR, name: string): Promise<Json | undefined> {
    const a = await this.#arm.send("GET", this.#id(mr, name), this.#spec.apiVersion);
    if (a.status === 404) {
      const code = isObject(a.body) && isObject(a.body.error) ? a.body.error.code : undefined;
      // A missing subscription is a configuration error, not an absent resource.
      if (code === "SubscriptionNotFound") throw armError(a, this.#spec.type);
      return undefined;
    }
    if (a.status >= 300) throw armError(a, this.#spec.type);
    return isObject(a.body) ? a.body : {};
  }

  async observe(mr: MR, name: string | undefined): Promise<ExternalObservation<Json, Json>> {
    if (!name && !this.#spec.fixedName && this.#spec.union?.on !== "name") return { resourceExists: false };
    const body = await this.#get(mr, name ?? "");
    if (!body) return { resourceExists: false };
    return this.#observation(mr, name ?? "", body, true);
  }

  /**
   * The observation of an ARM document (a GET's answer or a list's item). `functions`: call the type's
   * `list*` functions for the connection Secret (a batched check does not when the object has no Secret).
   */
  async #observation(
    mr: MR,
    name: string,
    body: Json,
    functions: boolean,
  ): Promise<ExternalObservation<Json, Json>> {
    const fp = mr.spec.forProvider;
    const state = String(
      (isObject(body.properties) ? body.properties.provisioningState : undefined) ?? "Succeeded",
    );
    const observed = observedOf(
      this.#spec,
      body,
      fp,
      namesOf(this.#spec, String(body.id ?? this.#id(mr, name)), fp),
    );
    const obs: ExternalObservation<Json, Json> = {
      resourceExists: true,
      observed,
      atProvider: atProviderOf(this.#spec, body),
    };
    const s = state.toLowerCase();
    if (s === "succeeded") {
      obs.availability = "Available";
      const details = {
        ...outSecretsOf(this.#spec, body),
        ...(functions ? await this.#functions(mr, name) : {}),
      };
      if (Object.keys(details).length > 0) obs.connectionDetails = details;
    } else if (s === "failed" || s === "canceled") {
      obs.availability = "Unavailable";
      obs.message = await this.#operationError(mr, state);
    } else {
      obs.availability = s === "deleting" ? "Deleting" : "Creating";
      // ARM refuses a PUT while an operation runs: nothing is compared until it ends.
      obs.resourceUpToDate = true;
    }
    return obs;
  }

  /** The failed operation's own error (Azure-AsyncOperation), when the create or update recorded one. */
  async #operationError(mr: MR, state: string): Promise<string> {
    const url = mr.metadata.annotations?.[OPERATION_ANNOTATION];
    if (url?.startsWith(this.#arm.endpoint)) {
      const a = await this.#arm.send("GET", url);
      const e = isObject(a.body) && isObject(a.body.error) ? a.body.error : undefined;
      if (e) return `provisioningState ${state}: ${String(e.code ?? "")}: ${String(e.message ?? "")}`;
    }
    return `provisioningState ${state}`;
  }

  /** `list*` functions whose answers are secrets (listKeys…): their strings for the connection Secret. */
  async #functions(mr: MR, name: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const fn of this.#spec.functions) {
      const a = await this.#arm.send("POST", `${this.#id(mr, name)}/${fn}`, this.#spec.apiVersion);
      if (a.status >= 300) throw armError(a, `${this.#spec.type} ${fn}`);
      flattenSecrets(a.body, "", out);
    }
    return out;
  }

  /**
   * The batched drift check (docs/adr/0013-azure-batched-drift-checks.md): the type's collection in each
   * resource group the objects name, page by page (stopping once every object asked about was seen), each
   * listed document observed as a GET's would be. An object the list does not show, or shows without
   * something the plan compares, is read alone with observe — an absence or a difference is only ever
   * concluded from a GET — and so is one whose connection Secret holds `list*` function answers. When such
   * a read carries what the list left out, the type is read per resource from then on (batchedReadOf).
   */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<Json, Json>>,
  ): Promise<Array<ExternalObservation<Json, Json> | Error>> {
    const spec = this.#spec;
    const listed = batchedReadOf(spec) === "list" ? await this.#listed(items) : new Map<string, Json>();
    return observeListed(items, {
      listed: async ({ mr, externalName }) => {
        const m = mr as MR;
        const body = listed.get(this.#id(m, externalName).toLowerCase());
        if (!body || (spec.functions.length > 0 && m.spec.writeConnectionSecretToRef)) return undefined;
        return this.#observation(m, externalName, body, false);
      },
      observe: ({ mr, externalName }) => this.observe(mr as MR, externalName),
      // Secrets and write-only inputs are the spec's own in any observation (observedOf): always carried.
      compared: (k) => spec.body[k] !== undefined,
      incomplete: (omitted) =>
        listFallbacks.set(
          spec.type.toLowerCase(),
          `its list left out ${omitted.slice(0, 3).join(", ")}, which a GET returns`,
        ),
      concurrency: READ_CONCURRENCY,
    });
  }

  /**
   * The listed documents of the objects' collections that are among the objects, by lowercased id: a
   * top-level type's collection in each resource group, a child type's under each parent (`{parent id}/{type}`).
   */
  async #listed(items: ReadonlyArray<ObserveManyItem<Json, Json>>): Promise<Map<string, Json>> {
    const collections = new Map<string, { path: string; wanted: Set<string> }>();
    for (const { mr, externalName } of items) {
      const m = mr as MR;
      if (typeof m.spec.forProvider.resourceGroupName !== "string" || !m.spec.forProvider.resourceGroupName)
        continue;
      if (this.#spec.parents.some((p) => typeof m.spec.forProvider[p.field] !== "string")) continue;
      let id: string;
      try {
        id = this.#id(m, externalName);
      } catch {
        continue; // read alone, where observe says what is wrong
      }
      const path = id.slice(0, id.lastIndexOf("/"));
      const c = collections.get(path.toLowerCase()) ?? { path, wanted: new Set<string>() };
      c.wanted.add(id.toLowerCase());
      collections.set(path.toLowerCase(), c);
    }
    const out = new Map<string, Json>();
    for (const c of collections.values()) {
      try {
        for (const [id, doc] of await listedAmong(this.#pages(c.path), c.wanted)) out.set(id, doc);
      } catch (err) {
        const refused = listRefusal(err);
        if (refused === "group gone") continue;
        if (!refused) throw classifyAzureError(err);
        listFallbacks.set(this.#spec.type.toLowerCase(), `ARM refused its list: ${refused}`);
        break;
      }
    }
    return out;
  }

  /** One collection of the type (in a resource group, or under a parent), page by page: its documents by lowercased id. */
  async *#pages(path: string): AsyncGenerator<Map<string, Json>> {
    for await (const page of this.#arm.pages<Json>(path, this.#spec.apiVersion))
      yield new Map(
        page.filter((d) => typeof d.id === "string").map((d) => [String(d.id).toLowerCase(), d] as const),
      );
  }

  /**
   * Every resource of the type in the subscription (`driftless import`): a resource-group type group by
   * group, a subscription one in one list; a child type under each parent, the parents listed level by
   * level (each with its own type's api-version: ARM checks it per type).
   */
  async list(): Promise<ExternalListing[]> {
    const spec = this.#spec;
    if (spec.scope === "extension")
      throw new NotListableError(`an extension type (${spec.type}): listed per scope`);
    if (spec.scope === "managementGroup")
      throw new NotListableError(`a management-group type (${spec.type}): listed per management group`);
    if (spec.union?.on === "name")
      throw new NotListableError(`${spec.type} is named by its variant: read through its parent`);
    if (spec.fixedName)
      throw new NotListableError(
        `a singleton child (${spec.fixedName}) of ${spec.parents.map((p) => p.segment).join("/")}: read through its parent`,
      );
    const parentApis = spec.parents.map((p) => {
      const api = loadAzureCatalog().kinds.find(
        (k) => k.type.toLowerCase() === p.type.toLowerCase(),
      )?.apiVersion;
      if (!api)
        throw new NotListableError(
          `its parent type ${p.type} is not generated: no api-version to list it with`,
        );
      return api;
    });
    const listing = (
      item: Json,
      group: string | undefined,
      parent: Record<string, string>,
    ): ExternalListing[] => {
      if (typeof item.name !== "string") return [];
      const location =
        "location" in spec.body && typeof item.location === "string" ? item.location : undefined;
      return [
        {
          externalName: item.name,
          forProvider: {
            ...(group ? { resourceGroupName: group } : {}),
            ...parent,
            ...(location ? { location } : {}),
          },
          // A name is unique only in its resource group (and a child's in its parent): import names the
          // object by them and holds it as managed only by a managed resource in the same place.
          ...(group || spec.parents.length > 0
            ? { parent: [...(group ? ["resourceGroupName"] : []), ...Object.keys(parent)] }
            : {}),
        },
      ];
    };
    const [namespace = "", ...segs] = spec.type.split("/");
    const arm = this.#arm;
    /** The items below `base` level by level: the parents' names, then this type's items. */
    const walk = async function* (
      base: string,
      depth: number,
      parent: Record<string, string>,
    ): AsyncGenerator<{ item: Json; parent: Record<string, string> }> {
      const collection = `${base}/${segs[depth]}`;
      const api = depth < parentApis.length ? (parentApis[depth] as string) : spec.apiVersion;
      try {
        for await (const page of arm.pages<Json>(collection, api))
          for (const item of page) {
            if (depth === parentApis.length) yield { item, parent };
            else if (typeof item.name === "string")
              yield* walk(`${collection}/${encodeURIComponent(item.name)}`, depth + 1, {
                ...parent,
                [(spec.parents[depth] as { field: string }).field]: item.name,
              });
          }
      } catch (err) {
        // A parent deleted between two lists has no children.
        if (depth === 0 || !isGone(err)) throw err;
      }
    };
    const out: ExternalListing[] = [];
    await azure(async () => {
      if (
        spec.scope === "resourceGroup" &&
        spec.type.toLowerCase() !== "microsoft.resources/resourcegroups"
      ) {
        for await (const group of arm.groups()) {
          const base = arm.sub(`/resourceGroups/${encodeURIComponent(group)}/providers/${namespace}`);
          for await (const { item, parent } of walk(base, 0, {})) out.push(...listing(item, group, parent));
        }
      } else if (spec.parents.length > 0) {
        const base = spec.scope === "tenant" ? `/providers/${namespace}` : arm.sub(`/providers/${namespace}`);
        for await (const { item, parent } of walk(base, 0, {})) out.push(...listing(item, undefined, parent));
      } else {
        const path = resourceIdOf(spec, arm.subscription, {}, "").replace(/\/[^/]*$/, "");
        for await (const page of arm.pages<Json>(path, spec.apiVersion))
          for (const item of page) out.push(...listing(item, undefined, {}));
      }
    });
    return out;
  }

  async #put(mr: MR, name: string) {
    const spec = this.#spec;
    const body = await desiredBody(spec, mr.spec.forProvider, secretReader(this.#read));
    return this.#arm.send("PUT", this.#id(mr, name), spec.apiVersion, body);
  }

  async create(mr: MR, name: string | undefined) {
    if (!name && !this.#spec.fixedName && this.#spec.union?.on !== "name")
      throw new InvalidSpecError(`${this.#spec.type} needs a name (crossplane.io/external-name)`);
    const missing = missingRequired(this.#spec, mr.spec.forProvider);
    if (missing.length > 0)
      throw new InvalidSpecError(
        `${this.#spec.type} needs spec.forProvider.${missing.join(", spec.forProvider.")} to be created`,
      );
    const a = await this.#put(mr, name ?? "");
    if (a.status >= 300) throw armError(a, this.#spec.type);
    const op = a.headers.get("azure-asyncoperation");
    return op ? { annotations: { [OPERATION_ANNOTATION]: op } } : {};
  }

  async update(mr: MR, name: string) {
    // ARM's PUT is create-or-update of the whole resource: the spec (late-initialized) is the whole body.
    const a = await this.#put(mr, name);
    if (a.status >= 300) throw armError(a, this.#spec.type);
    return {};
  }

  async delete(mr: MR, name: string) {
    const a = await this.#arm.send("DELETE", this.#id(mr, name), this.#spec.apiVersion);
    // 202: accepted; the engine requeues (Ready=False, Deleting) until observe no longer finds it.
    if (a.status === 404 || a.status < 300) return;
    throw armError(a, this.#spec.type);
  }
}

/** Whether a provisioningState ends an operation (for callers that wait, such as tests). */
export const isTerminalState = (s: string) => TERMINAL.has(s.toLowerCase());

/** The provider of one generated kind. */
export function armGenericProvider(spec: AzureKindSpec): ManagedKindProvider {
  return {
    definition: azureGenKindOf(spec),
    limitsEachRequest: true,
    // A child type's id is built under its parents' names (a Key Vault secret's vaultName).
    homeParents: Object.fromEntries(spec.parents.map((p) => [p.field, p.field])),
    ...(batchedReadOf(spec) === "list"
      ? {
          observeMany: {
            calls:
              "the type's list in each resource group (a child type's under each parent), paged (a GET for one it does not show whole)",
            maxItems: LIST_MAX_ITEMS,
          },
        }
      : {}),
    async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
      return new ArmGenericClient(await armRest(ctx), spec, (ref) =>
        ctx.readSecretKey(ref),
      ) as unknown as ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    },
  };
}
