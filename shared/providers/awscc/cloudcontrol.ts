// The one provider of every generated AWS kind: the AWS Cloud Control API (CreateResource,
// GetResource, UpdateResource with an RFC 6902 patch, DeleteResource; GetResourceRequestStatus to follow
// the asynchronous ones), driven by the kind's compact spec. Decisions: docs/adr/0003-awscc-kinds.md.

import { createHash, randomUUID } from "node:crypto";
import {
  CloudControlClient,
  CreateResourceCommand,
  DeleteResourceCommand,
  GetResourceCommand,
  GetResourceRequestStatusCommand,
  ListResourcesCommand,
  type ProgressEvent,
  UpdateResourceCommand,
} from "@aws-sdk/client-cloudcontrol";
import { loadAwsccCatalog, loadAwsccSpec } from "../../api/awscc/catalog.ts";
import { awsccKindOf } from "../../api/awscc/kind.ts";
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import {
  type ConnectContext,
  CredentialsError,
  DependentsExistError,
  type ExternalClient,
  type ExternalCreation,
  ExternalError,
  type ExternalListing,
  type ExternalObservation,
  type IamStatement,
  InvalidSpecError,
  type ListContext,
  type ManagedKindProvider,
  NotListableError,
  type ObserveManyItem,
  ThrottledError,
} from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { Annotations, type SecretKeySelector } from "../../api/meta.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { namedError } from "../../named-error.ts";
import { asRole } from "../aws/assumed-role.ts";
import { aws, awsClientConfig, awsErrorCode, ClientCache, perResource, sdkOptions } from "../aws/config.ts";
import { IN_STAGE_REGION } from "../aws/global-services.ts";
import { awsHome } from "../aws/home.ts";
import { lanes, listedAmong, observeListed } from "../listed-models.ts";
import { secretReader } from "../secret-refs.ts";
import { groupRoleArn } from "./group-roles.ts";
import { handlerIam } from "./handler-iam.ts";
import { type ListLevel, listByLevels, listPlanOf, managedLevel } from "./list-children.ts";
import {
  atProviderOf,
  desiredModel,
  missingRequired,
  observedOf,
  patchOf,
  resolveSecrets,
  secretAttributesOf,
} from "./model.ts";

type Json = Record<string, unknown>;
type MR = ManagedResource<Json, Json>;

/**
 * The create request this object's create started: `<generation>/<request token>`. Observe follows it
 * until the resource exists (a create still running is Creating, never a reason to create again).
 */
export const CREATE_REQUEST_ANNOTATION = "awscc.driftless.dev/create-request";

/** Cloud Control cannot manage this type (not provisionable through it, or unknown in the region). */
export class UnsupportedTypeError extends namedError("UnsupportedTypeError", InvalidSpecError) {}

export interface CloudControlOptions {
  /**
   * Waits between GetResourceRequestStatus polls inside one create, update or delete; when they run out
   * the operation returns and the next reconcile follows the request. Default 0.25 s … 4 s (~8 s).
   */
  pollDelaysMs?: readonly number[];
  /** The services of each generated kinds' role (default: the deployment's, role-groups.ts). */
  roleGroups?: ReadonlyArray<readonly string[]>;
}

const DEFAULT_POLL_DELAYS_MS = [250, 500, 1000, 2000, 4000];
/** ListResources' largest page (its MaxResults is 1–100). */
const LIST_PAGE_SIZE = 100;
/** Resources one batched check takes: its pages stop as soon as every one of them was seen. */
const LIST_MAX_ITEMS = 1000;
/** GetResources in flight at once for the resources a batched check reads alone. */
const READ_CONCURRENCY = 8;

/**
 * Types whose ListResources answer was seen, in this process, to leave out what GetResource returns for a
 * property the plan compares, or to be refused: read per resource from then on (why, per type).
 */
const listFallbacks = new Map<string, string>();

/**
 * How a batched drift check reads this type, from the spec data (the registry's list handler and what its
 * handlerSchema requires) and what was seen at run time: `"ListResources"`, or why it is one GetResource
 * per resource. Decisions: docs/adr/0012-awscc-batched-drift-checks.md.
 */
