import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { allCrds } from "../../shared/crds.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { applyCrds } from "../../shared/kube/crds.ts";
import { env, kubeConfig } from "./env.ts";

export const MOTO_CREDENTIALS =
  "[default]\naws_access_key_id = testing\naws_secret_access_key = testing-secret-value\n";

let crdsApplied: Promise<void> | undefined;
/** Applies the generated CRDs once per test worker (idempotent across workers). */
export function ensureCrds(): Promise<void> {
  crdsApplied ??= applyCrds(kubeConfig(), allCrds());
  return crdsApplied;
}

export async function ensureNamespace(kube: Kube, name: string) {
  try {
    await coreApi(kube).createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/** An AWS ProviderConfig pointing at moto, with credentials in a Secret (the way users configure it). */
export async function createAwsProviderConfig(
  kube: Kube,
  name: string,
  opts: { credentials?: string; secretKey?: string; endpoint?: string } = {},
) {
  await ensureNamespace(kube, "driftless-system");
  const secretName = `${name}-aws-creds`;
  await kube.deleteSecret("driftless-system", secretName);
  await kube.createSecret({
    metadata: { name: secretName, namespace: "driftless-system" },
    stringData: { credentials: opts.credentials ?? MOTO_CREDENTIALS },
  });
  await kube.delete(providerConfigs.aws.type, name);
  await kube.create(providerConfigs.aws.type, {
    apiVersion: "aws.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name },
    spec: {
      credentials: {
        source: "Secret",
        secretRef: { namespace: "driftless-system", name: secretName, key: opts.secretKey ?? "credentials" },
      },
      region: "us-east-1",
      endpoint: { url: opts.endpoint ?? env("AWS_ENDPOINT_URL") },
    },
  });
}

/** SDK client options straight at moto, for arranging and checking cloud state behind driftless's back. */
export const motoOptions = () => ({
  region: "us-east-1",
  endpoint: env("AWS_ENDPOINT_URL"),
  credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
});
export const motoSqs = () => new SQSClient(motoOptions());
export const motoS3 = () => new S3Client({ ...motoOptions(), forcePathStyle: true });
