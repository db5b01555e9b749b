import { z } from "zod";
import { optionalString } from "./fields.ts";
import {
  clusterProviderConfigType,
  localizeSecretRefs,
  namespacedProviderConfigType,
  providerConfigType,
} from "./managed.ts";
import { Condition, type ObjectMeta, SecretKeySelector } from "./meta.ts";

export const CredentialsSource = z
  .enum(["Secret", "InjectedIdentity"])
  .describe(
    "Secret: read credentials from a Secret key. InjectedIdentity: the ambient identity of the function (Lambda role, workload identity, managed identity).",
  );

export const ProviderCredentials = z
  .object({
    source: CredentialsSource,
    secretRef: SecretKeySelector.optional().describe(
      "The Secret key holding the credentials when source is Secret.",
    ),
  })
  .describe("Where the provider's credentials come from.");

export const ProviderConfigStatus = z
  .object({
    conditions: z
      .array(Condition)
      .optional()
      .describe(
        "Ready: True once the cloud accepted the credentials, False with the reason when it did not.",
      ),
    users: z.number().int().optional().describe("How many managed resources use this ProviderConfig."),
  })
  .describe("The observed state of the ProviderConfig.");

export const RateLimitSpec = z
  .object({
    perSecond: z.number().positive().describe("Cloud calls per second through this ProviderConfig."),
    burst: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Calls allowed at once on top after a quiet period; default twice perSecond."),
  })
  .describe(
    "This ProviderConfig's cloud-call limit for the whole deployment (every function instance together), instead of the deployment's default (DRIFTLESS_RATE_LIMIT). Set it to the account's API quota share, e.g. 5 for Route 53.",
  );

export const AwsProviderConfigSpec = z
  .object({
    credentials: ProviderCredentials,
    region: z
      .string()
      .min(1)
      .default("us-east-1")
      .describe("Default AWS region for resources that do not set one."),
    endpoint: z
      .object({ url: z.string().min(1).describe("Base URL of every AWS API, e.g. a moto server.") })
      .optional()
      .describe("Override the AWS endpoints (local emulators, VPC endpoints)."),
    rateLimit: RateLimitSpec.optional(),
  })
  .describe("How driftless reaches AWS: credentials, default region and endpoints.");
export type AwsProviderConfigSpec = z.infer<typeof AwsProviderConfigSpec>;

export const GcpProviderConfigSpec = z
  .object({
    projectID: z.string().min(1).describe("The Google Cloud project resources are created in."),
    credentials: ProviderCredentials,
    endpoint: z
      .object({
        pubsub: optionalString("Pub/Sub API host:port, e.g. an emulator."),
        storage: optionalString("Cloud Storage API base URL."),
        sql: optionalString("Cloud SQL Admin API base URL."),
        compute: optionalString("Compute Engine API base URL."),
        serviceNetworking: optionalString("Service Networking API base URL."),
        cloudAsset: optionalString(
          "Cloud Asset Inventory API base URL (driftless orphans searches labels with it).",
        ),
        apis: optionalString(
          "Base URL of the generated kinds' Google APIs (docs/gcp-generated.md): `{api}` is replaced by the API's host name without .googleapis.com (https://{api}-myendpoint.p.googleapis.com); without `{api}` one server (a local fake) serves them all. Compute uses `compute`.",
        ),
      })
      .optional()
      .describe("Override the Google Cloud API endpoints (local emulators, private endpoints)."),
    rateLimit: RateLimitSpec.optional(),
  })
  .describe("How driftless reaches Google Cloud: project, credentials and endpoints.");
export type GcpProviderConfigSpec = z.infer<typeof GcpProviderConfigSpec>;

export const AzureProviderConfigSpec = z
  .object({
    tenantID: z.string().min(1).describe("Microsoft Entra tenant id."),
    subscriptionID: z.string().min(1).describe("Azure subscription id."),
    clientID: optionalString("Application (client) id; with source Secret the Secret holds its secret."),
    credentials: ProviderCredentials,
    endpoint: z
      .object({
        resourceManager: optionalString("Azure Resource Manager base URL."),
        authorityHost: optionalString("Microsoft Entra authority host."),
        blob: optionalString(
          "Blob service URL of the storage account; default https://<storage.accountName>.blob.core.windows.net.",
        ),
      })
      .optional()
      .describe("Override the Azure endpoints (local fakes, sovereign clouds)."),
    storage: z
      .object({
        accountName: z
          .string()
          .min(3)
          .max(24)
          .describe("The storage account Blob Containers of this ProviderConfig live in."),
        accountKeySecretRef: SecretKeySelector.optional().describe(
          "The Secret key holding the account's shared key. Unset: the Blob service is called with the credentials above (they need the Storage Blob Data Contributor role).",
        ),
      })
      .optional()
      .describe("The storage account for Blob Containers, and how to reach its data plane."),
    rateLimit: RateLimitSpec.optional(),
  })
  .describe("How driftless reaches Azure: tenant, subscription, credentials, endpoints and storage account.");
export type AzureProviderConfigSpec = z.infer<typeof AzureProviderConfigSpec>;

export const providerConfigs = {
  aws: { type: providerConfigType("aws"), spec: AwsProviderConfigSpec },
  gcp: { type: providerConfigType("gcp"), spec: GcpProviderConfigSpec },
  azure: { type: providerConfigType("azure"), spec: AzureProviderConfigSpec },
} as const;

/** Who may use a ClusterProviderConfig: the platform's choice, made on the object itself. */
const AllowedNamespaces = z
  .array(
    z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9*]([-a-z0-9*]*[a-z0-9*])?$/, "a namespace name or glob (*)"),
  )
  .optional()
  .describe(
    "Namespaces whose managed resources may use this ClusterProviderConfig: names or globs with * (e.g. team-*). Unset: every namespace.",
  );

function v2ProviderConfigsOf<S extends z.ZodObject<z.ZodRawShape>>(cloud: string, spec: S) {
  const local = localizeSecretRefs(spec);
  return {
    /** In a team's namespace: its Secrets are read from there; ambient identity and metadata endpoints are refused. */
    namespaced: {
      type: namespacedProviderConfigType(cloud),
      spec: local.schema.describe(
        `${spec.description ?? ""} Secrets are read from this ProviderConfig's namespace.`,
      ),
    },
    /** The platform's, cluster-scoped; spec.allowedNamespaces says which namespaces may use it. */
    cluster: {
      type: clusterProviderConfigType(cloud),
      spec: spec.extend({ allowedNamespaces: AllowedNamespaces }).describe(spec.description ?? ""),
    },
  };
}

/** The Crossplane v2 shape's ProviderConfig (namespaced) and ClusterProviderConfig per cloud, `<cloud>.m.driftless.dev`. */
export const v2ProviderConfigs = {
  aws: v2ProviderConfigsOf("aws", AwsProviderConfigSpec),
  gcp: v2ProviderConfigsOf("gcp", GcpProviderConfigSpec),
  azure: v2ProviderConfigsOf("azure", AzureProviderConfigSpec),
} as const;

export interface ProviderConfig<S = Record<string, unknown>> {
  apiVersion: string;
  kind: "ProviderConfig" | "ClusterProviderConfig";
  metadata: ObjectMeta;
  spec: S;
  status?: z.infer<typeof ProviderConfigStatus>;
}
