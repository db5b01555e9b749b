import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type {
  AwsCredentialIdentity,
  AwsCredentialIdentityProvider,
  FinalizeRequestMiddleware,
  InitializeMiddleware,
} from "@smithy/types";
import { guardedLookup } from "../../api/addresses.ts";
import { DRIFTLESS_USER_AGENT } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  CredentialsError,
  type ExternalClient,
  type Home,
  InvalidSpecError,
  ThrottledError,
} from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { noteRequestId } from "../../api/request-ids.ts";
import { checkEndpoint, refuseAmbientOffCloud } from "../endpoints.ts";
import { type AnswerStack, checkAwsAnswers } from "./answers.ts";

/** What every AWS SDK client of a managed kind is built from. */
export interface AwsClientConfig {
  region: string;
  /** A Secret's credentials, or a role's the ambient identity assumes (./assumed-role.ts). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  endpoint?: string;
  /** The engine's per-ProviderConfig rate limit, awaited before every request (retries included). */
  rateLimit?: () => Promise<void>;
  /** Cache key: same ProviderConfig generation, region and credentials → same SDK client. */
  cacheKey: string;
}

/**
 * Reads AWS credentials the way Crossplane's AWS provider stores them: an INI profile
 * (`[default] aws_access_key_id = … aws_secret_access_key = …`) or JSON with the same keys. Error
 * messages are constant and never quote the input (it is a secret), nor carry a cause that does.
 */
export function parseAwsCredentials(text: string): AwsCredentialIdentity {
  const values: Record<string, string> = {};
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      // JSON.parse's own message quotes the text around the fault, i.e. part of the key: no cause.
      throw new CredentialsError("the credentials Secret holds malformed JSON");
    }
    if (json === null || typeof json !== "object" || Array.isArray(json))
      throw new CredentialsError("the credentials JSON is not an object");
    for (const [k, v] of Object.entries(json)) if (typeof v === "string") values[k.toLowerCase()] = v;
  } else {
    let section = "default";
    for (const line of trimmed.split(/\r?\n/)) {
      const l = line.trim();
      if (!l || l.startsWith("#") || l.startsWith(";")) continue;
      const header = /^\[(.+)]$/.exec(l);
      if (header) {
        section = (header[1] ?? "").trim();
        continue;
      }
      const eq = l.indexOf("=");
      if (eq > 0 && section === "default")
        values[l.slice(0, eq).trim().toLowerCase()] = l.slice(eq + 1).trim();
    }
  }
  const accessKeyId = values.aws_access_key_id ?? values.accesskeyid;
  const secretAccessKey = values.aws_secret_access_key ?? values.secretaccesskey;
  if (!accessKeyId || !secretAccessKey) {
    throw new CredentialsError(
      "credentials must hold aws_access_key_id and aws_secret_access_key (INI [default] profile or JSON)",
    );
  }
  const sessionToken = values.aws_session_token ?? values.sessiontoken;
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

const AWS_REGION = /^[a-z]{2}(-[a-z0-9]+)+-\d+$/;

interface ParsedCredentials {
  credentials: AwsCredentialIdentity | undefined;
  /** Part of the client cache key: another key in the Secret, another client. */
  fingerprint: string;
}

const fingerprintOf = (c: AwsCredentialIdentity | undefined) =>
  createHash("sha256")
    .update(JSON.stringify([c?.accessKeyId, c?.secretAccessKey, c?.sessionToken]))
    .digest("hex")
    .slice(0, 16);

const NO_CREDENTIALS: ParsedCredentials = { credentials: undefined, fingerprint: fingerprintOf(undefined) };

// Every call of a batch asks for its client configuration: the Secret's text is parsed and fingerprinted
// once per text (the Secret itself is still read through the connector's cache each time). One entry per
// ProviderConfig's Secret key, replaced when its text changes: a rotated key's old text is not kept.
const parsedByRef = new Map<string, { text: string; parsed: ParsedCredentials }>();
const MAX_PARSED = 64;

