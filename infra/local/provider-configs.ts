// ProviderConfigs named "default" that point every cloud at the local stack, with credentials in
// Secrets the way a user would configure them for the real clouds.
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { isConflict, type Kube } from "../../shared/kube/client.ts";
import type { StackEnv } from "./stack.ts";

const NAMESPACE = "driftless-system";

async function upsertSecret(kube: Kube, name: string, stringData: Record<string, string>) {
  await kube.deleteSecret(NAMESPACE, name);
  await kube.createSecret({ metadata: { name, namespace: NAMESPACE }, stringData });
}

async function upsert(kube: Kube, type: typeof providerConfigs.aws.type, spec: Record<string, unknown>) {
  const body = {
    apiVersion: `${type.group}/${type.version}`,
    kind: "ProviderConfig",
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

export async function localProviderConfigs(kube: Kube, env: StackEnv): Promise<void> {
  try {
    await kube.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  await upsertSecret(kube, "aws-credentials", {
    credentials: `[default]\naws_access_key_id = ${env.AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${env.AWS_SECRET_ACCESS_KEY}\n`,
  });
  await upsert(kube, providerConfigs.aws.type, {
    credentials: {
      source: "Secret",
      secretRef: { namespace: NAMESPACE, name: "aws-credentials", key: "credentials" },
    },
    region: env.AWS_REGION,
    endpoint: { url: env.AWS_ENDPOINT_URL },
  });
}
