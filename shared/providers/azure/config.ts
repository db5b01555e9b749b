import { createHash } from "node:crypto";
import { ClientSecretCredential, DefaultAzureCredential, type TokenCredential } from "@azure/identity";
import { BlobServiceClient, newPipeline, StorageSharedKeyCredential } from "@azure/storage-blob";
import {
  type ConnectContext,
  CredentialsError,
  InvalidSpecError,
  ThrottledError,
} from "../../api/external.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { availabilityTable } from "../availability.ts";
import { type CheckedEndpoint, checkEndpoint, refuseAmbientOffCloud } from "../endpoints.ts";
import { blobAnswers } from "./answers.ts";

type Ctx = ConnectContext<AzureProviderConfigSpec>;

/** SDK clients and credentials are made once per container and cache key, keep-alive on. */
export class ClientCache<T> {
  readonly #clients = new Map<string, T>();
  get(key: string, make: () => T): T {
    let client = this.#clients.get(key);
    if (!client) {
      client = make();
      // One ProviderConfig generation needs few clients; forget old generations rather than grow.
      if (this.#clients.size > 64) this.#clients.clear();
      this.#clients.set(key, client);
    }
    return client;
  }
}

const credentials = new ClientCache<TokenCredential>();
const blobClients = new ClientCache<BlobServiceClient>();

const fingerprint = (...parts: unknown[]) =>
  createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 16);

// Generation changes only with the spec; the fingerprint covers the Secret values the spec points at.
const generationOf = (ctx: Ctx) => {
  const m = ctx.providerConfig.metadata;
  return `${m.uid}/${m.generation ?? m.resourceVersion}`;
};

/**
 * The client secret from the Secret key: the bare secret, or the JSON of `az ad sp create-for-rbac
 * --sdk-auth` that Crossplane's Azure provider stores (clientId, clientSecret, tenantId).
 */
export function parseClientSecret(text: string): { clientSecret: string; clientId?: string } {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) return { clientSecret: trimmed };
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    // No cause: JSON.parse's message quotes the text around the fault, i.e. part of the secret.
    throw new CredentialsError("the credentials Secret holds malformed JSON");
  }
  const clientSecret = typeof json.clientSecret === "string" ? json.clientSecret : "";
  if (!clientSecret) throw new CredentialsError("the credentials JSON has no clientSecret");
  return { clientSecret, ...(typeof json.clientId === "string" ? { clientId: json.clientId } : {}) };
}

export interface AzureEndpoints {
  authorityHost?: CheckedEndpoint;
  resourceManager?: CheckedEndpoint;
  blob?: CheckedEndpoint;
}

/**
 * A ProviderConfig's endpoint overrides, checked: every one receives a credential (the client secret or
 * a workload-identity assertion goes to the authority, bearer tokens to Resource Manager and Blob), so
 * each must be Azure's own host, loopback or one the platform listed (../endpoints.ts); with the
 * ambient identity, only Azure's own hosts. The SDKs get the normalised URLs.
 */
export function azureEndpoints(spec: AzureProviderConfigSpec): AzureEndpoints {
  const e = spec.endpoint ?? {};
  const check = (field: "authorityHost" | "resourceManager" | "blob") => {
    const raw = e[field];
    return raw ? { [field]: checkEndpoint("azure", `spec.endpoint.${field}`, raw) } : {};
  };
  const endpoints: AzureEndpoints = {
    ...check("authorityHost"),
    ...check("resourceManager"),
    ...check("blob"),
  };
  if (spec.credentials.source === "InjectedIdentity") {
    if (endpoints.authorityHost)
      refuseAmbientOffCloud("azure", "spec.endpoint.authorityHost", endpoints.authorityHost);
    if (endpoints.resourceManager)
      refuseAmbientOffCloud("azure", "spec.endpoint.resourceManager", endpoints.resourceManager);
    // With an account key the Blob service gets shared-key signatures, not the identity's token.
    if (endpoints.blob && !spec.storage?.accountKeySecretRef)
      refuseAmbientOffCloud("azure", "spec.endpoint.blob", endpoints.blob);
  }
  return endpoints;
}

