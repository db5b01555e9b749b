// Cluster access from Lambda: the platform glue around shared/kube/cluster-auth.ts — where the secret is
// read from (Secrets Manager or SSM Parameter Store) and whose credentials sign EKS tokens (the function's
// role, as the SDK already resolved them).
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { GetParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import type { AwsCredentialIdentity, Provider } from "@smithy/types";
import { cachedTokenSource, eksToken, loadClusterAccess } from "../../shared/kube/cluster-auth.ts";
import type { AwsFunctionConfig } from "./config.ts";

/** Reads a kubeconfig from Secrets Manager (ARN or name) or SSM Parameter Store (`arn:aws:ssm:…`, `ssm:/…`). */
export async function readAwsSecret(id: string): Promise<string> {
  if (id.startsWith("arn:aws:ssm:") || id.startsWith("ssm:")) {
    const name = id.startsWith("ssm:") ? id.slice(4) : id;
    const ssm = new SSMClient({});
    try {
      const out = await ssm.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
      if (!out.Parameter?.Value) throw new Error("the parameter has no value");
      return out.Parameter.Value;
    } finally {
      ssm.destroy();
    }
  }
  const sm = new SecretsManagerClient({});
  try {
    const out = await sm.send(new GetSecretValueCommand({ SecretId: id }));
    if (out.SecretString) return out.SecretString;
    if (out.SecretBinary) return Buffer.from(out.SecretBinary).toString("utf8");
    throw new Error("the secret has no value");
  } finally {
    sm.destroy();
  }
}

/** This container's cluster endpoint; `credentials` are the role's (any SDK client's resolved provider). */
export function awsClusterAccess(
  cfg: AwsFunctionConfig,
  credentials: Provider<AwsCredentialIdentity>,
): ReturnType<typeof loadClusterAccess> {
  const defaultRegion = cfg.DRIFTLESS_EKS_REGION ?? cfg.AWS_REGION ?? "us-east-1";
  const eks =
    cfg.DRIFTLESS_EKS_CLUSTER_NAME && cfg.DRIFTLESS_EKS_ENDPOINT
      ? {
          clusterName: cfg.DRIFTLESS_EKS_CLUSTER_NAME,
          endpoint: cfg.DRIFTLESS_EKS_ENDPOINT,
          ...(cfg.DRIFTLESS_EKS_CA_DATA ? { caData: cfg.DRIFTLESS_EKS_CA_DATA } : {}),
        }
      : undefined;
  return loadClusterAccess({
    kubeconfigYaml: cfg.DRIFTLESS_KUBECONFIG_YAML,
    kubeconfigSecret: cfg.DRIFTLESS_KUBECONFIG_SECRET_ARN,
    readSecret: readAwsSecret,
    eks,
    kubeconfigPath: cfg.KUBECONFIG,
    tokens: {
      eks: (clusterName, region) =>
        cachedTokenSource(() => eksToken({ clusterName, region: region ?? defaultRegion, credentials })),
    },
  });
}
