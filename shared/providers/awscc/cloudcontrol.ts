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
  type ProgressEvent,
  UpdateResourceCommand,
} from "@aws-sdk/client-cloudcontrol";
import { awsccKindOf } from "../../api/awscc/kind.ts";
import type { AwsccKindSpec } from "../../api/awscc/spec.ts";
import {
  type ConnectContext,
  CredentialsError,
  DependentsExistError,
  type ExternalClient,
  type ExternalCreation,
  ExternalError,
  type ExternalObservation,
  type IamStatement,
  InvalidSpecError,
  type ManagedKindProvider,
  ThrottledError,
} from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { Annotations, type SecretKeySelector } from "../../api/meta.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { aws, awsClientConfig, awsErrorCode, ClientCache, perResource, sdkOptions } from "../aws/config.ts";
import { awsHome } from "../aws/home.ts";
import { secretReader } from "../secret-refs.ts";
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
export class UnsupportedTypeError extends InvalidSpecError {
  override name = "UnsupportedTypeError";
}

export interface CloudControlOptions {
  /**
   * Waits between GetResourceRequestStatus polls inside one create, update or delete; when they run out
   * the operation returns and the next reconcile follows the request. Default 0.25 s … 4 s (~8 s).
   */
  pollDelaysMs?: readonly number[];
}

const DEFAULT_POLL_DELAYS_MS = [250, 500, 1000, 2000, 4000];
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
  ],
  resources: ["*"],
  comment: "Cloud Control calls; each generated kind's service calls follow in its Awscc<service> statement.",
};

/**
 * What Cloud Control's handlers call as the caller for this type (the registry schema's
 * handlers.*.permissions), one statement per service: kinds of one service merge into it by sid, so the
 * role grows with the services activated, not with the kinds. The schemas name actions, not resources.
 */
export function handlerIam(spec: AwsccKindSpec): IamStatement[] {
  const actions = [...new Set(Object.values(spec.permissions).flat())].sort();
  if (actions.length === 0) return [];
  const service = spec.group.split(".")[0] ?? "";
  const sid = `Awscc${service.charAt(0).toUpperCase()}${service.slice(1)}`.replace(/[^A-Za-z0-9]/g, "");
  return [
    {
      sid,
      actions,
      resources: ["*"],
      comment: `The service calls Cloud Control makes for the activated ${service} kinds (registry schemas' handler permissions).`,
    },
  ];
}

/** The provider of one generated kind. */
export function cloudControlProvider(
  spec: AwsccKindSpec,
  opts: CloudControlOptions = {},
): ManagedKindProvider {
  const delays = opts.pollDelaysMs ?? DEFAULT_POLL_DELAYS_MS;
  return {
    definition: awsccKindOf(spec),
    limitsEachRequest: true,
    iam: [CLOUD_CONTROL_IAM, ...handlerIam(spec)],
    async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
      const regionOf = (mr: MR) => (mr.spec.forProvider.region as string | undefined) ?? undefined;
      return perResource<Json, Json>(
        async (mr) => {
          const cfg = await awsClientConfig(ctx, regionOf(mr));
          return new CloudControlExternal(clients.get(cfg), spec, cfg.region, delays, (ref) =>
            ctx.readSecretKey(ref),
          );
        },
        (mr) => awsHome(ctx, regionOf(mr)),
      );
    },
  };
}