function parsedCredentials(ref: string, text: string): ParsedCredentials {
  const hit = parsedByRef.get(ref);
  if (hit?.text === text) return hit.parsed;
  const credentials = parseAwsCredentials(text);
  const parsed = { credentials, fingerprint: fingerprintOf(credentials) };
  if (!hit && parsedByRef.size >= MAX_PARSED) parsedByRef.clear();
  parsedByRef.set(ref, { text, parsed });
  return parsed;
}

// A connect context (one reconcile, or one group of a batched check) asks for its client configuration on
// every call (home, account, observe: three per Queue checked). The configuration is a pure function of the
// ProviderConfig, the region and the credentials' text: a context builds it once per region and text, and
// reads its Secret on every call as before (the connector's cache and TTL decide what that read costs).
const configsByContext = new WeakMap<
  ConnectContext<AwsProviderConfigSpec>,
  Map<string, { text: string | undefined; config: AwsClientConfig }>
>();

export async function awsClientConfig(
  ctx: ConnectContext<AwsProviderConfigSpec>,
  region: string | undefined,
): Promise<AwsClientConfig> {
  const spec = ctx.providerConfig.spec;
  const r = region ?? spec.region ?? "us-east-1";
  const known = configsByContext.get(ctx)?.get(r);
  if (!known) return buildClientConfig(ctx, r);
  // Built before in this context: region, endpoint and credentials source were accepted then.
  const ref = spec.credentials.source === "Secret" ? spec.credentials.secretRef : undefined;
  const text = ref ? await ctx.readSecretKey(ref) : undefined;
  return text === known.text ? known.config : buildClientConfig(ctx, r, text);
}

