// The generic ARM fake: serves every generated Azure kind's resource type from the same data the kinds are
// generated from (.generated/azure/, infra/azure/arm-types.json.gz), behind the ARM fake (arm-fake.ts
// routes resource types it has no hand-written handler for here). It validates every PUT against the
// type — unknown member, wrong type, read-only member sent, create-only member changed, required member
// missing — with ARM's error bodies (InvalidRequestContent, PropertyChangeNotAllowed…), runs writes
// asynchronously (201 + Azure-AsyncOperation; provisioningState Creating until the next look), deletes with
// 202 + Location, answers `list*` functions with values shaped by the function's output type, and lists a
// collection (`{parent}/{type}`) in the ARM fake's pages, linked with nextLink.
// Throttling, conflict and quota errors on demand: the ARM fake's `POST /__fake/fail`.
import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import type { AzNode, AzProp, AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { type ArmType, loadArmData } from "../../azure/types-data.ts";
import { generateAzure } from "../../gen-azure.ts";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export class ArmGenericError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const invalid = (message: string) => new ArmGenericError(400, "InvalidRequestContent", message);

/** What the ARM fake hands over for a provider path it has no handler of. */
export interface GenericRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  base: string;
  /** The resource group's id as ARM spells it; for an extension type, its scope's id (any resource, group or the subscription). */
  rgId: string;
  /** [namespace, type1, name1, type2, name2, …] */
  rest: string[];
  body: string;
  send(res: ServerResponse, status: number, body?: unknown, headers?: Record<string, string>): void;
  /** One page of a list as the ARM fake pages them (its listPageSize), the next linked with nextLink. */
  page(items: Json[], url: URL, base: string): Json;
}

interface Stored {
  doc: Json;
  /** Looks (GETs) left before the running operation ends. */
  looks: number;
  op: string;
}

/** A document as a list shows it: the members the type's list leaves out are there with a null value. */
function asListed(doc: Json, leavesOut: readonly string[] = []): Json {
  for (const p of leavesOut) {
    const parts = p.split(".");
    const last = parts.pop() ?? "";
    const holder = parts.reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), doc);
    if (isObject(holder) && last in holder) holder[last] = null;
  }
  return doc;
}

/**
 * The generic handler, with its own resources; specs are loaded on first use of a type. `listLeavesOut`:
 * members (paths) a type's list answers with null though its GET has them (lowercased type → paths), as
 * some services' lists do (docs/adr/0013-azure-batched-drift-checks.md); none unless a test says so.
 */
