// Wire-protocol fake of Azure Resource Manager (resource groups + generic provider resources) and of
// the Microsoft Entra ID token endpoint, so the real @azure/arm-* and @azure/identity SDKs run against
// it unchanged. HTTPS only: the Azure SDK refuses to send bearer tokens over plain http.
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import { ArmGenericError, armBodyValidator, armGenericHandler, type GenericRequest } from "./arm-generic.ts";

type GenericHandler = ((g: GenericRequest) => Promise<void>) & {
  documents?: () => Json[];
  isExtension?: (typeKey: string) => boolean;
  find?: (id: string) => Json | undefined;
};

import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { createPostgresFake, POSTGRES_NAMESPACE } from "./arm-postgres.ts";

export interface ArmFakeOptions {
  port: number;
  host?: string;
  /** PEM text or path of the serving certificate. */
  cert: string;
  /** PEM text or path of the serving key. */
  key: string;
  /** Known subscription ids; when set, any other subscription gets 404 SubscriptionNotFound. */
  subscriptions?: string[];
  /** clientId → secret; when set, the token endpoint checks them and ARM accepts only issued tokens. */
  clients?: Record<string, string>;
  /** Polls answered 202 before a DELETE operation completes (default 1). */
  lroPolls?: number;
  /** A DELETE completes after this long even if nobody polls (default 3000 ms). */
  lroMs?: number;
  /** Extra provider resource types to accept, e.g. `Microsoft.Sql/servers/databases`. */
  resourceTypes?: string[];
  /**
   * Items per page of a list (resource groups without $top, provider resource collections): ARM chooses
   * its page sizes and links the next page with `nextLink`. Default: every item on one page.
   */
  listPageSize?: number;
  /** Looks (polls, reads) after which a PostgreSQL flexible-server operation completes (default 3). */
  postgresPolls?: number;
  /** vCores per subscription and region before PostgreSQL creates fail with QuotaExceeded (default 64). */
  postgresVCoreQuota?: number;
}

