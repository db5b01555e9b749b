// The one provider of every generated Azure kind: Azure Resource Manager driven by resource id and the
// kind's api-version — PUT (create or update), GET, DELETE, POST `{id}/list*` — over ARM's REST API
// (../arm-rest.ts, the one pipeline of every Azure kind), not `GenericResource`, whose serializer drops
// top-level members (zones, etag). Long-running operations are never waited on: a
// PUT or DELETE returns once ARM accepted it, and the next observe reads the resource's provisioningState.
// Decisions: docs/adr/0008-azure-generated-kinds.md.
import { azureGenKindOf } from "../../../api/azure-gen/kind.ts";
import { parseArmScope } from "../../../api/azure-gen/scope.ts";
import type { AzureKindSpec } from "../../../api/azure-gen/spec.ts";
import {
  type ConnectContext,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
  type ManagedKindProvider,
  NotListableError,
} from "../../../api/external.ts";
import type { ManagedResource } from "../../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../../api/provider-config.ts";
import { secretReader } from "../../secret-refs.ts";
import { type ArmRest, armError, armRest } from "../arm-rest.ts";
import { azure } from "../config.ts";
import {
  atProviderOf,
  desiredBody,
  flattenSecrets,
  missingRequired,
  observedOf,
  outSecretsOf,
} from "./model.ts";

type Json = Record<string, unknown>;
type MR = ManagedResource<Json, Json>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

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

/** The resource id of a generated kind's resource: home (or scope), parents and name, as ARM spells the type. */
export function resourceIdOf(spec: AzureKindSpec, subscription: string, fp: Json, name: string): string {
  const [namespace = "", ...segs] = spec.type.split("/");
  const own = spec.fixedName ?? name;
  const sub = `/subscriptions/${encodeURIComponent(subscription)}`;
  if (spec.type.toLowerCase() === "microsoft.resources/resourcegroups")
    return `${sub}/resourceGroups/${encodeURIComponent(own)}`;
  const where =
    spec.scope === "extension"
      ? scopeOf(spec, subscription, fp)
      : spec.scope === "resourceGroup"
        ? `${sub}/resourceGroups/${encodeURIComponent(String(fp.resourceGroupName ?? ""))}`
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
  if (spec.scope === "extension") {
    // The scope is the id before the type's own `/providers/{namespace}/{type}/` (the last such).
    const own = `/providers/${spec.type.split("/").slice(0, 2).join("/")}/`.toLowerCase();
    const at = id.toLowerCase().lastIndexOf(own);
    if (at > 0) same("scope", id.slice(0, at));
  }
  for (const p of spec.parents) same(p.field, after(p.segment));
  return out;
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
    if (!name && !this.#spec.fixedName) return { resourceExists: false };
    const body = await this.#get(mr, name ?? "");
    if (!body) return { resourceExists: false };
    const fp = mr.spec.forProvider;
    const state = String(
      (isObject(body.properties) ? body.properties.provisioningState : undefined) ?? "Succeeded",
    );
    const observed = observedOf(
      this.#spec,
      body,
      fp,
      namesOf(this.#spec, String(body.id ?? this.#id(mr, name ?? "")), fp),
    );
    const obs: ExternalObservation<Json, Json> = {
      resourceExists: true,
      observed,
      atProvider: atProviderOf(this.#spec, body),
    };
    const s = state.toLowerCase();
    if (s === "succeeded") {
      obs.availability = "Available";
      const details = { ...outSecretsOf(this.#spec, body), ...(await this.#functions(mr, name ?? "")) };
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
   * Every resource of the type in the subscription (`driftless import`): a resource-group type group by
   * group, a subscription one in one list. A child type is listed per parent (not yet).
   */
  async list(): Promise<ExternalListing[]> {
    const spec = this.#spec;
    if (spec.scope === "extension")
      throw new NotListableError(`an extension type (${spec.type}): listed per scope`);
    if (spec.parents.length > 0 || spec.fixedName)
      throw new NotListableError(
        `a child of ${spec.parents.map((p) => p.segment).join("/") || "its parent"}: listed per parent`,
      );
    const listing = (item: Json, group?: string): ExternalListing[] => {
      if (typeof item.name !== "string") return [];
      const location =
        "location" in spec.body && typeof item.location === "string" ? item.location : undefined;
      return [
        {
          externalName: item.name,
          forProvider: { ...(group ? { resourceGroupName: group } : {}), ...(location ? { location } : {}) },
        },
      ];
    };
    const out: ExternalListing[] = [];
    const arm = this.#arm;
    await azure(async () => {
      if (
        spec.scope === "resourceGroup" &&
        spec.type.toLowerCase() !== "microsoft.resources/resourcegroups"
      ) {
        const collection = (g: string) =>
          arm.sub(`/resourceGroups/${encodeURIComponent(g)}/providers/${spec.type}`);
        for await (const { group, item } of arm.eachInGroups<Json>(collection, spec.apiVersion))
          out.push(...listing(item, group));
      } else {
        const path = resourceIdOf(spec, arm.subscription, {}, "").replace(/\/[^/]*$/, "");
        for await (const page of arm.pages<Json>(path, spec.apiVersion))
          for (const item of page) out.push(...listing(item));
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
    if (!name && !this.#spec.fixedName)
      throw new InvalidSpecError(`${this.#spec.type} needs a name (crossplane.io/external-name)`);
    const missing = missingRequired(
      this.#spec,
      await desiredBody(this.#spec, mr.spec.forProvider, async () => ""),
    );
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
    async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
      return new ArmGenericClient(await armRest(ctx), spec, (ref) =>
        ctx.readSecretKey(ref),
      ) as unknown as ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    },
  };
}