/** The Microsoft Entra ID credential of a ProviderConfig, cached per generation and secret. */
export async function azureCredential(ctx: Ctx): Promise<{ credential: TokenCredential; cacheKey: string }> {
  const spec = ctx.providerConfig.spec;
  const authorityHost = azureEndpoints(spec).authorityHost?.url;
  // A non-public authority (sovereign cloud, Azure Stack, a local fake) cannot be validated against login.microsoftonline.com.
  const authority = authorityHost ? { authorityHost, disableInstanceDiscovery: true } : {};
  if (spec.credentials.source === "InjectedIdentity") {
    const cacheKey = `${generationOf(ctx)}/injected/${fingerprint(spec.tenantID, spec.clientID, authorityHost)}`;
    const credential = credentials.get(
      cacheKey,
      () =>
        new DefaultAzureCredential({
          tenantId: spec.tenantID,
          ...(spec.clientID
            ? { managedIdentityClientId: spec.clientID, workloadIdentityClientId: spec.clientID }
            : {}),
          ...authority,
        }),
    );
    return { credential, cacheKey };
  }
  if (!spec.credentials.secretRef)
    throw new CredentialsError("credentials.source is Secret but credentials.secretRef is not set");
  const secret = parseClientSecret(await ctx.readSecretKey(spec.credentials.secretRef));
  const clientId = spec.clientID ?? secret.clientId;
  if (!clientId)
    throw new CredentialsError(
      "clientID is not set: credentials.source Secret needs the application (client) id",
    );
  const cacheKey = `${generationOf(ctx)}/secret/${fingerprint(spec.tenantID, clientId, secret.clientSecret, authorityHost)}`;
  const credential = credentials.get(
    cacheKey,
    () => new ClientSecretCredential(spec.tenantID, clientId, secret.clientSecret, authority),
  );
  return { credential, cacheKey };
}

/**
 * What the Blob client is told about redirects: none is followed. The SDK already skips cross-origin
 * ones; a same-origin one would still take the request to a path nobody checked. The answer is refused
 * as not the API's (answers.ts). Resource Manager's pipeline has no redirect policy at all (arm-rest.ts).
 */
export const NO_REDIRECTS = { maxRetries: 0 } as const;

export interface BlobService {
  client: BlobServiceClient;
  accountName: string;
  url: string;
  /** Present when the ProviderConfig holds the account key: it can sign SAS tokens. */
  sharedKey?: StorageSharedKeyCredential;
}

/** The Blob service of the ProviderConfig's storage account: shared key when given, else Entra ID. */
export async function blobService(ctx: Ctx): Promise<BlobService> {
  const spec = ctx.providerConfig.spec;
  const storage = spec.storage;
  if (!storage)
    throw new CredentialsError("storage.accountName is not set: Blob Containers need a storage account");
  // The account name becomes a host name: only what Azure allows (3-24 lowercase letters and digits).
  if (!/^[a-z0-9]{3,24}$/.test(storage.accountName))
    throw new CredentialsError("storage.accountName must be 3-24 lowercase letters and digits");
  const url =
    azureEndpoints(spec).blob?.url ??
    checkEndpoint("azure", "storage.accountName", `https://${storage.accountName}.blob.core.windows.net`).url;
  // redirectOptions reaches the Blob client's core pipeline (storage-blob's getCoreClientOptions).
  const options = { retryOptions: { maxTries: 3 }, redirectOptions: NO_REDIRECTS };
  // The Blob client's pipeline with the answers check innermost: it sees what the endpoint really said.
  const pipelineOf = (credential: StorageSharedKeyCredential | TokenCredential) => {
    const pipeline = newPipeline(credential, options);
    pipeline.factories.push(blobAnswers(url));
    return pipeline;
  };
  if (storage.accountKeySecretRef) {
    const key = (await ctx.readSecretKey(storage.accountKeySecretRef)).trim();
    let sharedKey: StorageSharedKeyCredential;
    try {
      sharedKey = new StorageSharedKeyCredential(storage.accountName, key);
    } catch {
      // No cause: it could quote the key.
      throw new CredentialsError("the storage account key is not valid base64");
    }
    const client = blobClients.get(
      `${generationOf(ctx)}/key/${fingerprint(url, storage.accountName, key)}`,
      () => new BlobServiceClient(url, pipelineOf(sharedKey)),
    );
    return { client, accountName: storage.accountName, url, sharedKey };
  }
  const { credential, cacheKey } = await azureCredential(ctx);
  const client = blobClients.get(
    `${cacheKey}/${url}`,
    () => new BlobServiceClient(url, pipelineOf(credential)),
  );
  return { client, accountName: storage.accountName, url };
}

interface AzureErrorShape {
  name?: string;
  statusCode?: number;
  code?: string;
  message?: string;
  details?: { errorCode?: string };
}

