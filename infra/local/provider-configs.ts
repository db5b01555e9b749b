// ProviderConfigs named "default" that point every cloud at the local stack, with credentials in
// Secrets the way a user would configure them for the real clouds: the cluster-scoped kinds' ProviderConfig
// and, with the same spec, the ClusterProviderConfig "default" the namespaced kinds use.
import type { ResourceType } from "../../shared/api/meta.ts";
import { providerConfigs, v2ProviderConfigs } from "../../shared/api/provider-config.ts";
import { isConflict, type Kube } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import type { StackEnv } from "./stack.ts";

const NAMESPACE = "driftless-system";

async function upsertSecret(kube: Kube, name: string, stringData: Record<string, string>) {
  await kube.deleteSecret(NAMESPACE, name);
  await kube.createSecret({ metadata: { name, namespace: NAMESPACE }, stringData });
}

async function upsert(kube: Kube, cloud: keyof typeof providerConfigs, spec: Record<string, unknown>) {
  const types: ResourceType[] = [providerConfigs[cloud].type, v2ProviderConfigs[cloud].cluster.type];
  for (const type of types) {
    const body = {
      apiVersion: `${type.group}/${type.version}`,
      kind: type.kind,
      metadata: { name: "default" },
      spec,
    };
    try {
      await kube.create(type, body);
    } catch (err) {
      if (!isConflict(err)) throw err;
      await kube.patch(type, "default", { spec });
    }
  }
}

/** The CRDs localProviderConfigs writes to: every cloud's ProviderConfig and ClusterProviderConfig. */
export function localProviderConfigCrds(): string[] {
  const clouds = Object.keys(providerConfigs) as (keyof typeof providerConfigs)[];
  return clouds
    .flatMap((c) => [providerConfigs[c].type, v2ProviderConfigs[c].cluster.type])
    .map((t) => `${t.plural}.${t.group}`);
}

export async function localProviderConfigs(kube: Kube, env: StackEnv): Promise<void> {
  try {
    await coreApi(kube).createNamespace({ body: { metadata: { name: NAMESPACE } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  // The three clouds at once: right after the CRD install the API server answers slowly (seconds a write).
  await Promise.all([
    localAwsProviderConfig(kube, env),
    localAzureProviderConfig(kube, env),
    localGcpProviderConfig(kube, env),
  ]);
}

/** AWS: moto, with its test credentials in a Secret. */
async function localAwsProviderConfig(kube: Kube, env: StackEnv): Promise<void> {
  await upsertSecret(kube, "aws-credentials", {
    credentials: `[default]\naws_access_key_id = ${env.AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${env.AWS_SECRET_ACCESS_KEY}\n`,
  });
  await upsert(kube, "aws", {
    credentials: {
      source: "Secret",
      secretRef: { namespace: NAMESPACE, name: "aws-credentials", key: "credentials" },
    },
    region: env.AWS_REGION,
    endpoint: { url: env.AWS_ENDPOINT_URL },
  });
}

/** Azure: the ARM fake (also the token endpoint) and Azurite's well-known development account. */
export async function localAzureProviderConfig(kube: Kube, env: StackEnv): Promise<void> {
  await upsertSecret(kube, "azure-credentials", {
    clientSecret: "local-client-secret",
    accountKey: env.AZURITE_ACCOUNT_KEY ?? "",
  });
  const arm = env.AZURE_ARM_ENDPOINT;
  await upsert(kube, "azure", {
    tenantID: env.AZURE_TENANT_ID,
    subscriptionID: env.AZURE_SUBSCRIPTION_ID,
    clientID: "00000000-0000-0000-0000-00000000c11e",
    credentials: {
      source: "Secret",
      secretRef: { namespace: NAMESPACE, name: "azure-credentials", key: "clientSecret" },
    },
    endpoint: { resourceManager: arm, authorityHost: arm, blob: env.AZURITE_BLOB_ENDPOINT },
    storage: {
      accountName: env.AZURITE_ACCOUNT_NAME,
      accountKeySecretRef: { namespace: NAMESPACE, name: "azure-credentials", key: "accountKey" },
    },
  });
}

/** GCP: the Pub/Sub emulator and the GCS, Cloud SQL, Compute, Service Networking, generic and Cloud Asset fakes; none checks credentials, so ambient identity is enough. */
export async function localGcpProviderConfig(kube: Kube, env: StackEnv): Promise<void> {
  await upsert(kube, "gcp", {
    projectID: env.GCP_PROJECT_ID,
    credentials: { source: "InjectedIdentity" },
    endpoint: {
      pubsub: env.PUBSUB_EMULATOR_HOST,
      storage: env.GCS_ENDPOINT,
      sql: env.GCP_SQL_ENDPOINT,
      compute: env.GCP_COMPUTE_ENDPOINT,
      serviceNetworking: env.GCP_SERVICE_NETWORKING_ENDPOINT,
      ...(env.GCP_APIS_ENDPOINT ? { apis: env.GCP_APIS_ENDPOINT } : {}),
      ...(env.GCP_CLOUDASSET_ENDPOINT ? { cloudAsset: env.GCP_CLOUDASSET_ENDPOINT } : {}),
    },
  });
}