export function armGenericHandler(
  opts: { looks?: number; listLeavesOut?: Readonly<Record<string, readonly string[]>> } = {},
) {
  const leavesOut = new Map(
    Object.entries(opts.listLeavesOut ?? {}).map(([t, paths]) => [t.toLowerCase(), paths]),
  );
  generateAzure();
  const catalog = loadAzureCatalog();
  const byType = new Map(catalog.kinds.map((e) => [e.type.toLowerCase(), e]));
  const specs = new Map<string, AzureKindSpec>();
  const resources = new Map<string, Stored>();
  const operations = new Map<string, { status: string; error?: Json }>();
  const looks = opts.looks ?? 1;
  const specOf = (typeKey: string) => {
    const known = specs.get(typeKey);
    if (known) return known;
    const e = byType.get(typeKey);
    if (!e) return undefined;
    const s = loadAzureSpec(e);
    specs.set(typeKey, s);
    return s;
  };

  const advance = (r: Stored) => {
    if (r.looks > 0 && --r.looks === 0) {
      const props = isObject(r.doc.properties) ? r.doc.properties : {};
      r.doc.properties = { ...props, provisioningState: "Succeeded" };
      operations.set(r.op, { status: "Succeeded" });
    }
  };

  const handle = async (g: GenericRequest): Promise<void> => {
    const method = g.req.method ?? "GET";
    const [ns = "", ...pairs] = g.rest;
    const apiVersion = g.url.searchParams.get("api-version") ?? "";
    // {id}/operationStatuses/{op}: the Azure-AsyncOperation this fake hands out.
    if (pairs.length >= 2 && pairs.at(-2)?.toLowerCase() === "operationstatuses" && method === "GET") {
      const op = operations.get(pairs.at(-1) ?? "");
      if (!op) throw new ArmGenericError(404, "OperationNotFound", "The operation was not found.");
      const owner = [...resources.values()].find((r) => r.op === pairs.at(-1));
      if (owner) advance(owner);
      const now = operations.get(pairs.at(-1) ?? "") ?? op;
      return g.send(g.res, 200, {
        id: g.url.pathname,
        name: pairs.at(-1),
        status: now.status,
        ...(now.error ? { error: now.error } : {}),
      });
    }
    const fn = pairs.length % 2 === 1 && method === "POST" ? pairs.at(-1) : undefined;
    const own = fn ? pairs.slice(0, -1) : pairs;
    const typeSegs = own.filter((_, i) => i % 2 === 0);
    const typeKey = `${ns}/${typeSegs.join("/")}`.toLowerCase();
    const spec = specOf(typeKey);
    // A type is served only at the scopes it is written at: a tenant type under a subscription, or a
    // resource-group type at the tenant, is no type there (ARM's own InvalidResourceType).
    const at = !g.rgId
      ? "tenant"
      : /^\/providers\/microsoft\.management\/managementgroups\/[^/]+$/i.test(g.rgId)
        ? "managementGroup"
        : undefined;
    const servedHere = (s: AzureKindSpec) =>
      at ? s.scope === at : s.scope !== "tenant" && s.scope !== "managementGroup";
    if (
      spec &&
      servedHere(spec) &&
      own.length % 2 === 1 &&
      method === "GET" &&
      apiVersion === spec.apiVersion
    ) {
      // A collection's list (`{parent}/{type}`): the resources directly below, page by page.
      const prefix = `${g.rgId}/providers/${[ns, ...own].join("/")}/`.toLowerCase();
      const items = [...resources.entries()]
        .filter(([k]) => k.startsWith(prefix) && !k.slice(prefix.length).includes("/"))
        .map(([, r]) => {
          const doc = structuredClone(r.doc);
          const wire = spec.union
            ? wireSpecOf(spec, spec.union.on === "name" ? doc.name : doc[spec.union.disc])
            : spec;
          return asListed(hideWriteOnly(wire, doc), leavesOut.get(typeKey));
        });
      return g.send(g.res, 200, g.page(items, g.url, g.base));
    }
    if (!spec || own.length % 2 === 1 || !servedHere(spec))
      throw new ArmGenericError(
        404,
        "InvalidResourceType",
        `The resource type '${typeSegs.join("/")}' could not be found in the namespace '${ns}' for api version '${apiVersion}'.`,
      );
    if (apiVersion !== spec.apiVersion)
      throw new ArmGenericError(
        400,
        "NoRegisteredProviderFound",
        `No registered resource provider found for location and API version '${apiVersion}' and type '${typeSegs.join("/")}'. The supported api-versions are '${spec.apiVersion}'.`,
      );
    const id = `${g.rgId}/providers/${[ns, ...own].join("/")}`;
    const key = id.toLowerCase();
    if (own.length > 2) {
      const parent = `${g.rgId}/providers/${[ns, ...own.slice(0, -2)].join("/")}`.toLowerCase();
      if (!resources.has(parent))
        throw new ArmGenericError(
          404,
          "ParentResourceNotFound",
          `Failed to perform '${method === "GET" ? "read" : "write"}' on resource(s) of type '${typeSegs.join("/")}', because the parent resource '${parent}' could not be found.`,
        );
    }
    const existing = resources.get(key);
    const name = own.at(-1) ?? "";
    const notFound = () =>
      new ArmGenericError(
        404,
        "ResourceNotFound",
        `The Resource '${spec.type}/${name}' under resource group '${g.rgId.split("/").at(-1)}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      );
    if (fn) {
      if (!existing) throw notFound();
      return g.send(g.res, 200, functionAnswer(spec, fn));
    }
    // A union type's document is one variant's: checked and shown as that variant's body.
    const wireOf = (doc: Json | undefined) =>
      spec.union ? wireSpecOf(spec, spec.union.on === "name" ? name : doc?.[spec.union.disc]) : spec;
    switch (method) {
      case "GET": {
        if (!existing) throw notFound();
        const shown = structuredClone(existing.doc);
        advance(existing);
        return g.send(g.res, 200, hideWriteOnly(wireOf(shown), shown));
      }
      case "PUT": {
        if (spec.fixedName && name !== spec.fixedName)
          throw new ArmGenericError(
            400,
            "InvalidResourceName",
            `The resource name '${name}' is not valid: it must be '${spec.fixedName}'.`,
          );
        const body = JSON.parse(g.body || "{}") as unknown;
        if (!isObject(body)) throw invalid("The request content was invalid and could not be deserialized.");
        const wire = wireOf(body);
        validate(wire, wire.body, wire.out, body, "");
        if (!existing) {
          // ARM reads a missing `properties` envelope as an empty one: its required members are missing.
          const missing = missingRequired(wire, wire.body, { properties: {}, ...body }, "");
          if (missing) throw invalid(`The request content is missing the required property '${missing}'.`);
        } else {
          for (const p of wire.createOnly) {
            const [a, b] = [get(existing.doc, p), get(body, p)];
            const norm = (v: unknown) =>
              p === "location" && typeof v === "string"
                ? v.replace(/\s+/g, "").toLowerCase()
                : JSON.stringify(v);
            if (b !== undefined && norm(a) !== norm(b))
              throw new ArmGenericError(
                400,
                "PropertyChangeNotAllowed",
                `Changing property '${p}' is not allowed.`,
              );
          }
          if (existing.looks > 0)
            throw new ArmGenericError(
              409,
              "AnotherOperationInProgress",
              `Another operation on this or dependent resource is in progress. Resource '${id}' is being provisioned.`,
            );
        }
        const op = randomUUID();
        operations.set(op, { status: "InProgress" });
        const props = isObject(body.properties) ? body.properties : {};
        const location =
          typeof body.location === "string" ? body.location.replace(/\s+/g, "").toLowerCase() : undefined;
        const doc: Json = {
          ...body,
          ...(location ? { location } : {}),
          id,
          name,
          type: spec.type,
          properties: { ...props, provisioningState: existing ? "Updating" : "Creating" },
        };
        resources.set(key, { doc, looks, op });
        return g.send(g.res, existing ? 200 : 201, hideWriteOnly(wire, structuredClone(doc)), {
          "azure-asyncoperation": `${g.base}${id}/operationStatuses/${op}?api-version=${spec.apiVersion}`,
        });
      }
      case "DELETE": {
        if (!existing) return g.send(g.res, 204);
        for (const k of [...resources.keys()]) if (k === key || k.startsWith(`${key}/`)) resources.delete(k);
        const op = randomUUID();
        operations.set(op, { status: "Succeeded" });
        return g.send(g.res, 202, undefined, {
          location: `${g.base}${id}/operationStatuses/${op}?api-version=${spec.apiVersion}`,
        });
      }
      default:
        throw new ArmGenericError(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
    }
  };
  const isExtension = (typeKey: string) => specOf(typeKey.toLowerCase())?.scope === "extension";
  return Object.assign(handle, {
    // The documents it holds, for the subscription-wide lists (Resources - List, Tags) of arm-fake.ts; an
    // extension resource (a lock, a role assignment) is no resource of a group there, as in ARM.
    documents: () =>
      [...resources.values()].map((r) => r.doc).filter((d) => !isExtension(String(d.type ?? ""))),
    /** Whether `{ns}/{type}[/{child}]` is an extension type: written under any scope (arm-fake.ts routes it here). */
    isExtension,
    /** The document of a resource id it holds (any case), e.g. an extension resource's scope. */
    find: (id: string) => resources.get(id.toLowerCase())?.doc,
  });
}

/**
 * A union type's spec as the wire has it for one variant (the discriminator's value, or on the name the
 * resource's name): the base members and that variant's own members side by side, the discriminator a
 * member of the variant's value, the paths of that variant's secrets, write-only and create-only members
 * without the variant's prefix. What the published type says a body of that variant is — ARM's check,
 * not the provider's mapping.
 */
export function wireSpecOf(spec: AzureKindSpec, value: unknown): AzureKindSpec {
  const union = spec.union;
  if (!union) return spec;
  const hit = Object.entries(union.variants).find(
    ([v]) => typeof value === "string" && v.toLowerCase() === value.toLowerCase(),
  );
  if (!hit)
    throw invalid(
      union.on === "name"
        ? `The resource name '${String(value)}' is not valid for '${spec.type}': one of ${Object.keys(union.variants).join(", ")}.`
        : value === undefined
          ? `The request content is missing the required property '${union.disc}'.`
          : `The value '${String(value)}' of '${union.disc}' is not one of ${Object.keys(union.variants).join(", ")}.`,
    );
  const [v, field] = hit;
  const fields = new Set(Object.values(union.variants));
  const flat = (top: Record<string, AzProp>): Record<string, AzProp> => {
    const out: Record<string, AzProp> = {};
    for (const [k, p] of Object.entries(top)) if (!fields.has(k)) out[k] = p;
    const node = top[field]?.s;
    if (node?.t === "ref") Object.assign(out, spec.defs[node.ref]?.props ?? {});
    return out;
  };
  const body = flat(spec.body);
  if (union.on === "body") body[union.disc] = { s: { t: "string" }, req: true, enum: [v] };
  const paths = (list: readonly string[]) =>
    list.flatMap((p) => {
      const head = p.split(".")[0] ?? "";
      if (!fields.has(head)) return [p];
      return head === field ? [p.slice(field.length + 1)] : [];
    });
  const { union: _, ...rest } = spec;
  return {
    ...rest,
    body,
    out: flat(spec.out),
    createOnly: paths(spec.createOnly),
    writeOnly: paths(spec.writeOnly),
    secrets: paths(spec.secrets),
    outSecrets: paths(spec.outSecrets),
  };
}

const get = (o: unknown, path: string) =>
  path.split(".").reduce<unknown>((v, k) => (isObject(v) ? v[k] : undefined), o);

/** ARM never shows secrets and write-only members back. */
function hideWriteOnly(spec: AzureKindSpec, doc: Json): Json {
  for (const p of [...spec.secrets, ...spec.writeOnly]) {
    const parts = p.split(".");
    const last = parts.pop() ?? "";
    const holders: unknown[] = [doc];
    for (const k of parts) {
      const next = holders
        .flatMap((h) => (isObject(h) ? [h[k]] : []))
        .flatMap((v) => (Array.isArray(v) ? v : [v]));
      holders.splice(0, holders.length, ...next);
    }
    for (const h of holders) if (isObject(h)) delete h[last];
  }
  return doc;
}

/**
 * The same member, type and read-only checks for the ARM fake's hand-routed types (arm-fake.ts), against the
 * same data: `(type, body)` throws ArmGenericError for a PUT body ARM would refuse; a type without data passes.
 */
export function armBodyValidator(): (type: string, body: Json) => void {
  generateAzure();
  const byType = new Map(loadAzureCatalog().kinds.map((e) => [e.type.toLowerCase(), e]));
  const specs = new Map<string, AzureKindSpec>();
  return (type, body) => {
    const key = type.toLowerCase();
    const entry = byType.get(key);
    if (!entry) return;
    const spec = specs.get(key) ?? loadAzureSpec(entry);
    specs.set(key, spec);
    validate(spec, spec.body, spec.out, body, "");
  };
}

/** The first required member missing, at any depth below the members the body has. */
function missingRequired(
  spec: AzureKindSpec,
  props: Record<string, AzProp>,
  v: Json,
  path: string,
): string | undefined {
  for (const [k, p] of Object.entries(props)) {
    const at = path ? `${path}.${k}` : k;
    const x = v[k];
    // A secret is sent under its own name: present or not, it is the request's.
    if (x === undefined) {
      if (p.req) return at;
      continue;
    }
    const items = p.s.t === "array" && Array.isArray(x) ? x : [x];
    const node = p.s.t === "array" ? p.s.of : p.s;
    if (node.t !== "ref") continue;
    for (const item of items) {
      const inner = isObject(item)
        ? missingRequired(spec, spec.defs[node.ref]?.props ?? {}, item, at)
        : undefined;
      if (inner) return inner;
    }
  }
  return undefined;
}

/** The body against the type: members it has (writable, or read-only → refused), types, enums are not enforced. */
function validate(
  spec: AzureKindSpec,
  props: Record<string, AzProp>,
  out: Record<string, AzProp> | undefined,
  v: Json,
  path: string,
) {
  for (const [k, x] of Object.entries(v)) {
    const at = path ? `${path}.${k}` : k;
    if (!path && ["id", "name", "type", "apiVersion"].includes(k)) continue;
    const p = props[k];
    if (!p) {
      if (out?.[k]) throw invalid(`The property '${at}' is read-only and cannot be set.`);
      throw invalid(`Could not find member '${k}' on object of type '${path || spec.type}'. Path '${at}'.`);
    }
    const outNode = out?.[k]?.s;
    check(spec, p.s, outNode, x, at);
  }
}

function check(spec: AzureKindSpec, node: AzNode, outNode: AzNode | undefined, x: unknown, at: string) {
  if (x === null) return;
  const wrong = (want: string) =>
    invalid(`Error converting value ${JSON.stringify(x)?.slice(0, 60)} to type '${want}'. Path '${at}'.`);
  switch (node.t) {
    case "string":
      if (typeof x !== "string") throw wrong("System.String");
      return;
    case "integer":
      if (typeof x !== "number" || !Number.isInteger(x)) throw wrong("System.Int64");
      return;
    case "boolean":
      if (typeof x !== "boolean") throw wrong("System.Boolean");
      return;
    case "json":
      return;
    case "array": {
      if (!Array.isArray(x)) throw wrong("System.Collections.Generic.List");
      const o = outNode?.t === "array" ? outNode.of : undefined;
      for (const [i, y] of x.entries()) check(spec, node.of, o, y, `${at}[${i}]`);
      return;
    }
    case "map": {
      if (!isObject(x)) throw wrong("System.Collections.Generic.Dictionary");
      for (const [k, y] of Object.entries(x)) check(spec, node.of, undefined, y, `${at}.${k}`);
      return;
    }
    case "ref": {
      if (!isObject(x)) throw wrong(spec.defs[node.ref]?.name ?? "Object");
      const outProps = outNode?.t === "ref" ? spec.defs[outNode.ref]?.props : undefined;
      validate(spec, spec.defs[node.ref]?.props ?? {}, outProps, x, at);
    }
  }
}

/** A `list*` answer shaped by the function's output type in the data, with fresh random strings. */
function functionAnswer(spec: AzureKindSpec, fn: string): unknown {
  const data = loadArmData();
  const r = data.resources.find(
    (x) => x.type.toLowerCase() === spec.type.toLowerCase() && x.api === spec.apiVersion,
  );
  const f = r?.fns?.find((x) => x.name.toLowerCase() === fn.toLowerCase());
  const types = r ? data.files[r.file]?.types : undefined;
  if (!f || !types)
    throw new ArmGenericError(
      404,
      "InvalidResourceType",
      `The function '${fn}' does not exist on '${spec.type}'.`,
    );
  const synth = (i: number, depth: number, index: number, name = ""): unknown => {
    const t: ArmType | undefined = types[i];
    if (!t || depth > 6) return undefined;
    switch (t.k) {
      case "s":
        return /keyName|^name$/i.test(name) ? `key${index + 1}` : randomBytes(24).toString("base64");
      case "l":
        return t.v;
      case "i":
        return 1;
      case "b":
        return true;
      case "arr":
        return [0, 1].map((n) => synth(t.of, depth + 1, n));
      case "u":
        return t.el[0] === undefined ? undefined : synth(t.el[0], depth + 1, index, name);
      case "o":
        return Object.fromEntries(Object.entries(t.p).map(([k, p]) => [k, synth(p[0], depth + 1, index, k)]));
      default:
        return undefined;
    }
  };
  return synth(f.out, 0, 0);
}
