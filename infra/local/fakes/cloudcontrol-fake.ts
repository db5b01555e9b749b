// Wire-protocol fake of the AWS Cloud Control API (JSON 1.0, `X-Amz-Target: CloudApiService.<Op>`), so
// the real @aws-sdk/client-cloudcontrol runs against it unchanged. Every type is validated against the
// same generated specs the kinds come from (.generated/awscc): required and extraneous properties and
// value types (a FAILED InvalidRequest request, as Cloud Control's handlers report it), create-only and
// read-only paths in an update patch (ValidationException), write-only properties never read back.
// Requests progress by polls (IN_PROGRESS until GetResourceRequestStatus was called `pollsToComplete`
// times); ClientTokens are idempotent. Resources live per account and region, as in AWS: the region is the
// SigV4 credential scope's, the account the access key's (`AKIA` + 12 digits names it, else ACCOUNT),
// which STS GetCallerIdentity on the same endpoint reports. ListResources pages with NextToken (MaxResults
// 1–100), answers the readable model (or, for types configured so, only the primary identifier: list
// handlers differ) and refuses a child type's list without its handlerSchema's ResourceModel properties.
// Test controls under /__fake/: throttle, fail, config, requests, resources.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { awsccDir, loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccKindSpec, AwsccNode } from "../../../shared/api/awscc/spec.ts";
import { createStack, deleteStack, MOTO_BACKED, MOTO_READERS, updateStack } from "./moto-stacks.ts";

export interface CloudControlFakeOptions {
  port: number;
  host?: string;
  /** The generated specs' directory (default: awsccDir()). */
  dir?: string;
  /** The region of a request whose signature names none (default us-east-1). */
  region?: string;
  /**
   * moto's endpoint: the types moto's CloudFormation implements (MOTO_BACKED) are created, updated and
   * deleted there too, through one stack each, so the service's own API sees them.
   */
  moto?: string;
}

/** Where a request goes: the account of its access key and the region of its signature. */
interface Scope {
  account: string;
  region: string;
}

export interface FakeServer {
  url: string;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const ACCOUNT = "123456789012";

/** The registry handler each Cloud Control action runs (the ones a type may lack). */
const HANDLER_OF: Record<string, NonNullable<AwsccKindSpec["handlers"]>[number]> = {
  CREATE: "create",
  UPDATE: "update",
  DELETE: "delete",
  LIST: "list",
};

class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, status = 400) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

interface Request {
  event: Json;
  polls: number;
  /** Applies the operation's effect when it completes; returns an error code + message to fail it. */
  complete: () => { code: string; message: string } | undefined;
  resourceKey?: string;
}