async function buildClientConfig(
  ctx: ConnectContext<AwsProviderConfigSpec>,
  r: string,
  readText?: string,
): Promise<AwsClientConfig> {
  const spec = ctx.providerConfig.spec;
  // The region becomes part of the SDK's default host names (sqs.<region>.amazonaws.com).
  if (!AWS_REGION.test(r))
    throw new InvalidSpecError(`region must look like us-east-1, not ${JSON.stringify(r)}`);
  // An override receives signed requests (and the session token): loopback or a host the platform
  // listed, never for the ambient identity (../endpoints.ts). The SDK gets the normalised URL.
  const checked = spec.endpoint?.url
    ? checkEndpoint("aws", "spec.endpoint.url", spec.endpoint.url)
    : undefined;
  if (checked && spec.credentials.source === "InjectedIdentity")
    refuseAmbientOffCloud("aws", "spec.endpoint.url", checked);
  let parsed = NO_CREDENTIALS;
  let text: string | undefined;
  if (spec.credentials.source === "Secret") {
    if (!spec.credentials.secretRef)
      throw new CredentialsError("credentials.source is Secret but credentials.secretRef is not set");
    const ref = spec.credentials.secretRef;
    text = readText ?? (await ctx.readSecretKey(ref));
    parsed = parsedCredentials(
      `${ctx.providerConfig.metadata.uid}/${ref.namespace}/${ref.name}/${ref.key}`,
      text,
    );
  }
  const { credentials, fingerprint } = parsed;
  const endpoint = checked?.url;
  const config: AwsClientConfig = {
    region: r,
    ...(credentials ? { credentials } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(ctx.rateLimit ? { rateLimit: ctx.rateLimit } : {}),
    // generation, not resourceVersion: status writes (users count, conditions) must not churn clients.
    cacheKey: `${ctx.providerConfig.metadata.uid}/${ctx.providerConfig.metadata.generation ?? ctx.providerConfig.metadata.resourceVersion}/${r}/${endpoint}/${fingerprint}`,
  };
  const byRegion = configsByContext.get(ctx) ?? new Map();
  byRegion.set(r, { text, config });
  configsByContext.set(ctx, byRegion);
  return config;
}

/** The part of an SDK client the rate limit hooks into. */
interface WithMiddleware {
  /** Closes the client's connection pool (every AWS SDK v3 client has it). */
  destroy(): void;
  middlewareStack: AnswerStack & {
    remove(name: string): boolean;
    add(
      middleware: FinalizeRequestMiddleware<object, object>,
      options: { step: "finalizeRequest"; priority: "low"; name: string },
    ): void;
  };
}

// Clients are per rate limit too: two reconcilers in one process (tests) keep their own limits.
const rateLimitIds = new WeakMap<() => Promise<void>, number>();
let rateLimitSeq = 0;

const MAX_CLIENTS = 64;

/** A service's own error codes, beyond the AWS-wide ones below. */
export interface ServiceErrors {
  /** Codes of requests that can never succeed as specified (InvalidSpecError). */
  invalid?: ReadonlySet<string>;
}

/**
 * SDK clients are made once per container and credentials, with keep-alive, as Lambda guidance says. Every
 * client it makes classifies its own errors (classifyingErrors) and refuses answers that are not AWS's
 * (answers.ts): a kind's file calls `send` and gets our error classes, with no wrapper between.
 */
export class ClientCache<T extends WithMiddleware> {
  readonly #clients = new Map<string, T>();
  readonly #make: (c: AwsClientConfig) => T;
  readonly #errors: ServiceErrors;
  constructor(make: (c: AwsClientConfig) => T, errors: ServiceErrors = {}) {
    this.#make = make;
    this.#errors = errors;
  }
  get size() {
    return this.#clients.size;
  }

  get(c: AwsClientConfig): T {
    const { rateLimit } = c;
    let limitId = rateLimit ? rateLimitIds.get(rateLimit) : undefined;
    if (rateLimit && limitId === undefined) {
      limitId = ++rateLimitSeq;
      rateLimitIds.set(rateLimit, limitId);
    }
    const key = `${c.cacheKey}/${limitId ?? "-"}`;
    let client = this.#clients.get(key);
    if (!client) {
      client = classifyingErrors(this.#make(c), this.#errors);
      // The SDK's logger middleware copies every input and output through its sensitive-field filter for a
      // logger we never give it (the default logs nothing): work on every call, for nothing.
      client.middlewareStack.remove("loggerMiddleware");
      checkAwsAnswers(client.middlewareStack, c);
      // The change log's request id: every answer's $metadata.requestId (x-amzn-RequestId / x-amz-request-id).
      client.middlewareStack.add(
        (next) => async (args) => {
          try {
            const out = await next(args);
            noteRequestId(requestIdOf(out.output));
            return out;
          } catch (err) {
            noteRequestId(requestIdOf(err));
            throw err;
          }
        },
        { step: "initialize", priority: "high", name: "driftlessRequestId" },
      );
      if (rateLimit) {
        // Inside the retry middleware (finalizeRequest, low priority): every attempt takes a token.
        client.middlewareStack.add(
          (next) => async (args) => {
            await rateLimit();
            return next(args);
          },
          { step: "finalizeRequest", priority: "low", name: "driftlessRateLimit" },
        );
      }
      // One ProviderConfig generation needs few clients: the oldest go (and close their sockets) first.
      for (const [old, c] of this.#clients) {
        if (this.#clients.size < MAX_CLIENTS) break;
        this.#clients.delete(old);
        c.destroy();
      }
      this.#clients.set(key, client);
    }
    return client;
  }
}

/**
 * The connection pools for an endpoint override: the SDK's defaults (keep-alive, 50 sockets) with the
 * lookup that refuses a host name resolving to a link-local address (../../api/addresses.ts).
 */
function overrideHandler() {
  const lookup = guardedLookup();
  return {
    httpAgent: new http.Agent({ keepAlive: true, maxSockets: 50, lookup }),
    httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 50, lookup }),
  };
}

const requestIdOf = (o: unknown) =>
  (o as { $metadata?: { requestId?: string } } | undefined)?.$metadata?.requestId;

export const sdkOptions = (c: AwsClientConfig) => ({
  region: c.region,
  ...(c.credentials ? { credentials: c.credentials } : {}),
  ...(c.endpoint ? { endpoint: c.endpoint, requestHandler: overrideHandler() } : {}),
  maxAttempts: 3,
  // CloudTrail records it as the call's userAgent: the cloud-event path drops driftless's own writes by it.
  customUserAgent: DRIFTLESS_USER_AGENT,
});

const THROTTLING = new Set([
  "Throttling",
  "ThrottlingException",
  "ThrottledException",
  "RequestThrottled",
  "RequestThrottledException",
  "RequestLimitExceeded",
  "TooManyRequestsException",
  "SlowDown",
  "ProvisionedThroughputExceededException",
]);
const BAD_CREDENTIALS = new Set([
  "InvalidClientTokenId",
  "UnrecognizedClientException",
  "SignatureDoesNotMatch",
  "InvalidAccessKeyId",
  "ExpiredToken",
  "ExpiredTokenException",
  "AccessDenied",
  "AccessDeniedException",
]);
const INVALID = new Set([
  "InvalidBucketName",
  "InvalidParameterValue",
  "InvalidAttributeValue",
  "InvalidAttributeName",
  "ValidationError",
  "InvalidParameterCombination",
]);

interface AwsErrorShape {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
}

export const awsErrorCode = (err: unknown): string => {
  const e = err as AwsErrorShape;
  return e?.Code ?? e?.name ?? "";
};

/** Maps an AWS SDK error onto our error classes (the engine branches on them). */
export function classifyAwsError(err: unknown, service: ServiceErrors = {}): Error {
  const e = err as AwsErrorShape;
  const code = awsErrorCode(err);
  const status = e?.$metadata?.httpStatusCode;
  const message = `${code || "Error"}: ${e?.message ?? String(err)}`;
  if (THROTTLING.has(code) || e?.$retryable?.throttling || status === 429 || status === 503) {
    return new ThrottledError(`throttled by AWS (${message})`, { cause: err });
  }
  if (BAD_CREDENTIALS.has(code)) return new CredentialsError(message, { cause: err });
  if (INVALID.has(code) || service.invalid?.has(code)) return new InvalidSpecError(message, { cause: err });
  return err instanceof Error ? err : new Error(message);
}

/** Runs an SDK call, classifying its error. */
export async function aws<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classifyAwsError(err);
  }
}