export interface FakeServer {
  url: string;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

// Provider resource types served generically under a resource group; add more as providers need them.
const PROVIDER_TYPES = [
  "Microsoft.Network/virtualNetworks",
  "Microsoft.Network/virtualNetworks/subnets",
  "Microsoft.Network/networkSecurityGroups",
  "Microsoft.Network/publicIPAddresses",
  "Microsoft.Storage/storageAccounts",
  "Microsoft.ManagedIdentity/userAssignedIdentities",
  "Microsoft.KeyVault/vaults",
];
// Served by arm-postgres.ts; listed here for the request counters' names.
const POSTGRES_TYPES = [
  "Microsoft.DBforPostgreSQL/flexibleServers",
  "Microsoft.DBforPostgreSQL/flexibleServers/firewallRules",
  "Microsoft.DBforPostgreSQL/flexibleServers/databases",
];
// Child collections ARM embeds in their parent: a GET shows them, and a PUT of the parent replaces them
// (a child left out of the body is deleted), so clients must send back what they read.
const EMBEDDED_CHILDREN: Record<string, string> = { "microsoft.network/virtualnetworks": "subnets" };
const RG_TYPE = "Microsoft.Resources/resourceGroups";
// Microsoft.Resources api-versions of Resources - List and Tags (azure-rest-api-specs, resources/stable).
const RESOURCES_API_VERSIONS = new Set([
  "2019-10-01",
  "2020-06-01",
  "2020-10-01",
  "2021-01-01",
  "2021-04-01",
  "2022-09-01",
  "2023-07-01",
  "2024-03-01",
  "2024-07-01",
  "2024-11-01",
  "2025-03-01",
  "2025-04-01",
]);
const invalidApiVersion = (v: string, type: string) =>
  new HttpError(
    400,
    "InvalidApiVersionParameter",
    `The api-version '${v}' is invalid. The supported versions are '${[...RESOURCES_API_VERSIONS].join(",")}'. (resource type '${type}' in namespace 'Microsoft.Resources')`,
  );

const RG_NAME = /^[-\w._()\p{L}]{1,90}$/u;
const TOKEN_TTL_S = 3599;

interface Resource {
  doc: Json;
  /** Lower-cased id of the owning resource group (equal to its own id for a group). */
  rg: string;
  deletingOp?: string;
}

/** An error the test asked the fake to answer with (POST /__fake/fail), e.g. 429 with Retry-After. */
interface InjectedFault {
  method: string;
  /** A piece of the request path (case-insensitive). */
  path: string;
  status: number;
  code: string;
  message: string;
  retryAfter?: string;
  times: number;
}

interface Operation {
  target: string;
  polls: number;
  startedAt: number;
  done: boolean;
}

class HttpError extends Error {
  status: number;
  code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function pem(value: string): string {
  return value.startsWith("-----BEGIN") ? value : readFileSync(value, "utf8");
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): Json {
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Json;
  } catch (err) {
    throw new HttpError(
      400,
      "InvalidRequestContent",
      `The request content was invalid and could not be deserialized: '${(err as Error).message}'.`,
    );
  }
  throw new HttpError(400, "InvalidRequestContent", "The request content must be a JSON object.");
}

// RFC 7396 JSON merge patch: ARM PATCH semantics for provider resource properties.
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Json =
    target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ARM reports locations in their programmatic form: "West US" → "westus".
const normaliseLocation = (loc: unknown): string | undefined =>
  typeof loc === "string" ? loc.replace(/\s+/g, "").toLowerCase() : undefined;

function tagsOf(body: Json): Record<string, string> | undefined {
  const t = body["tags"];
  if (t === undefined || t === null) return undefined;
  if (typeof t !== "object" || Array.isArray(t))
    throw new HttpError(400, "InvalidTags", "Tags must be an object.");
  return { ...(t as Record<string, string>) };
}

export async function startArmFake(opts: ArmFakeOptions & { generic?: GenericHandler }): Promise<FakeServer> {
  const host = opts.host ?? "127.0.0.1";
  const lroPolls = opts.lroPolls ?? 1;
  const lroMs = opts.lroMs ?? 3000;
  const listPageSize = opts.listPageSize;
  const subscriptions = opts.subscriptions
    ? new Set(opts.subscriptions.map((s) => s.toLowerCase()))
    : undefined;
  const clients = opts.clients;
  const types = new Map([...PROVIDER_TYPES, ...(opts.resourceTypes ?? [])].map((t) => [t.toLowerCase(), t]));
  const validateBody = armBodyValidator();
  const counterNames = new Map([...types, ...POSTGRES_TYPES.map((t) => [t.toLowerCase(), t] as const)]);
  let faults: InjectedFault[] = [];
  const resources = new Map<string, Resource>();
  const operations = new Map<string, Operation>();
  const tokens = new Map<string, number>();
  let counters: Record<string, number> = {};

  const count = (key: string) => {
    counters[key] = (counters[key] ?? 0) + 1;
  };

  // Completing a DELETE removes the target, its nested resources and, for a group, everything in it.
  const finish = (op: Operation) => {
    if (op.done) return;
    op.done = true;
    for (const [id, r] of resources) {
      if (id === op.target || id.startsWith(`${op.target}/`) || r.rg === op.target) resources.delete(id);
    }
  };
  // Finishes DELETEs whose time is up, so a caller that never polls still sees the resource go away.
  const settle = () => {
    for (const op of operations.values()) if (!op.done && Date.now() - op.startedAt >= lroMs) finish(op);
  };

  const send = (
    res: ServerResponse,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const text = body === undefined ? "" : JSON.stringify(body);
    res.writeHead(status, {
      "x-ms-request-id": randomUUID(),
      "x-ms-correlation-request-id": randomUUID(),
      ...(text ? { "content-type": "application/json; charset=utf-8" } : {}),
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  };

  const authenticate = (req: IncomingMessage) => {
    const auth = req.headers.authorization ?? "";
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m?.[1]) {
      throw new HttpError(
        401,
        "AuthenticationFailed",
        "Authentication failed. The 'Authorization' header is missing.",
      );
    }
    if (!clients) return;
    const expires = tokens.get(m[1]);
    if (expires === undefined)
      throw new HttpError(401, "InvalidAuthenticationToken", "The access token is invalid.");
    if (expires < Date.now()) {
      throw new HttpError(
        401,
        "ExpiredAuthenticationToken",
        `The access token expiry UTC time '${new Date(expires).toUTCString()}' is earlier than current UTC time '${new Date().toUTCString()}'.`,
      );
    }
  };

  // Entra ID v2 token endpoint, client_credentials grant only (what ClientSecretCredential uses).
  const issueToken = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await readBody(req));
    const entraError = (status: number, error: string, code: number, description: string) =>
      send(res, status, {
        error,
        error_description: `AADSTS${code}: ${description} Trace ID: ${randomUUID()} Correlation ID: ${randomUUID()} Timestamp: ${new Date().toISOString()}`,
        error_codes: [code],
        timestamp: new Date().toISOString(),
        trace_id: randomUUID(),
        correlation_id: randomUUID(),
      });
    if (form.get("grant_type") !== "client_credentials") {
      return entraError(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.");
    }
    const clientId = form.get("client_id") ?? "";
    if (clients) {
      const secret = clients[clientId];
      if (secret === undefined) {
        return entraError(
          400,
          "unauthorized_client",
          700016,
          `Application with identifier '${clientId}' was not found in the directory.`,
        );
      }
      if (form.get("client_secret") !== secret) {
        return entraError(
          401,
          "invalid_client",
          7000215,
          "Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.",
        );
      }
    }
    const token = randomBytes(32).toString("base64url");
    tokens.set(token, Date.now() + TOKEN_TTL_S * 1000);
    send(res, 200, {
      token_type: "Bearer",
      expires_in: TOKEN_TTL_S,
      ext_expires_in: TOKEN_TTL_S,
      access_token: token,
    });
  };

  const openidConfiguration = (base: string, tenant: string) => ({
    token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: ["client_secret_post", "private_key_jwt", "client_secret_basic"],
    jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
    response_modes_supported: ["query", "fragment", "form_post"],
    subject_types_supported: ["pairwise"],
    id_token_signing_alg_values_supported: ["RS256"],
    response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
    scopes_supported: ["openid", "profile", "email", "offline_access"],
    issuer: `${base}/${tenant}/v2.0`,
    authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/devicecode`,
    end_session_endpoint: `${base}/${tenant}/oauth2/v2.0/logout`,
    cloud_instance_name: "microsoftonline.com",
  });

  // One page of a list from $skiptoken on, `size` items, with the next page's URL as ARM gives it.
  const page = (items: Json[], url: URL, base: string, size: number): Json => {
    const skip = Number(url.searchParams.get("$skiptoken") ?? 0);
    const body: Json = { value: items.slice(skip, skip + size) };
    if (skip + size < items.length) {
      const next = new URL(url.pathname + url.search, base);
      next.searchParams.set("$skiptoken", String(skip + size));
      body["nextLink"] = next.toString();
    }
    return body;
  };

  /**
   * The tag part of the `$filter` grammar of Resources - List and Resource Groups - List (2021-04-01):
   * `tagName eq '…'`, optionally `and tagValue eq '…'`, OData quotes doubled. Anything else is answered as
   * ARM answers a filter it cannot read (400 InvalidFilterInQueryString), never with an unfiltered list.
   */
  const tagFilter = (url: URL): { matches: (doc: Json) => boolean; withValue: boolean } | undefined => {
    const filter = url.searchParams.get("$filter");
    if (filter === null) return undefined;
    const quoted = "'((?:[^']|'')*)'";
    const m = new RegExp(`^tagName eq ${quoted}(?: and tagValue eq ${quoted})?$`, "i").exec(filter.trim());
    if (!m)
      throw new HttpError(
        400,
        "InvalidFilterInQueryString",
        `Invalid $filter '${filter}' specified in the query string.`,
      );
    const unquote = (v: string | undefined) => v?.replaceAll("''", "'");
    const tagName = unquote(m[1]) ?? "";
    const tagValue = unquote(m[2]);
    return {
      withValue: tagValue !== undefined,
      matches: (doc) => {
        const tags = (doc["tags"] ?? {}) as Record<string, string>;
        // ARM compares tag names case-insensitively, values exactly.
        const key = Object.keys(tags).find((k) => k.toLowerCase() === tagName.toLowerCase());
        return key !== undefined && (tagValue === undefined || tags[key] === tagValue);
      },
    };
  };

  // Resources - List (GET /subscriptions/{s}/resources): every provider resource of the subscription (not the
  // groups themselves, as ARM), this fake's own types and the generic handler's (generated kinds).
  // Filtered by tag name and value, ARM leaves each resource's tags out of the answer (the REST reference's
  // note on $filter): the fake does the same for any tag filter, so a client must read them per resource.
  const listResources = (res: ServerResponse, url: URL, base: string, sub: string) => {
    const apiVersion = url.searchParams.get("api-version") ?? "";
    if (!RESOURCES_API_VERSIONS.has(apiVersion)) throw invalidApiVersion(apiVersion, "resources");
    const tag = tagFilter(url);
    const prefix = `/subscriptions/${sub}/resourcegroups/`.toLowerCase();
    const items = [
      ...[...resources.entries()]
        .filter(([id, r]) => id.startsWith(prefix) && r.rg !== id)
        .map(([, r]) => r.doc),
      ...(opts.generic?.documents?.() ?? []).filter((d) => String(d["id"]).toLowerCase().startsWith(prefix)),
    ]
      .filter((doc) => !tag || tag.matches(doc))
      .map((doc) => {
        const { id, name, type, location, tags } = doc;
        return { id, name, type, ...(location ? { location } : {}), ...(tag || !tags ? {} : { tags }) };
      });
    const top = Number(url.searchParams.get("$top") ?? 0) || listPageSize || items.length;
    return send(res, 200, page(items, url, base, top));
  };

  // Tags - Get At Scope (GET {scope}/providers/Microsoft.Resources/tags/default): a resource's or a group's tags.
  const tagsAtScope = (res: ServerResponse, url: URL, scope: string) => {
    const apiVersion = url.searchParams.get("api-version") ?? "";
    if (!RESOURCES_API_VERSIONS.has(apiVersion)) throw invalidApiVersion(apiVersion, "tags");
    const doc =
      resources.get(scope.toLowerCase())?.doc ??
      opts.generic?.documents?.().find((d) => String(d["id"]).toLowerCase() === scope.toLowerCase());
    if (!doc)
      throw new HttpError(
        404,
        "ResourceNotFound",
        `The Resource '${scope}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      );
    return send(res, 200, {
      id: `${doc["id"] as string}/providers/Microsoft.Resources/tags/default`,
      name: "default",
      type: "Microsoft.Resources/tags",
      properties: { tags: { ...((doc["tags"] ?? {}) as Json) } },
    });
  };

  const checkSubscription = (sub: string) => {
    if (subscriptions && !subscriptions.has(sub.toLowerCase())) {
      throw new HttpError(404, "SubscriptionNotFound", `The subscription '${sub}' could not be found.`);
    }
  };

  // ARM's answer to a PUT of an existing resource's name in another location (code InvalidResourceLocation).
  const invalidLocation = (doc: Json, rgName: string, location: string) =>
    new HttpError(
      400,
      "InvalidResourceLocation",
      `The resource '${doc["name"] as string}' already exists in location '${doc["location"] as string}' in resource group '${rgName}'. A resource with the same name cannot be created in location '${location}'. Please select a new resource name.`,
    );
  const beingDeleted = (name: string) =>
    new HttpError(
      409,
      "ResourceGroupBeingDeleted",
      `The resource group '${name}' is in deprovisioning state and cannot perform this operation.`,
    );

  const group = (sub: string, name: string): Resource => {
    const r = resources.get(`/subscriptions/${sub}/resourcegroups/${name}`.toLowerCase());
    if (!r) throw new HttpError(404, "ResourceGroupNotFound", `Resource group '${name}' could not be found.`);
    return r;
  };

  const startDelete = (res: ServerResponse, base: string, sub: string, r: Resource, apiVersion: string) => {
    let opId = r.deletingOp;
    if (!opId) {
      opId = randomUUID();
      r.deletingOp = opId;
      operations.set(opId, {
        target: (r.doc["id"] as string).toLowerCase(),
        polls: 0,
        startedAt: Date.now(),
        done: false,
      });
      const props = r.doc["properties"] as Json;
      if (props) props["provisioningState"] = "Deleting";
    }
    send(res, 202, undefined, {
      location: `${base}/subscriptions/${sub}/operationresults/${opId}?api-version=${apiVersion}`,
      "retry-after": "0",
    });
  };

  const pollOperation = (
    res: ServerResponse,
    base: string,
    sub: string,
    opId: string,
    apiVersion: string,
  ) => {
    const op = operations.get(opId);
    if (!op) throw new HttpError(404, "OperationNotFound", `The operation '${opId}' could not be found.`);
    op.polls += 1;
    if (op.polls > lroPolls) finish(op);
    if (!op.done) {
      return send(res, 202, undefined, {
        location: `${base}/subscriptions/${sub}/operationresults/${opId}?api-version=${apiVersion}`,
        "retry-after": "0",
      });
    }
    send(res, 200);
  };

  const postgres = createPostgresFake(
    {
      resources,
      send,
      body: async (req) => parseJson(await readBody(req)),
      fail: (status, code, message) => new HttpError(status, code, message),
      group,
      page: (items, url, base) => page(items, url, base, listPageSize ?? items.length),
    },
    {
      ...(opts.postgresPolls !== undefined ? { polls: opts.postgresPolls } : {}),
      ...(opts.postgresVCoreQuota !== undefined ? { vCoreQuota: opts.postgresVCoreQuota } : {}),
    },
  );

  /** Answers with an injected fault if one matches the request (each is used `times` times). */
  const injectedFault = (method: string, path: string): HttpError | undefined => {
    const f = faults.find((x) => x.method === method && path.toLowerCase().includes(x.path.toLowerCase()));
    if (!f) return undefined;
    f.times -= 1;
    if (f.times <= 0) faults = faults.filter((x) => x !== f);
    return Object.assign(new HttpError(f.status, f.code, f.message), { retryAfter: f.retryAfter });
  };

  const resourceGroups = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    sub: string,
    name?: string,
  ) => {
    const method = req.method ?? "GET";
    const base = `https://${req.headers.host}`;
    const apiVersion = url.searchParams.get("api-version") ?? "";
    if (name === undefined) {
      if (method !== "GET")
        throw new HttpError(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
      const prefix = `/subscriptions/${sub}/resourcegroups/`.toLowerCase();
      let groups = [...resources.entries()]
        .filter(([id, r]) => id.startsWith(prefix) && r.rg === id)
        .map(([, r]) => r.doc);
      const tag = tagFilter(url);
      if (tag) groups = groups.filter((g) => tag.matches(g));
      const top = Number(url.searchParams.get("$top") ?? 0) || listPageSize || groups.length;
      return send(res, 200, page(groups, url, base, top));
    }
    const id = `/subscriptions/${sub}/resourcegroups/${name}`.toLowerCase();
    const existing = resources.get(id);
    if (existing?.deletingOp && (method === "PUT" || method === "PATCH")) throw beingDeleted(name);
    switch (method) {
      case "HEAD":
        return send(res, existing ? 204 : 404);
      case "GET":
        return send(res, 200, group(sub, name).doc);
      case "PUT": {
        const body = parseJson(await readBody(req));
        if (!RG_NAME.test(name) || name.endsWith(".")) {
          throw new HttpError(
            400,
            "InvalidResourceGroup",
            `The provided resource group name '${name}' is invalid.`,
          );
        }
        const location = normaliseLocation(body["location"]);
        if (!location)
          throw new HttpError(
            400,
            "LocationRequired",
            "The location property is required for this definition.",
          );
        if (existing && existing.doc["location"] !== location) {
          throw new HttpError(
            409,
            "InvalidResourceGroupLocation",
            `Invalid resource group location '${location}'. The Resource group already exists in location '${existing.doc["location"] as string}'.`,
          );
        }
        const stored = existing ? (existing.doc["name"] as string) : name;
        const doc: Json = {
          id: `/subscriptions/${sub}/resourceGroups/${stored}`,
          name: stored,
          type: RG_TYPE,
          location,
          ...(tagsOf(body) ? { tags: tagsOf(body) } : {}),
          ...(typeof body["managedBy"] === "string" ? { managedBy: body["managedBy"] } : {}),
          properties: { provisioningState: "Succeeded" },
        };
        resources.set(id, { doc, rg: id });
        return send(res, existing ? 200 : 201, doc);
      }
      case "PATCH": {
        const r = group(sub, name);
        const body = parseJson(await readBody(req));
        if ("tags" in body) {
          const tags = tagsOf(body);
          if (tags) r.doc["tags"] = tags;
          else delete r.doc["tags"];
        }
        if (typeof body["managedBy"] === "string") r.doc["managedBy"] = body["managedBy"];
        return send(res, 200, r.doc);
      }
      case "DELETE":
        return startDelete(res, base, sub, group(sub, name), apiVersion);
      default:
        throw new HttpError(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
    }
  };

  // {scope}/providers/{ns}/{type}/{name}…: where an extension type's path (the last `providers`) starts, if it is one.
  const extensionAt = (lower: string[]): number | undefined => {
    const at = lower.lastIndexOf("providers");
    if (at < 2 || lower.length < at + 3 || !opts.generic?.isExtension) return undefined;
    const typeKey = [lower[at + 1], ...lower.slice(at + 2).filter((_, i) => i % 2 === 0)].join("/");
    return opts.generic.isExtension(typeKey) ? at : undefined;
  };

  // The scope an extension resource is written under must exist: ARM answers its own 404 otherwise.
  const scopeId = (sub: string, seg: string[]): string => {
    const scope = `/${seg.join("/")}`;
    if (seg.length === 2) return `/subscriptions/${sub}`;
    const lower = seg.map((s) => s.toLowerCase());
    const rg = lower[2] === "resourcegroups" && seg[3] ? group(sub, seg[3]) : undefined;
    if (rg && seg.length === 4) return rg.doc["id"] as string;
    const doc = resources.get(scope.toLowerCase())?.doc ?? opts.generic?.find?.(scope);
    if (
      doc &&
      !(doc["properties"] as Json | undefined)?.["provisioningState"]?.toString().match(/^deleting$/i)
    )
      return doc["id"] as string;
    const at = lower.lastIndexOf("providers");
    const what = at >= 0 ? [seg[at + 1], ...seg.slice(at + 2)].join("/") : scope;
    throw new HttpError(
      404,
      "ResourceNotFound",
      rg
        ? `The Resource '${what}' under resource group '${seg[3]}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`
        : `The Resource '${what}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
    );
  };

  // {scope}/providers/{ns}/{type}/{name}[/{childType}/{childName}]: an extension type's resource, served by the generic handler.
  const extensionResources = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    sub: string,
    seg: string[],
    at: number,
  ) => {
    const g = opts.generic as GenericHandler;
    return toGeneric(g, req, res, url, scopeId(sub, seg.slice(0, at)), seg.slice(at + 1));
  };

  // A request for the generic, data-driven handler (arm-generic.ts), its errors in ARM's shape.
  const toGeneric = async (
    g: GenericHandler,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    rgId: string,
    rest: string[],
  ) => {
    const body = await readBody(req);
    const pageOf = (items: Json[], u: URL, b: string) => page(items, u, b, listPageSize ?? items.length);
    return g({
      req,
      res,
      url,
      base: `https://${req.headers.host}`,
      rgId,
      rest,
      body,
      send,
      page: pageOf,
    }).catch((e: unknown) => {
      throw e instanceof ArmGenericError ? new HttpError(e.status, e.code, e.message) : e;
    });
  };

  // /subscriptions/{sub}/resourceGroups/{rg}/providers/{ns}/{type}[/{name}[/{childType}[/{childName}]]]
  const providerResources = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    sub: string,
    rgName: string,
    rest: string[],
  ) => {
    const method = req.method ?? "GET";
    const [ns = "", ...pairs] = rest;
    const typeSegments = pairs.filter((_, i) => i % 2 === 0);
    const typeKey = `${ns}/${typeSegments.join("/")}`.toLowerCase();
    const canonical = types.get(typeKey);
    const apiVersion = url.searchParams.get("api-version") ?? "";
    if (!canonical && opts.generic) {
      // Every other type the generated Azure kinds have: the generic, data-driven handler (arm-generic.ts).
      return toGeneric(opts.generic, req, res, url, group(sub, rgName).doc["id"] as string, rest);
    }
    if (!canonical) {
      throw new HttpError(
        404,
        "InvalidResourceType",
        `The resource type '${typeSegments.join("/")}' could not be found in the namespace '${ns}' for api version '${apiVersion}'.`,
      );
    }
    const rg = group(sub, rgName);
    const rgId = (rg.doc["id"] as string).toLowerCase();
    const path = `${rg.doc["id"] as string}/providers/${[ns, ...pairs].join("/")}`;
    const typeLabel = canonical.split("/").slice(1).join("/");
    const isCollection = pairs.length % 2 === 1;
    // A nested resource needs its parent: ARM answers 404 ParentResourceNotFound otherwise.
    if (pairs.length > 2) {
      const parentPath = `${rg.doc["id"] as string}/providers/${[ns, ...pairs.slice(0, isCollection ? -1 : -2)].join("/")}`;
      if (!resources.has(parentPath.toLowerCase())) {
        throw new HttpError(
          404,
          "ParentResourceNotFound",
          `Failed to perform '${method === "GET" ? "read" : "write"}' on resource(s) of type '${typeLabel}', because the parent resource '${parentPath}' could not be found.`,
        );
      }
    }
    const embedded = EMBEDDED_CHILDREN[typeKey];
    const childrenOf = (id: string) => {
      const childPrefix = embedded ? `${id}/${embedded}/` : "";
      return [...resources.entries()]
        .filter(
          ([cid]) =>
            childPrefix && cid.startsWith(childPrefix) && !cid.slice(childPrefix.length).includes("/"),
        )
        .map(([, r]) => r.doc);
    };
    // A parent as ARM shows it, in a GET or a list: with its embedded children.
    const view = (id: string, doc: Json): Json =>
      embedded
        ? { ...doc, properties: { ...((doc["properties"] ?? {}) as Json), [embedded]: childrenOf(id) } }
        : doc;
    if (isCollection) {
      if (method !== "GET")
        throw new HttpError(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
      const prefix = `${path}/`.toLowerCase();
      const value = [...resources.entries()]
        .filter(([id]) => id.startsWith(prefix) && !id.slice(prefix.length).includes("/"))
        .map(([id, r]) => view(id, r.doc));
      return send(res, 200, page(value, url, `https://${req.headers.host}`, listPageSize ?? value.length));
    }
    const id = path.toLowerCase();
    const existing = resources.get(id);
    const name = pairs[pairs.length - 1] ?? "";
    const notFound = () =>
      new HttpError(
        404,
        "ResourceNotFound",
        `The Resource '${canonical}/${name}' under resource group '${rg.doc["name"] as string}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      );
    if (rg.deletingOp && method !== "GET" && method !== "HEAD") throw beingDeleted(rgName);
    // A write racing a pending DELETE would be wiped when that operation completes: refuse it.
    if (existing?.deletingOp && (method === "PUT" || method === "PATCH")) {
      throw new HttpError(
        409,
        "AnotherOperationInProgress",
        `Another operation on this or dependent resource is in progress. Resource '${path}' is being deleted.`,
      );
    }
    const children = () => childrenOf(id);
    switch (method) {
      case "HEAD":
        return send(res, existing ? 204 : 404);
      case "GET":
        if (!existing) throw notFound();
        return send(res, 200, view(id, existing.doc));
      case "PUT": {
        const body = parseJson(await readBody(req));
        // The same published type data the generic types are validated against (arm-generic.ts).
        try {
          validateBody(canonical, body);
        } catch (e) {
          throw e instanceof ArmGenericError ? new HttpError(e.status, e.code, e.message) : e;
        }
        const location = normaliseLocation(body["location"]);
        if (!location && pairs.length === 2) {
          throw new HttpError(
            400,
            "LocationRequired",
            "The location property is required for this definition.",
          );
        }
        // A resource never moves: ARM refuses a PUT of an existing name in another location.
        if (existing && location && existing.doc["location"] && existing.doc["location"] !== location) {
          throw invalidLocation(existing.doc, rg.doc["name"] as string, location);
        }
        const { id: _i, name: _n, type: _t, ...rest } = body;
        const allProps = (rest["properties"] ?? {}) as Json;
        // Embedded children are stored as resources of their own, never inside the parent's document.
        const sentChildren = embedded ? allProps[embedded] : undefined;
        const props = embedded
          ? Object.fromEntries(Object.entries(allProps).filter(([k]) => k !== embedded))
          : allProps;
        const doc: Json = {
          ...rest,
          id: existing ? existing.doc["id"] : path,
          name: existing ? existing.doc["name"] : name,
          type: canonical,
          ...(location ? { location } : {}),
          properties: { ...props, provisioningState: "Succeeded" },
        };
        resources.set(id, { doc, rg: rgId });
        if (embedded) {
          // The body's children are the parent's children now: missing ones go, sent ones are written.
          const sent = Array.isArray(sentChildren) ? (sentChildren as Json[]) : [];
          const keep = new Set(sent.map((c) => String(c["name"] ?? "").toLowerCase()));
          for (const child of children()) {
            if (!keep.has(String(child["name"]).toLowerCase()))
              resources.delete(String(child["id"]).toLowerCase());
          }
          for (const c of sent) {
            const childName = String(c["name"] ?? "");
            if (!childName) continue;
            const childPath = `${doc["id"] as string}/${embedded}/${childName}`;
            const childType = `${canonical}/${embedded}`;
            const childProps = (c["properties"] ?? {}) as Json;
            resources.set(childPath.toLowerCase(), {
              doc: {
                id: childPath,
                name: childName,
                type: childType,
                properties: { ...childProps, provisioningState: "Succeeded" },
              },
              rg: rgId,
            });
          }
        }
        return send(res, existing ? 200 : 201, view(id, doc));
      }
      case "PATCH": {
        if (!existing) throw notFound();
        const body = parseJson(await readBody(req));
        const { id: _i, name: _n, type: _t, location: _l, tags, ...rest } = body;
        const merged = mergePatch(existing.doc, rest) as Json;
        if (tags !== undefined) merged["tags"] = tags ?? undefined;
        merged["properties"] = { ...((merged["properties"] ?? {}) as Json), provisioningState: "Succeeded" };
        existing.doc = merged;
        return send(res, 200, view(id, merged));
      }
      case "DELETE":
        // ARM answers 204 for deleting a provider resource that does not exist.
        if (!existing) return send(res, 204);
        return startDelete(res, `https://${req.headers.host}`, sub, existing, apiVersion);
      default:
        throw new HttpError(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
    }
  };

  // The tenant's and the management groups' resources: the generic handler's, a management group being one
  // of them (Microsoft.Management/managementGroups, a tenant type) that must exist, as a scope must.
  const aboveSubscriptions = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    seg: string[],
    lower: string[],
  ) => {
    const method = req.method ?? "GET";
    const at = lower.lastIndexOf("providers");
    const typeKey = [lower[at + 1], ...lower.slice(at + 2).filter((_, i) => i % 2 === 0)].join("/");
    count(`${method} ${typeKey}${seg.length % 2 === 0 && method === "GET" ? " (list)" : ""}`);
    authenticate(req);
    const fault = injectedFault(method, url.pathname);
    if (fault) throw fault;
    if (!url.searchParams.get("api-version"))
      throw new HttpError(
        400,
        "MissingApiVersionParameter",
        "The api-version query parameter (?api-version=) is required for all requests.",
      );
    const g = opts.generic as GenericHandler;
    if (at === 0) return toGeneric(g, req, res, url, "", seg.slice(1));
    const scope = `/${seg.slice(0, at).join("/")}`;
    if (at !== 4 || lower[1] !== "microsoft.management" || lower[2] !== "managementgroups")
      throw new HttpError(404, "NotFound", `The fake has no route for ${method} ${url.pathname}.`);
    const group = g.find?.(scope);
    if (!group)
      throw new HttpError(
        404,
        "ResourceNotFound",
        `The Resource 'Microsoft.Management/managementGroups/${seg[3]}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      );
    return toGeneric(g, req, res, url, group["id"] as string, seg.slice(at + 1));
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    // Concatenated, not resolved: the SDK's *ById calls send "//subscriptions/…", which URL() would read as a host.
    const url = new URL(`https://fake${req.url ?? "/"}`);
    const method = req.method ?? "GET";
    const seg = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    const lower = seg.map((s) => s.toLowerCase());
    const base = `https://${req.headers.host}`;

    if (lower[0] === "__fake") {
      if (lower[1] === "stats" && method === "GET") {
        const total = Object.values(counters).reduce((a, b) => a + b, 0);
        return send(res, 200, { requests: counters, total });
      }
      if (lower[1] === "reset" && method === "POST") {
        counters = {};
        return send(res, 200, { reset: true });
      }
      if (lower[1] === "fail" && method === "POST") {
        const f = parseJson(await readBody(req)) as unknown as InjectedFault;
        faults.push({ ...f, times: f.times ?? 1 });
        return send(res, 200, { injected: true });
      }
    }
    // Entra ID: /{tenant}/oauth2/v2.0/token and the OIDC discovery document MSAL fetches first.
    if (
      seg.length === 4 &&
      lower[1] === "oauth2" &&
      lower[2] === "v2.0" &&
      lower[3] === "token" &&
      method === "POST"
    ) {
      count("POST token");
      return issueToken(req, res);
    }
    if (
      lower.length === 4 &&
      lower[1] === "v2.0" &&
      lower[2] === ".well-known" &&
      lower[3] === "openid-configuration"
    ) {
      count("GET openid-configuration");
      return send(res, 200, openidConfiguration(base, seg[0] ?? "common"));
    }
    // Above the subscriptions: a tenant type (`/providers/{ns}/{type}/…`) or a management-group one
    // (`/providers/Microsoft.Management/managementGroups/{id}/providers/{ns}/{type}/…`), generic types only.
    if (lower[0] === "providers" && seg.length >= 3 && opts.generic)
      return aboveSubscriptions(req, res, url, seg, lower);
    if (lower[0] !== "subscriptions" || !seg[1]) {
      count(`${method} unknown`);
      throw new HttpError(404, "NotFound", `The fake has no route for ${method} ${url.pathname}.`);
    }

    const sub = seg[1];
    const providerType =
      lower[2] === "resourcegroups" && lower[4] === "providers"
        ? [lower[5], ...lower.slice(6).filter((_, i) => i % 2 === 0)].join("/")
        : undefined;
    const postgresOperation =
      lower[2] === "providers" && lower[3] === POSTGRES_NAMESPACE && lower[4] === "locations";
    const tagsRequest = lower.slice(-4).join("/") === "providers/microsoft.resources/tags/default";
    // A collection (`…/providers/{ns}/{type}` or below a parent): a list, counted apart from one resource's read.
    const collection =
      providerType !== undefined && method === "GET" && seg.length % 2 === 1 ? " (list)" : "";
    count(
      postgresOperation
        ? `${method} Microsoft.DBforPostgreSQL/operations`
        : tagsRequest
          ? `${method} Microsoft.Resources/tags`
          : `${method} ${providerType ? `${counterNames.get(providerType) ?? providerType}${collection}` : (lower[2] ?? "subscriptions")}`,
    );
    authenticate(req);
    const fault = injectedFault(method, url.pathname);
    if (fault) throw fault;
    const apiVersion = url.searchParams.get("api-version");
    if (!apiVersion) {
      throw new HttpError(
        400,
        "MissingApiVersionParameter",
        "The api-version query parameter (?api-version=) is required for all requests.",
      );
    }
    checkSubscription(sub);
    settle();

    if (seg.length === 2 && method === "GET") {
      return send(res, 200, {
        id: `/subscriptions/${sub}`,
        subscriptionId: sub,
        displayName: "driftless fake subscription",
        state: "Enabled",
      });
    }
    if (lower[2] === "operationresults" && seg[3] && seg.length === 4 && method === "GET") {
      return pollOperation(res, base, sub, seg[3], apiVersion);
    }
    if (postgresOperation && seg[6] && seg.length === 8) {
      return postgres.operation(res, base, sub, lower[6] ?? "", seg[7] ?? "", apiVersion);
    }
    if (lower[2] === "resources" && seg.length === 3 && method === "GET")
      return listResources(res, url, base, sub);
    // Tags at a scope are the resource's own tags (tagsAtScope), not a resource of the generic handler's.
    const ext = tagsRequest ? undefined : extensionAt(lower);
    if (ext !== undefined) return extensionResources(req, res, url, sub, seg, ext);
    if (tagsRequest && method === "GET") return tagsAtScope(res, url, `/${seg.slice(0, -4).join("/")}`);
    if (lower[2] === "resourcegroups" && seg.length <= 4) return resourceGroups(req, res, url, sub, seg[3]);
    if (
      lower[2] === "resourcegroups" &&
      seg[3] &&
      lower[4] === "providers" &&
      lower[5] === POSTGRES_NAMESPACE
    ) {
      return postgres.resource(req, res, url, sub, seg[3], seg.slice(6));
    }
    if (lower[2] === "resourcegroups" && seg[3] && lower[4] === "providers" && seg.length >= 7) {
      return providerResources(req, res, url, sub, seg[3], seg.slice(5));
    }
    throw new HttpError(404, "NotFound", `The fake has no route for ${method} ${url.pathname}.`);
  };

  const server = createServer({ cert: pem(opts.cert), key: pem(opts.key) }, (req, res) => {
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof HttpError) {
        // HEAD responses carry no body, like ARM's.
        if (req.method === "HEAD") return send(res, err.status);
        const retryAfter = (err as HttpError & { retryAfter?: string }).retryAfter;
        return send(
          res,
          err.status,
          { error: { code: err.code, message: err.message } },
          retryAfter !== undefined ? { "retry-after": retryAfter } : {},
        );
      }
      send(res, 500, { error: { code: "InternalServerError", message: String(err) } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `https://${urlHost}:${port}`,
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
      cert: { type: "string" },
      key: { type: "string" },
      subscription: { type: "string", multiple: true },
      client: { type: "string", multiple: true },
      "lro-polls": { type: "string" },
      "lro-ms": { type: "string" },
      "list-page-size": { type: "string" },
      "postgres-polls": { type: "string" },
    },
  });
  if (!values.cert || !values.key) {
    process.stderr.write(
      "usage: arm-fake.ts --port N --cert FILE --key FILE [--host H] [--subscription ID]... [--client ID=SECRET]... [--lro-polls N] [--lro-ms MS] [--list-page-size N] [--postgres-polls N]\n",
    );
    process.exit(2);
  }
  const clients = values.client
    ? Object.fromEntries(values.client.map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1)]))
    : undefined;
  const fake = await startArmFake({
    port: Number(values.port),
    cert: values.cert,
    key: values.key,
    ...(values.host ? { host: values.host } : {}),
    ...(values.subscription ? { subscriptions: values.subscription } : {}),
    ...(clients ? { clients } : {}),
    ...(values["lro-polls"] ? { lroPolls: Number(values["lro-polls"]) } : {}),
    ...(values["lro-ms"] ? { lroMs: Number(values["lro-ms"]) } : {}),
    ...(values["list-page-size"] ? { listPageSize: Number(values["list-page-size"]) } : {}),
    ...(values["postgres-polls"] ? { postgresPolls: Number(values["postgres-polls"]) } : {}),
    generic: armGenericHandler(),
  });
  process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url })}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
