// Azure Resource Manager over its REST API, for every Azure kind (hand-written and generated): one
// @azure/core-rest-pipeline pipeline per credential and endpoint (bearer token from @azure/identity, the
// answers check, no redirects followed), requests by resource id and api-version, list pages followed by
// `nextLink`. No per-service management SDK: ARM is uniform, and those SDKs were most of the Azure bundle.
// Decisions: docs/adr/0008-azure-generated-kinds.md.

import http from "node:http";
import https from "node:https";
import {
  bearerTokenAuthenticationPolicy,
  createDefaultHttpClient,
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  type HttpClient,
  type Pipeline,
} from "@azure/core-rest-pipeline";
import type { TokenCredential } from "@azure/identity";
import { guardedLookup } from "../../api/addresses.ts";
import { type ConnectContext, ExternalError } from "../../api/external.ts";
import { isObject, type Json } from "../../api/json.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { namedError } from "../../named-error.ts";
import { armAnswers } from "./answers.ts";
import { azureCredential, azureEndpoints, ClientCache, classifyAzureError } from "./config.ts";

export const PUBLIC_ARM = "https://management.azure.com";
/** The Microsoft.Resources api-version of resource groups. */
export const RESOURCE_GROUPS_API = "2025-04-01";

/**
 * The connection pools every ARM request goes through: keep-alive, with the lookup that refuses a host
 * name resolving to a link-local or metadata address (../../api/addresses.ts) — an endpoint override's
 * name is checked as text, this checks what it resolves to when the socket connects.
 */
const lookup = guardedLookup();
const ARM_AGENTS = {
  "https:": new https.Agent({ keepAlive: true, lookup }),
  "http:": new http.Agent({ keepAlive: true, lookup }),
} as const;
const agentFor = (url: string) => ARM_AGENTS[new URL(url).protocol as keyof typeof ARM_AGENTS];

/**
 * A resource as ARM's REST API answers it: the envelope every resource type shares around its `properties`
 * (`location` and `tags` only on tracked types).
 */
export interface ArmResource<P> {
  id?: string;
  name?: string;
  location?: string;
  tags?: Record<string, string>;
  properties?: P;
}

export interface ArmAnswer {
  status: number;
  headers: { get(name: string): string | undefined };
  body: unknown;
}

/**
 * An ARM error answer as the Azure SDKs' RestError has it (statusCode, ARM's code and message), so one
 * classification (config.ts classifyAzureError, codeIs, isGone) serves every Azure kind.
 */
export class ArmRequestError extends namedError("ArmRequestError", Error) {
  readonly statusCode: number;
  readonly code: string | undefined;
  readonly retryAfter: string | undefined;
  constructor(answer: ArmAnswer) {
    const e = (isObject(answer.body) && isObject(answer.body.error) ? answer.body.error : {}) as {
      code?: string;
      message?: string;
    };
    const retryAfter = answer.headers.get("retry-after");
    super(`${e.message ?? `HTTP ${answer.status}`}${retryAfter ? ` (Retry-After ${retryAfter} s)` : ""}`);
    this.statusCode = answer.status;
    this.code = e.code;
    this.retryAfter = retryAfter;
  }
}

/** ARM's error body, as a classified error whose message is ARM's own code and message (and Retry-After). */
export function armError(answer: ArmAnswer, what: string): Error {
  const raw = new ArmRequestError(answer);
  const classified = classifyAzureError(raw);
  if (classified !== raw) return classified;
  return new ExternalError(`${what}: ${raw.code ?? answer.status}: ${raw.message}`);
}

/** The pipeline of one credential and Resource Manager endpoint: bearer token, answers check, nothing else. */
export function armPipeline(credential: TokenCredential, endpoint: string | undefined): Pipeline {
  const p = createEmptyPipeline();
  p.addPolicy(
    bearerTokenAuthenticationPolicy({
      credential,
      scopes: `${new URL(endpoint ?? PUBLIC_ARM).origin}/.default`,
    }),
  );
  // Without a redirect policy a 3xx reaches the answers check, which refuses it (never followed).
  p.addPolicy(armAnswers(endpoint).policy);
  return p;
}

/** One ProviderConfig's raw ARM access: a pipeline with the bearer token, the endpoint and subscription. */
export class ArmRest {
  readonly #pipeline: Pipeline;
  readonly #http: HttpClient;
  readonly endpoint: string;
  readonly subscription: string;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(
    pipeline: Pipeline,
    http: HttpClient,
    endpoint: string,
    subscription: string,
    rateLimit?: () => Promise<void>,
  ) {
    this.#pipeline = pipeline;
    this.#http = http;
    this.endpoint = endpoint.replace(/\/$/, "");
    this.subscription = subscription;
    this.#rateLimit = rateLimit;
  }