interface Resource {
  account: string;
  region: string;
  type: string;
  identifier: string;
  model: Json;
  /** The moto stack that holds it (moto-backed types). */
  stack?: string;
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Cloud Control's schema validation, against the spec's nodes: "#/Path: message" per problem. */
function validateModel(spec: AwsccKindSpec, model: Json, create: boolean): string[] {
  const problems: string[] = [];
  const wire = new Map(Object.values(spec.properties).map((p) => [p.n, p]));
  for (const [k, v] of Object.entries(model)) {
    const p = wire.get(k);
    if (!p) problems.push(`#: extraneous key [${k}] is not permitted`);
    else validateValue(spec, p.s, v, `#/${k}`, problems);
  }
  if (create)
    for (const p of wire.values())
      if (p.req && model[p.n] === undefined) problems.push(`#: required key [${p.n}] not found`);
  return problems;
}

function validateValue(spec: AwsccKindSpec, node: AwsccNode, v: unknown, path: string, out: string[]) {
  const expect = (ok: boolean, type: string) => {
    if (!ok) out.push(`${path}: expected type: ${type}, found: ${Array.isArray(v) ? "JSONArray" : typeof v}`);
    return ok;
  };
  switch (node.t) {
    case "string":
      expect(typeof v === "string", "String");
      return;
    case "integer":
      expect(Number.isInteger(v), "Integer");
      return;
    case "number":
      expect(typeof v === "number", "Number");
      return;
    case "boolean":
      expect(typeof v === "boolean", "Boolean");
      return;
    case "tags":
      if (expect(Array.isArray(v), "JSONArray"))
        (v as unknown[]).forEach((t, i) => {
          if (!isObject(t) || typeof t.Key !== "string" || typeof t.Value !== "string")
            out.push(`${path}/${i}: expected a tag {Key, Value}`);
        });
      return;
    case "array":
      if (expect(Array.isArray(v), "JSONArray"))
        for (const [i, x] of (v as unknown[]).entries()) validateValue(spec, node.of, x, `${path}/${i}`, out);
      return;
    case "map":
      if (expect(isObject(v), "JSONObject"))
        for (const [k, x] of Object.entries(v as Json)) validateValue(spec, node.of, x, `${path}/${k}`, out);
      return;
    case "ref": {
      const def = spec.defs[node.ref];
      if (!def || !expect(isObject(v), "JSONObject")) return;
      const wire = new Map(Object.values(def.props).map((p) => [p.n, p]));
      for (const [k, x] of Object.entries(v as Json)) {
        const p = wire.get(k);
        if (!p) out.push(`${path}: extraneous key [${k}] is not permitted`);
        else validateValue(spec, p.s, x, `${path}/${k}`, out);
      }
      for (const p of wire.values())
        if (p.req && (v as Json)[p.n] === undefined) out.push(`${path}: required key [${p.n}] not found`);
      return;
    }
    default:
      return;
  }
}

/** JSON pointer segments of a patch path. */
const segments = (path: string) =>
  path
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));

/** A patch path's field path (camelCase names, list indexes left out), as the spec's facts are written. */
function fieldPathOf(spec: AwsccKindSpec, path: string): string {
  const out: string[] = [];
  let props = spec.properties;
  for (const seg of segments(path)) {
    if (/^\d+$|^-$/.test(seg)) continue;
    const hit = Object.entries(props).find(([, p]) => p.n === seg);
    if (!hit) {
      out.push(seg.charAt(0).toLowerCase() + seg.slice(1));
      props = {};
      continue;
    }
    out.push(hit[0]);
    let node = hit[1].s;
    while (node.t === "array" || node.t === "map") node = node.of;
    props = node.t === "ref" ? (spec.defs[node.ref]?.props ?? {}) : {};
  }
  return out.join(".");
}

/** Whether a patch path touches a create-only property: it is one, lies below one, or holds one. */
function createOnlyAt(spec: AwsccKindSpec, path: string): boolean {
  const f = fieldPathOf(spec, path);
  return spec.createOnly.some((c) => c === f || f.startsWith(`${c}.`) || c.startsWith(`${f}.`));
}

/** A model as GetResource shows it: write-only properties (secrets included) left out, at any depth. */
export const readableModel = (spec: AwsccKindSpec, model: Json) =>
  readableOf(spec, model, spec.properties, "") as Json;

function readableOf(
  spec: AwsccKindSpec,
  v: unknown,
  props: AwsccKindSpec["properties"],
  path: string,
): unknown {
  if (Array.isArray(v)) return v.map((x) => readableOf(spec, x, props, path));
  if (!isObject(v)) return v;
  const out: Json = {};
  for (const [n, x] of Object.entries(v)) {
    const hit = Object.entries(props).find(([, p]) => p.n === n);
    if (!hit) {
      out[n] = x;
      continue;
    }
    const at = path ? `${path}.${hit[0]}` : hit[0];
    if (spec.writeOnly.includes(at) || spec.secrets.includes(at)) continue;
    let node = hit[1].s;
    while (node.t === "array" || node.t === "map") node = node.of;
    out[n] = node.t === "ref" ? readableOf(spec, x, spec.defs[node.ref]?.props ?? {}, at) : x;
  }
  return out;
}