const IDENTITY_ERRORS = new Set([
  "AuthenticationError",
  "AuthenticationRequiredError",
  "CredentialUnavailableError",
  "AggregateAuthenticationError",
]);
const THROTTLING = new Set(["TooManyRequests", "ServerBusy", "OperationTimedOut"]);
const BAD_CREDENTIALS = new Set([
  "AuthenticationFailed",
  "AuthorizationFailed",
  "AuthorizationFailure",
  "AuthorizationPermissionMismatch",
  "InvalidAuthenticationToken",
  "ExpiredAuthenticationToken",
  "InvalidAuthenticationInfo",
  "SubscriptionNotFound",
]);
const INVALID = new Set([
  "InvalidParameter",
  "InvalidResourceGroup",
  "InvalidResourceName",
  "InvalidResourceGroupLocation",
  "LocationRequired",
  "LocationNotAvailableForResourceGroup",
  "InvalidLocation",
  "InvalidTags",
  "InvalidMetadata",
  "InvalidHeaderValue",
  "OutOfRangeInput",
  "PublicAccessNotPermitted",
  "InvalidRequestContent",
]);

/** The stable part of an Entra ID error (AADSTS code and text), without trace ids and timestamps. */
function entraMessage(message: string | undefined): string {
  const text = message ?? "";
  const m = /(AADSTS\d+:.*?)(?:\s+Trace ID:|$)/s.exec(text);
  return (m?.[1] ?? text.split("\n")[0] ?? "").slice(0, 400);
}

const errorCode = (e: AzureErrorShape | undefined) => e?.code ?? e?.details?.errorCode ?? "";

/** The HTTP status of an Azure SDK error, if it has one. */
export const statusOf = (err: unknown) => (err as AzureErrorShape | undefined)?.statusCode;
export const isNotFound = (err: unknown) => statusOf(err) === 404;
/** Something other than a missing resource that answers 404 (a missing subscription) is an error. */
export const isGone = (err: unknown) => isNotFound(err) && !codeIs(err, "SubscriptionNotFound");
export const codeIs = (err: unknown, ...codes: string[]) => codes.includes(errorCode(err as AzureErrorShape));

/** Maps an Azure SDK or identity error onto our error classes (the engine branches on them). */
export function classifyAzureError(err: unknown): Error {
  if (err instanceof CredentialsError || err instanceof ThrottledError || err instanceof InvalidSpecError)
    return err;
  const e = err as AzureErrorShape | undefined;
  if (e?.name && IDENTITY_ERRORS.has(e.name)) {
    return new CredentialsError(`Microsoft Entra ID refused the credentials: ${entraMessage(e.message)}`, {
      cause: err,
    });
  }
  const status = e?.statusCode;
  const code = errorCode(e);
  // Storage errors append RequestId and Time lines: keep conditions stable across retries.
  const message = `${code || status || "Error"}: ${(e?.message ?? String(err)).split("\n")[0]}`;
  if (status === 429 || status === 503 || THROTTLING.has(code))
    return new ThrottledError(`throttled by Azure (${message})`, { cause: err });
  if (status === 401 || status === 403 || BAD_CREDENTIALS.has(code))
    return new CredentialsError(message, { cause: err });
  if (status === 400 || INVALID.has(code)) return new InvalidSpecError(message, { cause: err });
  return err instanceof Error ? err : new Error(message);
}

/** What ARM's provisioningState says of a resource's availability. */
export const availabilityOf = availabilityTable(
  {
    Succeeded: "Available",
    Deleting: "Deleting",
    Failed: { availability: "Unavailable", message: "Azure reports provisioningState Failed" },
  },
  () => ({ availability: "Creating" }),
);

/** Runs an SDK call, classifying its error. */
export async function azure<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw classifyAzureError(err);
  }
}

/** ARM's programmatic form of a location: "West Europe" → "westeurope". */
export const normaliseLocation = (location: string) => location.replace(/\s+/g, "").toLowerCase();

/** The ProviderConfig's credential check: a token for Resource Manager (and a readable account key, if named). */
export async function checkAzureCredentials(ctx: Ctx): Promise<string> {
  const spec = ctx.providerConfig.spec;
  if (spec.storage?.accountKeySecretRef) await blobService(ctx);
  const { credential } = await azureCredential(ctx);
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  const scope = `${endpoint ? new URL(endpoint).origin : "https://management.azure.com"}/.default`;
  await azure(() => credential.getToken(scope));
  const who =
    spec.credentials.source === "Secret"
      ? `application ${spec.clientID ?? "(from the Secret)"}`
      : "the injected identity";
  return `${who} in tenant ${spec.tenantID}`;
}
