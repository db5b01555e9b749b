import { dirname } from "node:path";
import { NetworkManagementClient } from "@azure/arm-network";
import { PostgreSQLManagementFlexibleServerClient } from "@azure/arm-postgresql-flexible";
import { ResourceManagementClient } from "@azure/arm-resources";
import { ClientSecretCredential } from "@azure/identity";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { type FakeServer, startArmFake } from "../../infra/local/fakes/arm-fake.ts";
import { ensureTls } from "../../infra/local/tls.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import type { Kube } from "../../shared/kube/client.ts";
import type { ReconcileResult, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { ensureNamespace } from "./aws.ts";
import { env, sleep } from "./env.ts";
import { conditionOf, getMr, keyOf } from "./reconcile.ts";
import type { Reconciler } from "./routed.ts";

/** The client id and secret the test ProviderConfigs use; the stack's ARM fake accepts any. */
export const AZURE_CLIENT_ID = "driftless-test-app";
export const AZURE_CLIENT_SECRET = "azure-client-secret-value";

export interface AzureProviderConfigOptions {
  /** ARM and Entra ID base URL; default the stack's ARM fake. */
  armEndpoint?: string;
  clientId?: string;
  clientSecret?: string;
  /** The storage account's key in the Secret; null: no key (Entra ID auth for Blob); default Azurite's. */
  accountKey?: string | null;
  /** Leave out the storage section entirely. */
  noStorage?: boolean;
  /** Another subscription than the stack's (the ARM fake keeps resources per subscription). */
  subscriptionId?: string;
  /** Another Microsoft Entra tenant than the stack's. */
  tenantId?: string;
}

/** An Azure ProviderConfig pointing at the ARM fake and Azurite, credentials in Secrets (the way users configure it). */
export async function createAzureProviderConfig(
  kube: Kube,
  name: string,
  opts: AzureProviderConfigOptions = {},
) {
  await ensureNamespace(kube, "driftless-system");
  const secretName = `${name}-azure-creds`;
  const accountKey = opts.accountKey === undefined ? env("AZURITE_ACCOUNT_KEY") : opts.accountKey;
  await kube.deleteSecret("driftless-system", secretName);
  await kube.createSecret({
    metadata: { name: secretName, namespace: "driftless-system" },
    stringData: {
      clientSecret: opts.clientSecret ?? AZURE_CLIENT_SECRET,
      ...(accountKey !== null ? { accountKey } : {}),
    },
  });
  const arm = opts.armEndpoint ?? env("AZURE_ARM_ENDPOINT");
  await kube.delete(providerConfigs.azure.type, name);
  await kube.create(providerConfigs.azure.type, {
    apiVersion: "azure.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name },
    spec: {
      tenantID: opts.tenantId ?? env("AZURE_TENANT_ID"),
      subscriptionID: opts.subscriptionId ?? env("AZURE_SUBSCRIPTION_ID"),
      clientID: opts.clientId ?? AZURE_CLIENT_ID,
      credentials: {
        source: "Secret",
        secretRef: { namespace: "driftless-system", name: secretName, key: "clientSecret" },
      },
      endpoint: { resourceManager: arm, authorityHost: arm, blob: env("AZURITE_BLOB_ENDPOINT") },
      ...(opts.noStorage
        ? {}
        : {
            storage: {
              accountName: env("AZURITE_ACCOUNT_NAME"),
              ...(accountKey !== null
                ? {
                    accountKeySecretRef: {
                      namespace: "driftless-system",
                      name: secretName,
                      key: "accountKey",
                    },
                  }
                : {}),
            },
          }),
    },
  });
}

/** An ARM client for arranging and checking cloud state directly, as a user's own tooling would. */
export function armClient(
  endpoint = env("AZURE_ARM_ENDPOINT"),
  clientId = AZURE_CLIENT_ID,
  secret = AZURE_CLIENT_SECRET,
) {
  const credential = new ClientSecretCredential(env("AZURE_TENANT_ID"), clientId, secret, {
    authorityHost: endpoint,
    disableInstanceDiscovery: true,
  });
  return new ResourceManagementClient(credential, env("AZURE_SUBSCRIPTION_ID"), {
    endpoint,
    credentials: { scopes: [`${endpoint}/.default`] },
  });
}

/** The network SDK as a user's own tooling would use it, to arrange, change and check cloud state. */
export function networkClient(endpoint = env("AZURE_ARM_ENDPOINT")) {
  const credential = new ClientSecretCredential(
    env("AZURE_TENANT_ID"),
    AZURE_CLIENT_ID,
    AZURE_CLIENT_SECRET,
    {
      authorityHost: endpoint,
      disableInstanceDiscovery: true,
    },
  );
  return new NetworkManagementClient(credential, env("AZURE_SUBSCRIPTION_ID"), {
    endpoint,
    credentials: { scopes: [`${endpoint}/.default`] },
  });
}

/** The PostgreSQL flexible server SDK as a user's own tooling would use it, to arrange cloud state. */
export function postgresClient(endpoint = env("AZURE_ARM_ENDPOINT")) {
  const credential = new ClientSecretCredential(
    env("AZURE_TENANT_ID"),
    AZURE_CLIENT_ID,
    AZURE_CLIENT_SECRET,
    { authorityHost: endpoint, disableInstanceDiscovery: true },
  );
  return new PostgreSQLManagementFlexibleServerClient(credential, env("AZURE_SUBSCRIPTION_ID"), {
    endpoint,
    credentialScopes: [`${endpoint}/.default`],
  });
}

/** Azurite's Blob service with the account key. */
export const azuriteBlob = () =>
  new BlobServiceClient(
    env("AZURITE_BLOB_ENDPOINT"),
    new StorageSharedKeyCredential(env("AZURITE_ACCOUNT_NAME"), env("AZURITE_ACCOUNT_KEY")),
  );

/**
 * An ARM fake of the test's own, with the generic handler for every generated type (arm-generic.ts);
 * `listPageSize`: items per list page (linked with nextLink); `listLeavesOut`: members a type's list
 * answers with null (lowercased type → paths).
 */
export async function startGenericArmFake(
  opts: { listPageSize?: number; listLeavesOut?: Record<string, string[]> } = {},
): Promise<FakeServer> {
  const { armGenericHandler } = await import("../../infra/local/fakes/arm-generic.ts");
  const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")));
  const { listLeavesOut, ...rest } = opts;
  return startArmFake({
    port: 0,
    cert: tls.serverCert,
    key: tls.serverKey,
    generic: armGenericHandler(listLeavesOut ? { listLeavesOut } : {}),
    ...rest,
  });
}

/** A second ARM fake on a free port that knows its clients (checks secrets, accepts only its own tokens). */
export async function startPrivateArmFake(
  clients: Record<string, string>,
  opts: { listPageSize?: number } = {},
): Promise<FakeServer> {
  const tls = await ensureTls(dirname(env("DRIFTLESS_CA_FILE")));
  return startArmFake({ port: 0, cert: tls.serverCert, key: tls.serverKey, clients, lroMs: 500, ...opts });
}

export interface ArmStats {
  requests: Record<string, number>;
  total: number;
}
export const armStats = async (url: string): Promise<ArmStats> =>
  (await fetch(`${url}/__fake/stats`)).json() as Promise<ArmStats>;
export const resetArmStats = async (url: string) => {
  await fetch(`${url}/__fake/reset`, { method: "POST" });
};
/** The requests an ARM fake served while `fn` ran (a suite's private fake: nobody else calls it). */
export async function armRequestsDuring(url: string, fn: () => Promise<unknown>) {
  await resetArmStats(url);
  await fn();
  return (await armStats(url)).requests;
}

/**
 * Reconciles like a worker honouring requeues (sleeping up to `maxSleepMs` between rounds) until `done`
 * holds for a result: long-running Azure operations finish between reconciles, not inside one.
 */
export async function reconcileUntil(
  r: Reconciler,
  key: ResourceKey,
  done: (res: ReconcileResult) => boolean,
  opts: { timeoutMs?: number; maxSleepMs?: number } = {},
): Promise<ReconcileResult[]> {
  const results: ReconcileResult[] = [];
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  for (;;) {
    const res = await r.reconcile(key);
    results.push(res);
    if (done(res)) return results;
    if (Date.now() > deadline) {
      throw new Error(
        `gave up after ${results.length} reconciles: ${results.map((x) => x.outcome).join(", ")}`,
      );
    }
    await sleep(Math.min(res.requeueAfterMs ?? 200, opts.maxSleepMs ?? 250));
  }
}

/** Reconciles until Ready=True and Synced=True (a generic ARM fake's operation ends at the next look) or `max` rounds. */
export async function reconcileReady(r: Reconciler, kube: Kube, def: ManagedKindDef, name: string, max = 8) {
  for (let i = 0; i < max; i++) {
    await r.reconcile(keyOf(def, name));
    const mr = await getMr(kube, def, name);
    if (conditionOf(mr, "Ready")?.status === "True" && conditionOf(mr, "Synced")?.status === "True")
      return mr;
  }
  const mr = await getMr(kube, def, name);
  throw new Error(`${def.kind}/${name} not ready: ${JSON.stringify(mr?.status?.conditions)}`);
}

/** Reconciles until the object is gone (its external resource deleted, its finalizer removed) or `max` rounds. */
export async function reconcileGone(r: Reconciler, def: ManagedKindDef, name: string, max = 8) {
  for (let i = 0; i < max; i++) if ((await r.reconcile(keyOf(def, name))).outcome === "gone") return;
  throw new Error(`${def.kind}/${name} not gone`);
}

/** The ARM id a managed resource's status reports (`status.atProvider.id`). */
export const armIdOf = (mr: { status?: { atProvider?: unknown } } | undefined) =>
  (mr?.status?.atProvider as Record<string, unknown> | undefined)?.id as string;

/** A direct ARM call to a fake, as a user's own tooling (the portal, az) would make it. */
export async function armAsUser(
  url: string,
  method: string,
  path: string,
  apiVersion: string,
  body?: unknown,
) {
  const res = await fetch(`${url}${path}?api-version=${apiVersion}`, {
    method,
    headers: { authorization: "Bearer user-tooling", "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
}