/**
 * Classifies every error of a client's calls inside its own middleware stack (outside the retries), so a
 * kind's file calls the SDK directly instead of through `aws(() => …)`: one hop from the engine to the SDK.
 */
export function classifyingErrors<
  T extends {
    middlewareStack: {
      add(m: InitializeMiddleware<object, object>, o: { step: "initialize"; name: string }): void;
    };
  },
>(client: T, service: ServiceErrors = {}): T {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        throw classifyAwsError(err, service);
      }
    },
    { step: "initialize", name: "driftlessClassifyErrors" },
  );
  return client;
}

/** The region part of an ARN (arn:aws:service:region:account:resource). */
export const regionOfArn = (arn: string | undefined) => arn?.split(":")[3] || undefined;

/**
 * An ExternalClient whose SDK client is chosen per managed resource (its region): every operation first
 * gets the (cached) regional client, then delegates to it.
 */
export function perResource<F, A>(
  clientFor: (mr: ManagedResource<F, A>) => Promise<ExternalClient<F, A>>,
  home?: (mr: ManagedResource<F, A>) => Promise<Home>,
): ExternalClient<F, A> {
  return {
    ...(home ? { home } : {}),
    observe: async (mr, name) => (await clientFor(mr)).observe(mr, name),
    create: async (mr, name) => (await clientFor(mr)).create(mr, name),
    update: async (mr, name, obs) => (await clientFor(mr)).update(mr, name, obs),
    delete: async (mr, name) => (await clientFor(mr)).delete(mr, name),
  };
}

/** The AWS ProviderConfig's health check: who do these credentials say we are (STS GetCallerIdentity). */
export async function checkAwsCredentials(ctx: ConnectContext<AwsProviderConfigSpec>): Promise<string> {
  const { STSClient, GetCallerIdentityCommand } = await import("@aws-sdk/client-sts");
  const cfg = await awsClientConfig(ctx, undefined);
  const out = await aws(() => new STSClient(sdkOptions(cfg)).send(new GetCallerIdentityCommand({})));
  return out.Arn ?? `account ${out.Account}`;
}