export function batchedReadOf(spec: AwsccKindSpec): "ListResources" | string {
  if (spec.primaryIdentifier.length === 0) return "no primary identifier";
  if (!spec.handlers?.includes("list")) return "the registry publishes no list handler";
  const unset = (spec.listNeeds ?? []).filter((k) => spec.properties[k] === undefined);
  if (unset.length > 0)
    return `the list handler needs a ResourceModel with ${unset.join(", ")}, which no spec field of the type sets`;
  return listFallbacks.get(spec.typeName) ?? "ListResources";
}

/** Where a child's listed model is kept in a batched check: its parent's ResourceModel and its identifier. */
function parentKeyOf(spec: AwsccKindSpec, mr: MR, externalName: string): string {
  return `${JSON.stringify(listModelOf(spec, mr) ?? null)}\n${externalName}`;
}

/**
 * The ResourceModel a child type's ListResources needs for this object (its `listNeeds` fields from
 * forProvider, by their CloudFormation names), or undefined when the object does not set them all.
 */
function listModelOf(spec: AwsccKindSpec, mr: MR): Json | undefined {
  const model: Json = {};
  for (const k of spec.listNeeds ?? []) {
    const v = mr.spec.forProvider[k];
    if (v === undefined || v === null || v === "") return undefined;
    model[spec.properties[k]?.n ?? k] = v;
  }
  return model;
}

const clients = new ClientCache((c) => new CloudControlClient(sdkOptions(c)));

const NOT_FOUND = new Set(["ResourceNotFoundException", "NotFound"]);
const UNSUPPORTED = new Set(["UnsupportedActionException", "TypeNotFoundException", "PrivateTypeException"]);
const INVALID = new Set([
  "InvalidRequestException",
  "ValidationException",
  "NotUpdatableException",
  "AlreadyExistsException",
  "ClientTokenConflictException",
  "ServiceLimitExceededException",
]);
// Failed requests' HandlerErrorCodes worth trying again as they are (the next create gets a new token).
const RETRYABLE = new Set([
  "Throttling",
  "ServiceInternalError",
  "NetworkFailure",
  "InternalFailure",
  "ServiceTimeout",
  "NotStabilized",
  "GeneralServiceException",
]);

/** Cloud Control's errors as the engine's classes; an unsupported type says so plainly. */
function classify(spec: AwsccKindSpec, err: unknown): Error {
  const code = awsErrorCode(err);
  const message = (err as Error)?.message ?? String(err);
  if (UNSUPPORTED.has(code))
    return new UnsupportedTypeError(
      `Cloud Control cannot manage ${spec.typeName} (${code}: ${message}): the type is not provisionable through the Cloud Control API in this account and region; use a hand-written kind or CloudFormation for it`,
      { cause: err },
    );
  if (INVALID.has(code)) return new InvalidSpecError(`${code}: ${message}`, { cause: err });
  return err instanceof ThrottledError || err instanceof CredentialsError ? err : (err as Error);
}