  /** `/subscriptions/{subscription}` followed by `path`. */
  sub(path = ""): string {
    return `/subscriptions/${encodeURIComponent(this.subscription)}${path}`;
  }

  async send(
    method: "GET" | "PUT" | "PATCH" | "DELETE" | "POST",
    pathOrUrl: string,
    apiVersion?: string,
    body?: unknown,
  ): Promise<ArmAnswer> {
    await this.#rateLimit?.();
    const url = pathOrUrl.startsWith("https://")
      ? pathOrUrl
      : `${this.endpoint}${pathOrUrl}${apiVersion ? `?api-version=${apiVersion}` : ""}`;
    const req = createPipelineRequest({
      url,
      method,
      headers: createHttpHeaders({
        accept: "application/json",
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      }),
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // Set on the request: createPipelineRequest drops an `agent` option (@typespec/ts-http-runtime 0.3).
    req.agent = agentFor(url);
    let res: Awaited<ReturnType<Pipeline["sendRequest"]>>;
    try {
      res = await this.#pipeline.sendRequest(this.#http, req);
    } catch (err) {
      throw classifyAzureError(err);
    }
    const text = res.bodyAsText ?? "";
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: { get: (n) => res.headers.get(n) }, body: parsed };
  }

  /** A request whose error answer (≥ 300) is thrown as an ArmRequestError; the body of a success. */
  async call<T = Json>(
    method: "GET" | "PUT" | "PATCH" | "DELETE" | "POST",
    path: string,
    apiVersion: string,
    body?: unknown,
  ): Promise<T> {
    const a = await this.send(method, path, apiVersion, body);
    if (a.status >= 300) throw new ArmRequestError(a);
    return (a.body ?? {}) as T;
  }

  /**
   * A list's pages (`value`), following `nextLink` while ARM gives one; each page is one request, rate
   * limited. A nextLink elsewhere than this Resource Manager is refused: it would receive the token.
   */
  async *pages<T>(path: string, apiVersion: string): AsyncGenerator<T[]> {
    let next: string | undefined;
    for (;;) {
      const page = await this.call<{ value?: T[]; nextLink?: string }>(
        "GET",
        next ?? path,
        next ? "" : apiVersion,
      );
      yield page.value ?? [];
      next = page.nextLink ?? undefined;
      if (!next) return;
      if (new URL(next).origin !== new URL(this.endpoint).origin)
        throw new ExternalError(
          `Resource Manager answered a nextLink to another host (${new URL(next).origin})`,
        );
    }
  }

  /**
   * Every item of a resource-group collection (`collection(group)`) in each resource group of the
   * subscription, with its group (`driftless import`): Resource Groups - List, then each group's list.
   */
  async *eachInGroups<T>(
    collection: (group: string) => string,
    apiVersion: string,
  ): AsyncGenerator<{ group: string; item: T }> {
    for await (const name of this.groups())
      for await (const page of this.pages<T>(collection(name), apiVersion))
        for (const item of page) yield { group: name, item };
  }

  /** The names of the subscription's resource groups (Resource Groups - List, page by page). */
  async *groups(): AsyncGenerator<string> {
    for await (const groups of this.pages<{ name?: string }>(
      this.sub("/resourcegroups"),
      RESOURCE_GROUPS_API,
    ))
      for (const { name } of groups) if (name) yield name;
  }
}

const pipelines = new ClientCache<{ pipeline: Pipeline; http: HttpClient }>();

/** The raw ARM access of a ProviderConfig, its pipeline cached per credential and endpoint. */
export async function armRest(ctx: ConnectContext<AzureProviderConfigSpec>): Promise<ArmRest> {
  const spec = ctx.providerConfig.spec;
  const { credential, cacheKey } = await azureCredential(ctx);
  // The checked, normalised URL (endpoints.ts), never the raw text.
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  const { pipeline, http } = pipelines.get(`${cacheKey}/${endpoint}`, () => ({
    pipeline: armPipeline(credential, endpoint),
    http: createDefaultHttpClient(),
  }));
  return new ArmRest(pipeline, http, endpoint ?? PUBLIC_ARM, spec.subscriptionID, ctx.rateLimit);
}