function applyPatch(model: Json, ops: Array<{ op: string; path: string; value?: unknown }>): Json {
  const out = structuredClone(model);
  for (const o of ops) {
    const segs = segments(o.path);
    const last = segs.pop();
    if (last === undefined) throw new ApiError("ValidationException", `invalid patch path ${o.path}`);
    let at: unknown = out;
    for (const s of segs) {
      if (!isObject(at) && !Array.isArray(at)) throw new ApiError("ValidationException", `no path ${o.path}`);
      const cur = at as Record<string, unknown>;
      if (cur[s] === undefined && o.op !== "remove") cur[s] = {};
      at = cur[s];
    }
    const target = at as Record<string, unknown> | unknown[];
    if (o.op === "remove") {
      if (Array.isArray(target)) target.splice(Number(last), 1);
      else delete target[last];
    } else if (o.op === "add" || o.op === "replace") {
      if (Array.isArray(target) && last === "-") target.push(o.value);
      else if (Array.isArray(target) && o.op === "add") target.splice(Number(last), 0, o.value);
      else (target as Record<string, unknown>)[last] = o.value;
    } else throw new ApiError("ValidationException", `unsupported patch operation ${o.op}`);
  }
  return out;
}

/** The account of the request's access key and the region of its SigV4 credential scope. */
function scopeOf(req: IncomingMessage, fallbackRegion: string): Scope {
  const m = /Credential=([^/,\s]+)\/\d{8}\/([^/]+)\//.exec(String(req.headers.authorization ?? ""));
  const accessKey = m?.[1] ?? "";
  const digits = /^AKIA(\d{12})$/.exec(accessKey)?.[1];
  return { account: digits ?? ACCOUNT, region: m?.[2] ?? fallbackRegion };
}

function sendCallerIdentity(res: ServerResponse, at: Scope) {
  const xml = `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult><Arn>arn:aws:iam::${at.account}:user/fake</Arn><UserId>AIDAFAKE</UserId><Account>${at.account}</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></GetCallerIdentityResponse>`;
  res.writeHead(200, { "content-type": "text/xml", "content-length": Buffer.byteLength(xml) });
  res.end(xml);
}