/** A failed request's event as an error of the engine's classes. */
function failure(spec: AwsccKindSpec, ev: ProgressEvent): Error {
  const text = `${ev.Operation ?? "request"} of ${spec.typeName} failed (${ev.ErrorCode ?? "unknown"}): ${ev.StatusMessage ?? "no message"} [request ${ev.RequestToken}]`;
  switch (ev.ErrorCode) {
    case "Throttling":
      return new ThrottledError(text);
    case "InvalidCredentials":
    case "AccessDenied":
      return new CredentialsError(text);
    case "ResourceConflict":
      return ev.Operation === "DELETE" ? new DependentsExistError(text) : new ExternalError(text);
    case "InvalidRequest":
    case "NotUpdatable":
    case "AlreadyExists":
    case "ServiceLimitExceeded":
    case "UnauthorizedTaggingOperation":
      return new InvalidSpecError(text);
    default:
      return new ExternalError(text);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const terminal = (ev: ProgressEvent) => ev.OperationStatus === "SUCCESS" || ev.OperationStatus === "FAILED";

/**
 * The create's idempotency token: the same until a create result is recorded, so a create interrupted
 * after Cloud Control got it and repeated after the engine's pending timeout is the same request (a
 * client token is honoured for 36 hours), while a create after a recorded result is a new one.
 */
export function createClientToken(mr: MR): string {
  const a = mr.metadata.annotations ?? {};
  return createHash("sha256")
    .update(
      [
        mr.metadata.uid ?? mr.metadata.name,
        a[Annotations.createSucceeded] ?? "",
        a[Annotations.createFailed] ?? "",
      ].join("|"),
    )
    .digest("hex");
}

function requestOf(mr: MR): { generation: number; token: string } | undefined {
  const v = mr.metadata.annotations?.[CREATE_REQUEST_ANNOTATION];
  const m = v ? /^(\d+)\/(.+)$/.exec(v) : null;
  return m ? { generation: Number(m[1]), token: m[2] as string } : undefined;
}

/** A generated type's spec by CloudFormation type name (a child type's parents, for `driftless import`). */
function awsccSpecOf(typeName: string): AwsccKindSpec | undefined {
  const entry = loadAwsccCatalog().kinds.find((k) => k.typeName === typeName);
  return entry ? loadAwsccSpec(entry) : undefined;
}

class CloudControlExternal implements ExternalClient<Json, Json> {
  readonly #cc: CloudControlClient;
  readonly #spec: AwsccKindSpec;
  readonly #region: string;
  readonly #delays: readonly number[];
  readonly #readSecret: (ref: SecretKeySelector) => Promise<string>;
  /** The resource model each observation came from: update patches against exactly what was seen. */
  readonly #models = new WeakMap<object, Json>();

  constructor(
    cc: CloudControlClient,
    spec: AwsccKindSpec,
    region: string,
    delays: readonly number[],
    readSecret: (ref: SecretKeySelector) => Promise<string>,
  ) {
    this.#cc = cc;
    this.#spec = spec;
    this.#region = region;
    this.#delays = delays;
    this.#readSecret = readSecret;
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await aws(fn);
    } catch (err) {
      throw classify(this.#spec, err);
    }
  }

  /** Polls a request until it ends or the delays run out; returns its last event. */
  async #follow(ev: ProgressEvent): Promise<ProgressEvent> {
    let last = ev;
    for (const ms of this.#delays) {
      if (terminal(last) || !last.RequestToken) return last;
      await sleep(ms);
      const token = last.RequestToken;
      const out = await this.#call(() =>
        this.#cc.send(new GetResourceRequestStatusCommand({ RequestToken: token })),
      );
      last = out.ProgressEvent ?? last;
    }
    return last;
  }

  async #get(identifier: string): Promise<Json | undefined> {
    try {
      const out = await this.#call(() =>
        this.#cc.send(new GetResourceCommand({ TypeName: this.#spec.typeName, Identifier: identifier })),
      );
      return JSON.parse(out.ResourceDescription?.Properties ?? "{}") as Json;
    } catch (err) {
      if (NOT_FOUND.has(awsErrorCode(err)) || NOT_FOUND.has(awsErrorCode((err as Error).cause)))
        return undefined;
      throw err;
    }
  }

  #found(mr: MR, model: Json, externalName?: string): ExternalObservation<Json, Json> {
    const secrets = secretAttributesOf(this.#spec, model);
    const obs: ExternalObservation<Json, Json> = {
      resourceExists: true,
      observed: observedOf(this.#spec, model, this.#region, mr.spec.forProvider),
      atProvider: atProviderOf(this.#spec, model),
      availability: "Available",
      ...(Object.keys(secrets).length > 0 ? { connectionDetails: secrets } : {}),
      ...(externalName ? { externalName } : {}),
    };
    this.#models.set(obs, model);
    return obs;
  }

  async observe(mr: MR, externalName: string | undefined): Promise<ExternalObservation<Json, Json>> {
    this.#supported();
    if (externalName) {
      const model = await this.#get(externalName);
      if (model) return this.#found(mr, model);
    }
    const req = requestOf(mr);
    if (!req) return { resourceExists: false };
    let ev: ProgressEvent | undefined;
    try {
      ev = (
        await this.#call(() =>
          this.#cc.send(new GetResourceRequestStatusCommand({ RequestToken: req.token })),
        )
      ).ProgressEvent;
    } catch (err) {
      // Cloud Control keeps requests for 7 days: an expired token tells nothing more than GetResource did.
      if (awsErrorCode(err) === "RequestTokenNotFoundException") return { resourceExists: false };
      throw err;
    }
    if (ev?.Operation !== "CREATE") return { resourceExists: false };
    if (ev.OperationStatus === "SUCCESS") {
      // Done (possibly by the very poll above): read it by the identifier the request reports, which a
      // provider-chosen kind records. Absent now means deleted since: a create may follow.
      const id = ev.Identifier || externalName;
      const model = id ? await this.#get(id) : undefined;
      if (!model || !id) return { resourceExists: false };
      return this.#found(
        mr,
        model,
        id !== externalName && this.#spec.externalName === "providerChosen" ? id : undefined,
      );
    }
    if (ev.OperationStatus === "FAILED") {
      // Nothing was made. Tried again as it is only when the failure may pass; otherwise the spec must change.
      if (mr.metadata.deletionTimestamp || RETRYABLE.has(ev.ErrorCode ?? ""))
        return { resourceExists: false };
      if (req.generation !== (mr.metadata.generation ?? 0)) return { resourceExists: false };
      throw failure(this.#spec, ev);
    }
    return {
      resourceExists: true,
      availability: "Creating",
      message: `create request ${req.token} is ${ev.OperationStatus}`,
      ...(ev.Identifier && !externalName && this.#spec.externalName === "providerChosen"
        ? { externalName: ev.Identifier }
        : {}),
    };
  }

  /**
   * The batched drift check: ListResources page by page (stopping once every resource asked about was seen,
   * or when the pages cost as much as reading the rest alone), each listed model observed as GetResource's
   * would be. A resource the list does not show, or shows without something the plan compares, is read
   * alone with observe: an absence or a difference is only ever concluded from GetResource. When that read
   * carries what the list left out, the type is read per resource from then on (batchedReadOf says why).
   */
  async observeMany(
    items: ReadonlyArray<ObserveManyItem<Json, Json>>,
  ): Promise<Array<ExternalObservation<Json, Json> | Error>> {
    const type = this.#spec.typeName;
    const child = Boolean(this.#spec.listNeeds?.length);
    // A child is looked up in its own parent's list only.
    const keyOf = ({ mr, externalName }: ObserveManyItem<Json, Json>) =>
      child ? parentKeyOf(this.#spec, mr as MR, externalName) : externalName;
    let listed = new Map<string, Json>();
    if (batchedReadOf(this.#spec) === "ListResources") {
      try {
        listed = child
          ? await this.#listPerParent(items)
          : await this.#list(new Set(items.map((i) => i.externalName)));
      } catch (err) {
        // A list the handler refuses (it wants a ResourceModel, or is unsupported) is this type's answer.
        if (!(err instanceof InvalidSpecError)) throw err;
        listFallbacks.set(type, `ListResources was refused: ${err.message}`);
      }
    }
    const spec = this.#spec;
    return observeListed(items, {
      listed: async (item) => {
        const model = listed.get(keyOf(item));
        return model ? this.#found(item.mr as MR, model) : undefined;
      },
      observe: ({ mr, externalName }) => this.observe(mr as MR, externalName),
      compared: (k) => spec.properties[k] !== undefined && k !== spec.identifierField,
      incomplete: (omitted) =>
        listFallbacks.set(
          type,
          `ListResources left out ${omitted.slice(0, 3).join(", ")}, which GetResource returns`,
        ),
      concurrency: READ_CONCURRENCY,
    });
  }

  /** ListResources' pages here (of a type, by default this one; a child type's under `model`'s parent): models by identifier. */
  async *#pages(typeName = this.#spec.typeName, model?: Json): AsyncGenerator<Map<string, Json>> {
    let token: string | undefined;
    do {
      const next = token;
      const out = await this.#call(() =>
        this.#cc.send(
          new ListResourcesCommand({
            TypeName: typeName,
            MaxResults: LIST_PAGE_SIZE,
            ...(model ? { ResourceModel: JSON.stringify(model) } : {}),
            ...(next ? { NextToken: next } : {}),
          }),
        ),
      );
      const page = new Map<string, Json>();
      for (const d of out.ResourceDescriptions ?? [])
        if (d.Identifier) page.set(d.Identifier, JSON.parse(d.Properties ?? "{}") as Json);
      yield page;
      token = out.NextToken || undefined;
    } while (token);
  }

  /** What ListResources shows of `wanted` (identifiers) here, by identifier. */
  #list(wanted: ReadonlySet<string>): Promise<Map<string, Json>> {
    return listedAmong(this.#pages(), wanted);
  }

  /**
   * A child type's batched check: the items grouped by the parent their `listNeeds` fields name, one
   * ListResources (paged, stopping as #list does) per parent. An item that names no parent, or whose
   * parent's list fails (the parent gone), is not listed: it is read alone, which tells its absence.
   * Models by parentKeyOf.
   */
  async #listPerParent(items: ReadonlyArray<ObserveManyItem<Json, Json>>): Promise<Map<string, Json>> {
    const parents = new Map<string, { key: string; model: Json; wanted: Set<string> }>();
    for (const { mr, externalName } of items) {
      const model = listModelOf(this.#spec, mr as MR);
      if (!model) continue;
      const key = JSON.stringify(model);
      const p = parents.get(key) ?? { key, model, wanted: new Set<string>() };
      p.wanted.add(externalName);
      parents.set(key, p);
    }
    const found = new Map<string, Json>();
    const groups = [...parents.values()];
    const lists = await lanes(groups, READ_CONCURRENCY, async (p) => {
      try {
        return await listedAmong(this.#pages(undefined, p.model), p.wanted);
      } catch (err) {
        if (
          err instanceof InvalidSpecError ||
          err instanceof ThrottledError ||
          err instanceof CredentialsError
        )
          throw err;
        return new Map<string, Json>();
      }
    });
    lists.forEach((list, n) => {
      for (const [id, model] of list) found.set(`${groups[n]?.key}\n${id}`, model);
    });
    return found;
  }

  /** Every resource of the type in this region (`driftless import`): its primary identifier and region. */
  async list(): Promise<ExternalListing[]> {
    this.#supported();
    const out: ExternalListing[] = [];
    for await (const page of this.#pages())
      for (const id of page.keys()) out.push({ externalName: id, forProvider: { region: this.#region } });
    return out;
  }

  /**
   * Every resource of a child type in this region (`driftless import`), listed level by level
   * (list-children.ts): each listed with the parent fields its list was made under.
   */
  async listUnder(plan: readonly ListLevel[], ctx: ListContext = {}): Promise<ExternalListing[]> {
    this.#supported();
    const out: ExternalListing[] = [];
    const parents = plan.at(-1)?.needs.map((n) => n.field) ?? [];
    const managed = ctx.managed;
    // Parents from the cluster (`--parents managed`): each parent level is its managed resources, no list.
    const pages = (t: string, m: Json | undefined): AsyncIterable<Map<string, Json>> => {
      const level = plan.find((l) => l.spec.typeName === t);
      if (!managed || !level || t === this.#spec.typeName) return this.#pages(t, m);
      const region = this.#region;
      return (async function* () {
        yield managedLevel(level.spec, await managed(awsccKindOf(level.spec)), m, region);
      })();
    };
    for await (const { identifier, needs } of listByLevels(plan, pages))
      out.push({
        externalName: identifier,
        forProvider: { region: this.#region, ...needs },
        parent: parents,
      });
    return out;
  }

  /** forProvider with its secrets read from their Secret keys, at any depth: for one request only. */
  #resolved(mr: MR): Promise<Json> {
    return resolveSecrets(this.#spec, mr.spec.forProvider, secretReader(this.#readSecret));
  }

  #supported() {
    if (this.#spec.primaryIdentifier.length === 0)
      throw new UnsupportedTypeError(
        `Cloud Control cannot manage ${this.#spec.typeName}: its schema has no primary identifier`,
      );
  }

  async create(mr: MR, externalName: string | undefined): Promise<ExternalCreation> {
    this.#supported();
    const desired = desiredModel(this.#spec, {
      forProvider: await this.#resolved(mr),
      externalName: this.#spec.externalName === "fromAnnotation" ? externalName : undefined,
    });
    const missing = missingRequired(this.#spec, desired);
    if (missing.length > 0)
      throw new InvalidSpecError(
        `${this.#spec.typeName} needs ${missing.map((m) => `spec.forProvider.${m}`).join(", ")} to be created`,
      );
    const out = await this.#call(() =>
      this.#cc.send(
        new CreateResourceCommand({
          TypeName: this.#spec.typeName,
          DesiredState: JSON.stringify(desired),
          ClientToken: createClientToken(mr),
        }),
      ),
    );
    const ev = await this.#follow(out.ProgressEvent ?? {});
    if (ev.OperationStatus === "FAILED") throw failure(this.#spec, ev);
    return {
      annotations: { [CREATE_REQUEST_ANNOTATION]: `${mr.metadata.generation ?? 0}/${ev.RequestToken ?? ""}` },
      ...(this.#spec.externalName === "providerChosen" && ev.Identifier
        ? { externalName: ev.Identifier }
        : {}),
    };
  }

  async update(mr: MR, externalName: string, obs: ExternalObservation<Json, Json>) {
    const current = this.#models.get(obs) ?? (await this.#get(externalName));
    if (!current) throw new ExternalError(`${this.#spec.typeName} ${externalName} disappeared during update`);
    // Secrets are read too: a list replaced whole carries its items' secrets (patchOf sends no other).
    const desired = desiredModel(this.#spec, {
      forProvider: await this.#resolved(mr),
      externalName: undefined,
    });
    const patch = patchOf(this.#spec, desired, current);
    if (patch.length === 0) return {};
    const out = await this.#call(() =>
      this.#cc.send(
        new UpdateResourceCommand({
          TypeName: this.#spec.typeName,
          Identifier: externalName,
          PatchDocument: JSON.stringify(patch),
          ClientToken: randomUUID(),
        }),
      ),
    );
    const ev = await this.#follow(out.ProgressEvent ?? {});
    if (ev.OperationStatus === "FAILED") throw failure(this.#spec, ev);
    return {};
  }

  async delete(_mr: MR, externalName: string) {
    if (!externalName)
      throw new ExternalError(
        `${this.#spec.typeName}: waiting for the create to report its identifier before deleting`,
      );
    let out: { ProgressEvent?: ProgressEvent };
    try {
      out = await this.#call(() =>
        this.#cc.send(
          new DeleteResourceCommand({
            TypeName: this.#spec.typeName,
            Identifier: externalName,
            ClientToken: randomUUID(),
          }),
        ),
      );
    } catch (err) {
      const code = awsErrorCode(err) || awsErrorCode((err as Error).cause);
      // Gone already, or a delete (ours, from an earlier reconcile) still running: the next observe tells.
      if (NOT_FOUND.has(code) || code === "ConcurrentOperationException") return;
      throw err;
    }
    const ev = await this.#follow(out.ProgressEvent ?? {});
    if (ev.OperationStatus === "FAILED" && ev.ErrorCode !== "NotFound") throw failure(this.#spec, ev);
  }
}

const CLOUD_CONTROL_IAM: IamStatement = {
  sid: "CloudControl",
  actions: [
    "cloudformation:CreateResource",
    "cloudformation:GetResource",
    "cloudformation:UpdateResource",
    "cloudformation:DeleteResource",
    "cloudformation:GetResourceRequestStatus",
    "cloudformation:ListResources",
  ],
  resources: ["*"],
  condition: IN_STAGE_REGION,
  comment:
    "Cloud Control calls, in the stage's region; each generated kind's service calls follow in its Awscc<service> statement.",
};

/** The provider of one generated kind. */
export function cloudControlProvider(
  spec: AwsccKindSpec,
  opts: CloudControlOptions = {},
): ManagedKindProvider {
  const delays = opts.pollDelaysMs ?? DEFAULT_POLL_DELAYS_MS;
  const listable = batchedReadOf(spec) === "ListResources";
  return {
    definition: awsccKindOf(spec),
    limitsEachRequest: true,
    iam: [CLOUD_CONTROL_IAM, ...handlerIam(spec)],
    ...(listable
      ? {
          observeMany: {
            calls: `ListResources${spec.listNeeds?.length ? ` per ${spec.listNeeds.join(", ")}` : ""}, ${LIST_PAGE_SIZE} a page (a GetResource for one it does not show whole)`,
            maxItems: LIST_MAX_ITEMS,
          },
        }
      : {}),
    async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
      const regionOf = (mr: MR) => (mr.spec.forProvider.region as string | undefined) ?? undefined;
      // The ambient identity acts through the role of the kind's service group (docs/adr/0014); a
      // ProviderConfig with credentials of its own uses them as they are.
      const role =
        ctx.providerConfig.spec.credentials.source === "InjectedIdentity"
          ? groupRoleArn(spec.group.split(".")[0] ?? "", process.env, opts.roleGroups)
          : undefined;
      const inRegion = async (region: string | undefined) => {
        const own = await awsClientConfig(ctx, region);
        const cfg = role ? asRole(own, role) : own;
        return new CloudControlExternal(clients.get(cfg), spec, cfg.region, delays, (ref) =>
          ctx.readSecretKey(ref),
        );
      };
      const external = (mr: MR) => inRegion(regionOf(mr));
      const client: ExternalClient<Json, Json> = {
        ...perResource<Json, Json>(external, (mr) => awsHome(ctx, regionOf(mr))),
        // `driftless import`: what exists in the ProviderConfig's region; a child type is listed per parent.
        async list(ctx?: ListContext) {
          if (spec.primaryIdentifier.length === 0)
            throw new NotListableError("its schema has no primary identifier to name what it lists");
          if (spec.listNeeds?.length)
            return (await inRegion(undefined)).listUnder(listPlanOf(spec, awsccSpecOf), ctx);
          return (await inRegion(undefined)).list();
        },
      };
      if (!listable) return client;
      return {
        ...client,
        // One region's client lists its resources; the results go back in order.
        async observeMany(items: ReadonlyArray<ObserveManyItem<Json, Json>>) {
          const groups = new Map<string, { at: number[]; external: Promise<CloudControlExternal | Error> }>();
          for (const [i, { mr }] of items.entries()) {
            const region = regionOf(mr as MR) ?? "";
            const g = groups.get(region) ?? {
              at: [],
              external: external(mr as MR).catch((err: unknown) =>
                err instanceof Error ? err : new Error(String(err)),
              ),
            };
            g.at.push(i);
            groups.set(region, g);
          }
          const out: Array<ExternalObservation<Json, Json> | Error> = new Array(items.length);
          for (const g of groups.values()) {
            let results: Array<ExternalObservation<Json, Json> | Error>;
            try {
              const one = await g.external;
              if (one instanceof Error) throw one;
              results = await one.observeMany(g.at.map((i) => items[i] as ObserveManyItem<Json, Json>));
            } catch (err) {
              if (groups.size === 1 || err instanceof ThrottledError) throw err;
              results = g.at.map(() => (err instanceof Error ? err : new Error(String(err))));
            }
            g.at.forEach((i, n) => {
              out[i] = results[n] ?? new Error("the batched observe returned no result for this resource");
            });
          }
          return out;
        },
      };
    },
  };
}
