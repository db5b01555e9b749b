// The ValidatingWebhookConfiguration that makes the API server ring the doorbell: every served kind
// (managed kinds, ProviderConfigs, claims and classes), create/update/delete of the main resource only
// (status writes are driftless's own), never failing or blocking a write.
import type { ResourceType } from "../api/meta.ts";
import { IN_USE_LABEL } from "../api/protection/usage.ts";
import type { Kube } from "../kube/client.ts";

export const WEBHOOK_CONFIGURATION_TYPE: ResourceType = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  kind: "ValidatingWebhookConfiguration",
  plural: "validatingwebhookconfigurations",
  namespaced: false,
};

export const DEFAULT_WEBHOOK_NAME = "driftless-doorbell";
/** The webhook's timeout: the most a user's write can be held up when the endpoint is slow or gone. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 2;

export interface WebhookOptions {
  /** The full endpoint URL, secret segment and route included: `https://…/<secret>/admit`. */
  url: string;
  types: readonly ResourceType[];
  /** PEM CA bundle that signs the endpoint's certificate; absent: the API server's system roots. */
  caBundlePem?: string | undefined;
  /** metadata.name of the configuration; default driftless-doorbell. */
  name?: string | undefined;
  /** 1–30; default 2. */
  timeoutSeconds?: number | undefined;
  /** Only objects with these labels ring (an equality selector `a=b,c=d`): shards, tests. */
  labelSelector?: string | undefined;
  /**
   * Also ring for connection Secrets (label app.kubernetes.io/managed-by=driftless) edited or deleted
   * by hand, so their owner repairs them at once. Default: on, unless a label selector shards the
   * deployment (a Secret does not carry its owner's labels).
   */
  connectionSecrets?: boolean | undefined;
  /**
   * The in-use guard's URL (`…/<secret>/in-use`): a DELETE of a served object labelled
   * `crossplane.io/in-use` is asked about there and refused while a Usage holds it (in-use.ts). It fails
   * closed, as Crossplane's does: an in-use object is not deleted while the guard cannot be asked.
   */
  inUseUrl?: string | undefined;
}

/** The label driftless puts on the connection Secrets it writes (reconciler/connection.ts). */
export const CONNECTION_SECRET_LABEL = { "app.kubernetes.io/managed-by": "driftless" };

/** Why a URL cannot be a webhook's `clientConfig.url`, or undefined. */
export function webhookUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `not a URL: ${redactUrl(url)}`;
  }
  if (u.protocol !== "https:")
    return "the webhook URL must be https (the API server calls webhooks over TLS)";
  // The API server refuses these (ValidatingWebhookConfiguration validation).
  if (u.search || url.includes("?"))
    return "the webhook URL may not have a query string: put the secret in the path";
  if (u.hash || url.includes("#")) return "the webhook URL may not have a fragment";
  if (u.username || u.password) return "the webhook URL may not carry user info";
  return undefined;
}

/** The URL with its path replaced by `/…`: the path holds the secret, never printed or logged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return "(not a URL)";
  }
}

export function parseEqualitySelector(selector: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const part of selector
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z0-9._/-]+)\s*==?\s*([A-Za-z0-9._-]*)$/.exec(part);
    if (!m?.[1]) throw new Error(`only equality selectors (key=value,…) are supported here: "${part}"`);
    labels[m[1]] = m[2] ?? "";
  }
  return labels;
}

export function doorbellWebhookConfiguration(o: WebhookOptions): Record<string, unknown> {
  const problem = webhookUrlProblem(o.url);
  if (problem) throw new Error(problem);
  const timeoutSeconds = o.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30)
    throw new Error("the webhook timeout must be 1–30 seconds");
  // One rule per API group, every version of it (matchPolicy Equivalent covers conversions too).
  const byGroup = new Map<string, Set<string>>();
  for (const t of o.types) {
    const plurals = byGroup.get(t.group) ?? new Set<string>();
    plurals.add(t.plural);
    byGroup.set(t.group, plurals);
  }
  const rules = [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, plurals]) => ({
      apiGroups: [group],
      apiVersions: ["*"],
      operations: ["CREATE", "UPDATE", "DELETE"],
      resources: [...plurals].sort(),
      scope: "*",
    }));
  const clientConfig: Record<string, unknown> = { url: o.url };
  if (o.caBundlePem) clientConfig.caBundle = Buffer.from(o.caBundlePem, "utf8").toString("base64");
  const common = {
    clientConfig,
    matchPolicy: "Equivalent",
    // Never refuse a write because the function is cold, slow or unreachable: the sweep catches up.
    failurePolicy: "Ignore",
    sideEffects: "NoneOnDryRun",
    timeoutSeconds,
    admissionReviewVersions: ["v1"],
  };
  const secrets = o.connectionSecrets ?? !o.labelSelector;
  if (o.inUseUrl) {
    const p = webhookUrlProblem(o.inUseUrl);
    if (p) throw new Error(`in-use guard: ${p}`);
  }
  const selected = o.labelSelector ? parseEqualitySelector(o.labelSelector) : {};
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: {
      name: o.name ?? DEFAULT_WEBHOOK_NAME,
      labels: { "app.kubernetes.io/managed-by": "driftless", "app.kubernetes.io/component": "doorbell" },
    },
    webhooks: [
      {
        name: "doorbell.driftless.dev",
        ...common,
        rules,
        ...(o.labelSelector ? { objectSelector: { matchLabels: selected } } : {}),
      },
      ...(o.inUseUrl
        ? [
            {
              name: "in-use.doorbell.driftless.dev",
              ...common,
              clientConfig: { ...clientConfig, url: o.inUseUrl },
              // Crossplane's no-usages webhook fails closed too: an in-use object waits for the guard.
              failurePolicy: "Fail",
              rules: rules.map((r) => ({ ...r, operations: ["DELETE"] })),
              objectSelector: { matchLabels: { ...selected, [IN_USE_LABEL]: "true" } },
            },
          ]
        : []),
      ...(secrets
        ? [
            {
              name: "connection-secrets.doorbell.driftless.dev",
              ...common,
              rules: [
                {
                  apiGroups: [""],
                  apiVersions: ["v1"],
                  operations: ["UPDATE", "DELETE"],
                  resources: ["secrets"],
                  scope: "Namespaced",
                },
              ],
              objectSelector: { matchLabels: CONNECTION_SECRET_LABEL },
            },
          ]
        : []),
    ],
  };
}

/** Creates the configuration, or replaces the webhooks of an existing one of the same name. */
export async function applyWebhookConfiguration(
  kube: Kube,
  config: Record<string, unknown>,
): Promise<"created" | "updated"> {
  const meta = config.metadata as { name: string };
  const existing = await kube.get(WEBHOOK_CONFIGURATION_TYPE, meta.name);
  if (!existing) {
    await kube.create(WEBHOOK_CONFIGURATION_TYPE, config as never);
    return "created";
  }
  await kube.patch(
    WEBHOOK_CONFIGURATION_TYPE,
    meta.name,
    { metadata: config.metadata, webhooks: config.webhooks },
    {
      resourceVersion: existing.metadata.resourceVersion as string,
    },
  );
  return "updated";
}

export async function deleteWebhookConfiguration(kube: Kube, name = DEFAULT_WEBHOOK_NAME): Promise<void> {
  await kube.delete(WEBHOOK_CONFIGURATION_TYPE, name);
}