export async function startCloudControlFake(opts: CloudControlFakeOptions): Promise<FakeServer> {
  const host = opts.host ?? "127.0.0.1";
  const region = opts.region ?? "us-east-1";
  const dir = opts.dir ?? awsccDir();
  const catalog = new Map(loadAwsccCatalog(dir).kinds.map((e) => [e.typeName, e]));
  const specs = new Map<string, AwsccKindSpec>();
  const resources = new Map<string, Resource>();
  const requests = new Map<string, Request>();
  const clientTokens = new Map<string, string>();
  const counts: Record<string, number> = {};
  const control = {
    pollsToComplete: 1,
    throttle: 0,
    fail: [] as Array<{ operation: string; errorCode: string; message: string }>,
    /** Types whose list handler returns only the primary identifier (the rest: the whole model). */
    listIdentifiersOnly: new Set<string>(),
  };

  const specOf = (type: unknown, action: string): AwsccKindSpec => {
    const name = String(type ?? "");
    const entry = catalog.get(name);
    if (!entry) throw new ApiError("TypeNotFoundException", `The type '${name}' cannot be found.`);
    let spec = specs.get(name);
    if (!spec) {
      spec = loadAwsccSpec(entry, dir);
      specs.set(name, spec);
    }
    // Non-provisionable types are not generated at all; a handler the registry does not publish is refused.
    const handler = HANDLER_OF[action];
    if (spec.primaryIdentifier.length === 0 || (handler && !(spec.handlers ?? []).includes(handler)))
      throw new ApiError(
        "UnsupportedActionException",
        `Resource type ${name} does not support ${action} action`,
      );
    return spec;
  };
  const keyOf = (at: Scope, type: string, id: string) => `${at.account}|${at.region}|${type}|${id}`;
  const readable = readableModel;

  /** Fills what the cloud chooses: attributes (ARNs, ids) and identifier properties left out. */
  const materialize = (at: Scope, spec: AwsccKindSpec, desired: Json): Json => {
    const model = structuredClone(desired);
    const service = spec.group.split(".")[0];
    const nameProp = spec.primaryIdentifier.find((n) => typeof model[n] === "string");
    const id = `${spec.kind.toLowerCase()}-${randomBytes(6).toString("hex")}`;
    for (const n of spec.primaryIdentifier) {
      if (model[n] !== undefined) continue;
      if (spec.properties[Object.keys(spec.properties).find((k) => spec.properties[k]?.n === n) ?? ""])
        model[n] = id;
    }
    const name = String(nameProp ? model[nameProp] : id);
    for (const a of Object.values(spec.attributes)) {
      if (a.s.t !== "string" || a.n.includes(".") || model[a.n] !== undefined) continue;
      model[a.n] = /Arn$/i.test(a.n)
        ? `arn:aws:${service}:${at.region}:${at.account}:${spec.kind.toLowerCase()}/${name}`
        : a.n === "Id" || /Id$/.test(a.n)
          ? id
          : `${a.n.toLowerCase()}-${name}`;
    }
    return model;
  };
  const identifierOf = (spec: AwsccKindSpec, model: Json) =>
    spec.primaryIdentifier.map((n) => String(model[n] ?? "")).join("|");

  const event = (r: Partial<Json>): Json => ({ EventTime: Date.now() / 1000, ...r });
  const injected = (operation: string) => {
    const i = control.fail.findIndex((f) => f.operation === operation);
    return i === -1 ? undefined : control.fail.splice(i, 1)[0];
  };

  const start = (
    op: string,
    spec: AwsccKindSpec,
    identifier: string,
    complete: Request["complete"],
    resourceKey?: string,
  ) => {
    const token = randomUUID();
    const req: Request = {
      event: event({
        TypeName: spec.typeName,
        Identifier: identifier,
        RequestToken: token,
        Operation: op,
        OperationStatus: "IN_PROGRESS",
      }),
      polls: 0,
      complete,
      ...(resourceKey ? { resourceKey } : {}),
    };
    requests.set(token, req);
    if (control.pollsToComplete <= 0) settle(req);
    return req;
  };
  const settle = (req: Request) => {
    if (req.event.OperationStatus !== "IN_PROGRESS") return;
    const failed = req.complete();
    req.event = failed
      ? event({
          ...req.event,
          OperationStatus: "FAILED",
          ErrorCode: failed.code,
          StatusMessage: failed.message,
        })
      : event({ ...req.event, OperationStatus: "SUCCESS" });
  };
  const busy = (key: string) =>
    [...requests.values()].some((r) => r.resourceKey === key && r.event.OperationStatus === "IN_PROGRESS");

  const moto = opts.moto;
  const backed = (spec: AwsccKindSpec) => moto !== undefined && MOTO_BACKED.has(spec.typeName);
  /** The writable part of a model: what a CloudFormation template may set. */
  const writableOf = (spec: AwsccKindSpec, model: Json) => {
    const wire = new Set(Object.values(spec.properties).map((p) => p.n));
    return Object.fromEntries(Object.entries(model).filter(([k]) => wire.has(k)));
  };

  /** A resource as it is now: where the service's own API can say, it decides (deleted there is gone). */
  const current = async (spec: AwsccKindSpec, key: string): Promise<Resource | undefined> => {
    const r = resources.get(key);
    const reader = r?.stack ? MOTO_READERS[spec.typeName] : undefined;
    const observed = r && reader ? await reader(moto as string, r.model) : {};
    if (r && observed === undefined) resources.delete(key);
    if (!r || observed === undefined) return undefined;
    const drifted = Object.entries(observed).some(
      ([k, v]) => JSON.stringify(r.model[k]) !== JSON.stringify(v),
    );
    Object.assign(r.model, observed);
    // moto's UpdateStack applies only what differs from the stack's last template: align the template with
    // what the service now holds, so an update that puts the spec's value back is applied.
    if (drifted && r.stack)
      await updateStack(moto as string, r.stack, spec.typeName, writableOf(spec, r.model));
    return r;
  };

  const ops: Record<string, (b: Json, at: Scope) => Json | Promise<Json>> = {
    async CreateResource(b, at) {
      const spec = specOf(b.TypeName, "CREATE");
      const clientToken =
        typeof b.ClientToken === "string" ? `${at.account}|${at.region}|${b.ClientToken}` : undefined;
      const known = clientToken ? clientTokens.get(clientToken) : undefined;
      if (known) return { ProgressEvent: requests.get(known)?.event };
      let desired: Json;
      try {
        desired = JSON.parse(String(b.DesiredState ?? "{}")) as Json;
      } catch {
        throw new ApiError("ValidationException", "DesiredState is not valid JSON");
      }
      const fail = injected("CREATE");
      const problems = validateModel(spec, desired, true);
      const model = materialize(at, spec, desired);
      let stack: string | undefined;
      let motoFailure: string | undefined;
      if (backed(spec) && !fail && problems.length === 0) {
        stack = `driftless-cc-${randomBytes(6).toString("hex")}`;
        try {
          const physical = await createStack(moto as string, stack, spec.typeName, desired);
          // The handler's name for it is the primary identifier when that is one read-only property.
          const [only, ...more] = spec.primaryIdentifier;
          if (only && more.length === 0 && desired[only] === undefined && physical) model[only] = physical;
        } catch (err) {
          motoFailure = (err as Error).message;
          stack = undefined;
        }
      }
      const identifier = identifierOf(spec, model);
      const key = keyOf(at, spec.typeName, identifier);
      const req = start(
        "CREATE",
        spec,
        identifier,
        () => {
          if (fail) return { code: fail.errorCode, message: fail.message };
          if (problems.length > 0)
            return { code: "InvalidRequest", message: `Model validation failed (${problems.join("; ")})` };
          if (motoFailure) return { code: "GeneralServiceException", message: motoFailure };
          if (resources.has(key))
            return {
              code: "AlreadyExists",
              message: `Resource of type '${spec.typeName}' with identifier '${identifier}' already exists.`,
            };
          resources.set(key, { ...at, type: spec.typeName, identifier, model, ...(stack ? { stack } : {}) });
          return undefined;
        },
        key,
      );
      if (clientToken) clientTokens.set(clientToken, String(req.event.RequestToken));
      return { ProgressEvent: req.event };
    },
    async GetResource(b, at) {
      const spec = specOf(b.TypeName, "READ");
      const key = keyOf(at, spec.typeName, String(b.Identifier ?? ""));
      const r = await current(spec, key);
      if (!r)
        throw new ApiError(
          "ResourceNotFoundException",
          `Resource of type '${spec.typeName}' with identifier '${b.Identifier}' was not found.`,
        );
      return {
        TypeName: spec.typeName,
        ResourceDescription: {
          Identifier: r.identifier,
          Properties: JSON.stringify(readable(spec, r.model)),
        },
      };
    },
    async UpdateResource(b, at) {
      const spec = specOf(b.TypeName, "UPDATE");
      const key = keyOf(at, spec.typeName, String(b.Identifier ?? ""));
      const r = resources.get(key);
      if (!r)
        throw new ApiError(
          "ResourceNotFoundException",
          `Resource of type '${spec.typeName}' with identifier '${b.Identifier}' was not found.`,
        );
      if (busy(key))
        throw new ApiError(
          "ConcurrentOperationException",
          `Another resource operation is in progress on ${b.Identifier}.`,
        );
      const patch = JSON.parse(String(b.PatchDocument ?? "[]")) as Array<{
        op: string;
        path: string;
        value?: unknown;
      }>;
      const attrs = new Set(Object.values(spec.attributes).map((a) => a.n.split(".")[0]));
      const createOnly = patch.filter((o) => createOnlyAt(spec, o.path)).map((o) => `/properties${o.path}`);
      if (createOnly.length > 0)
        throw new ApiError(
          "ValidationException",
          `Invalid patch update: createOnlyProperties [${createOnly.join(", ")}] cannot be updated`,
        );
      const readOnly = patch.filter((o) => attrs.has(segments(o.path)[0])).map((o) => `/properties${o.path}`);
      if (readOnly.length > 0)
        throw new ApiError(
          "ValidationException",
          `Invalid patch update: readOnlyProperties [${readOnly.join(", ")}] cannot be updated`,
        );
      const next = applyPatch(r.model, patch);
      const fail = injected("UPDATE");
      const writable = Object.fromEntries(Object.entries(next).filter(([k]) => !attrs.has(k)));
      const problems = validateModel(spec, writable, false);
      let motoFailure: string | undefined;
      if (r.stack && !fail && problems.length === 0)
        await updateStack(moto as string, r.stack, spec.typeName, writableOf(spec, next)).catch(
          (err: Error) => {
            motoFailure = err.message;
          },
        );
      const req = start(
        "UPDATE",
        spec,
        r.identifier,
        () => {
          if (fail) return { code: fail.errorCode, message: fail.message };
          if (problems.length > 0)
            return { code: "InvalidRequest", message: `Model validation failed (${problems.join("; ")})` };
          if (motoFailure) return { code: "GeneralServiceException", message: motoFailure };
          r.model = next;
          return undefined;
        },
        key,
      );
      return { ProgressEvent: req.event };
    },
    async DeleteResource(b, at) {
      const spec = specOf(b.TypeName, "DELETE");
      const key = keyOf(at, spec.typeName, String(b.Identifier ?? ""));
      if (busy(key))
        throw new ApiError(
          "ConcurrentOperationException",
          `Another resource operation is in progress on ${b.Identifier}.`,
        );
      const fail = injected("DELETE");
      const stack = resources.get(key)?.stack;
      if (stack && !fail) await deleteStack(moto as string, stack);
      const req = start(
        "DELETE",
        spec,
        String(b.Identifier ?? ""),
        () => {
          if (fail) return { code: fail.errorCode, message: fail.message };
          if (!resources.delete(key))
            return {
              code: "NotFound",
              message: `Resource of type '${spec.typeName}' with identifier '${b.Identifier}' was not found.`,
            };
          return undefined;
        },
        key,
      );
      return { ProgressEvent: req.event };
    },
    GetResourceRequestStatus(b) {
      const req = requests.get(String(b.RequestToken ?? ""));
      if (!req)
        throw new ApiError(
          "RequestTokenNotFoundException",
          `Request with token ${b.RequestToken} was not found.`,
        );
      req.polls++;
      if (req.polls >= control.pollsToComplete) settle(req);
      return { ProgressEvent: req.event };
    },
    async ListResources(b, at) {
      const spec = specOf(b.TypeName, "LIST");
      const max = b.MaxResults === undefined ? 20 : Number(b.MaxResults);
      if (!Number.isInteger(max) || max < 1 || max > 100)
        throw new ApiError("ValidationException", `MaxResults ${b.MaxResults} is not in 1..100`);
      // A child type's list handler lists one parent: its handlerSchema's properties in the ResourceModel.
      let filter: Json = {};
      if (spec.listNeeds?.length) {
        try {
          filter = JSON.parse(String(b.ResourceModel ?? "{}")) as Json;
        } catch {
          throw new ApiError("ValidationException", "ResourceModel is not valid JSON");
        }
        const wire = spec.listNeeds.map((k) => spec.properties[k]?.n ?? k);
        const absent = wire.filter((n) => filter[n] === undefined);
        if (absent.length > 0)
          throw new ApiError(
            "InvalidRequestException",
            `Missing or invalid ResourceModel property in AWS::${spec.typeName.split("::").slice(1).join("::")} list handler request input. Required property: [${absent.join(", ")}]`,
          );
      }
      const keys = [...resources.values()]
        .filter(
          (r) =>
            r.type === spec.typeName &&
            r.account === at.account &&
            r.region === at.region &&
            Object.entries(filter).every(([k, v]) => JSON.stringify(r.model[k]) === JSON.stringify(v)),
        )
        .sort((x, y) => x.identifier.localeCompare(y.identifier))
        .map((r) => keyOf(at, spec.typeName, r.identifier));
      const from = b.NextToken === undefined ? 0 : Number(b.NextToken);
      if (!Number.isInteger(from) || from < 0)
        throw new ApiError("ValidationException", `NextToken ${b.NextToken} is not valid`);
      const page = (await Promise.all(keys.slice(from, from + max).map((k) => current(spec, k)))).filter(
        (r): r is Resource => r !== undefined,
      );
      // What the list handler returns: the whole readable model, or (a type configured so) its identifier.
      const ids = new Set(spec.primaryIdentifier);
      const shown = (r: Resource) =>
        control.listIdentifiersOnly.has(spec.typeName)
          ? Object.fromEntries(Object.entries(r.model).filter(([k]) => ids.has(k)))
          : readable(spec, r.model);
      return {
        TypeName: spec.typeName,
        ResourceDescriptions: page.map((r) => ({
          Identifier: r.identifier,
          Properties: JSON.stringify(shown(r)),
        })),
        ...(from + max < keys.length ? { NextToken: String(from + max) } : {}),
      };
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown, type = "application/x-amz-json-1.0") => {
    const text = JSON.stringify(body ?? {});
    res.writeHead(status, {
      "content-type": type,
      "content-length": Buffer.byteLength(text),
      "x-amzn-requestid": randomUUID(),
    });
    res.end(text);
  };
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://fake");
    if (url.pathname.startsWith("/__fake/")) {
      const body = req.method === "POST" ? ((JSON.parse((await read(req)) || "{}") as Json) ?? {}) : {};
      switch (url.pathname) {
        case "/__fake/throttle":
          control.throttle = Number(body.count ?? 1);
          return send(res, 200, {}, "application/json");
        case "/__fake/fail":
          control.fail.push({
            operation: String(body.operation),
            errorCode: String(body.errorCode),
            message: String(body.message ?? "injected failure"),
          });
          return send(res, 200, {}, "application/json");
        case "/__fake/config":
          if (body.pollsToComplete !== undefined) control.pollsToComplete = Number(body.pollsToComplete);
          if (Array.isArray(body.listIdentifiersOnly))
            control.listIdentifiersOnly = new Set(body.listIdentifiersOnly.map(String));
          return send(
            res,
            200,
            {
              pollsToComplete: control.pollsToComplete,
              listIdentifiersOnly: [...control.listIdentifiersOnly],
            },
            "application/json",
          );
        case "/__fake/requests":
          return send(res, 200, counts, "application/json");
        case "/__fake/resources":
          return send(
            res,
            200,
            [...resources.values()].filter(
              (r) =>
                (!url.searchParams.get("type") || r.type === url.searchParams.get("type")) &&
                (!url.searchParams.get("region") || r.region === url.searchParams.get("region")),
            ),
            "application/json",
          );
        default:
          return send(res, 404, { message: "no such control" }, "application/json");
      }
    }
    const at = scopeOf(req, region);
    const target = String(req.headers["x-amz-target"] ?? "");
    const text = await read(req);
    // One endpoint for every AWS API a client calls, as an emulator is: STS says whose credentials these are.
    if (!target && new URLSearchParams(text).get("Action") === "GetCallerIdentity") {
      counts.GetCallerIdentity = (counts.GetCallerIdentity ?? 0) + 1;
      return sendCallerIdentity(res, at);
    }
    const op = target.startsWith("CloudApiService.") ? target.slice("CloudApiService.".length) : "";
    const body = JSON.parse(text || "{}") as Json;
    const handler = ops[op];
    if (!handler) throw new ApiError("UnknownOperationException", `unknown operation ${target}`);
    counts[op] = (counts[op] ?? 0) + 1;
    if (control.throttle > 0) {
      control.throttle--;
      throw new ApiError("ThrottlingException", "Rate exceeded");
    }
    send(res, 200, await handler(body, at));
  };

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof ApiError) return send(res, err.status, { __type: err.code, Message: err.message });
      send(res, 500, { __type: "InternalFailure", Message: String(err) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string" },
      dir: { type: "string" },
      moto: { type: "string" },
    },
  });
  // The specs are generated at install time; a fresh checkout that skipped it generates them now (< 1 s).
  if (!values.dir) (await import("../../gen-awscc.ts")).generateAwscc();
  const fake = await startCloudControlFake({
    port: Number(values.port),
    ...(values.host ? { host: values.host } : {}),
    ...(values.dir ? { dir: values.dir } : {}),
    ...(values.moto ? { moto: values.moto } : {}),
  });
  process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url })}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
