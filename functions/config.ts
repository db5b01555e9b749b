// One typed configuration object, read once from the environment at the edge and passed in.
import { z } from "zod";
import type { OwnQueues } from "../shared/providers/own-queues.ts";
import type { RateLimit } from "../shared/reconciler/rate-limit.ts";

const Duration = z
  .string()
  .regex(/^(\d+(ms|s|m|h))+$/, "a duration such as 30s, 5m or 1h")
  .transform((v) => {
    const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
    return [...v.matchAll(/(\d+)(ms|s|m|h)/g)].reduce(
      (t, m) => t + Number(m[1]) * (units[m[2] ?? "s"] ?? 0),
      0,
    );
  });

/** A comma-separated list, items trimmed, empty ones dropped (default: none). */
const commaList = z
  .string()
  .default("")
  .transform((v) =>
    v
      .split(",")
      .map((n) => n.trim())
      .filter(Boolean),
  );

export const Config = z.object({
  KUBECONFIG: z.string().optional().describe("Path to a kubeconfig; default: in-cluster or ~/.kube/config."),
  DRIFTLESS_KUBECONFIG_YAML: z.string().optional().describe("A whole kubeconfig (e.g. from a secret store)."),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error"]).default("info"),
  DRIFTLESS_QUEUE: z.enum(["memory", "sqs", "pubsub"]).default("memory"),
  DRIFTLESS_SQS_QUEUE_URL: z.string().optional(),
  DRIFTLESS_SQS_DLQ_URL: z.string().optional(),
  DRIFTLESS_PUBSUB_TOPIC: z.string().optional(),
  DRIFTLESS_PUBSUB_SUBSCRIPTION: z.string().optional(),
  GCP_PROJECT_ID: z.string().optional(),
  DRIFTLESS_WORKERS: z.coerce.number().int().min(1).max(256).default(8),
  DRIFTLESS_POLL_INTERVAL: Duration.optional().describe(
    "Default drift-check interval per resource: 5m, or 1h when the doorbell and cloud events both ring (docs/operations.md).",
  ),
  DRIFTLESS_SWEEP_INTERVAL: Duration.default(60_000),
  DRIFTLESS_ACTIVATE: commaList.describe(
    "Managed kinds whose CRDs are installed (comma list of globs over CRD names, e.g. *.aws.driftless.dev); default all (`driftless crds apply`, `driftless run`).",
  ),
  DRIFTLESS_MIN_POLL_INTERVAL: Duration.default(30_000).describe(
    "The least interval a crossplane.io/poll-interval annotation may ask for (default 30s): shorter values count as this.",
  ),
  DRIFTLESS_MAX_POLL_INTERVAL: Duration.default(20 * 60_000).describe(
    "Adaptive polling: the longest interval a resource that stays unchanged is checked at (default 20m; the poll interval turns it off).",
  ),
  DRIFTLESS_SKIP_DEFAULT_TAGS: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "Leave Crossplane's default tags (crossplane-kind, -name, -providerconfig, -namespace) off new resources, as provider-upjet's --skip-default-tags does (default false).",
    ),
  DRIFTLESS_SWEEP_BATCH: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Send in-sync resources' drift checks as batch messages (default true)."),
  DRIFTLESS_SWEEP_INDEX: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe(
      "Keep the sweep's index warm between runs: a run watches for changes and reads due slots instead of listing every object (default true).",
    ),
  DRIFTLESS_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  DRIFTLESS_LABEL_SELECTOR: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().optional())
    .describe("Default label selector of `driftless run` (only objects matching it are watched and swept)."),
  DRIFTLESS_SECRET_REF_NAMESPACES: commaList.describe(
    "Namespaces (comma list, * for any) a managed resource may read Secrets from besides its connection Secret's own (default none).",
  ),
  DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES: commaList.describe(
    "Namespaces (comma list, globs with *) whose namespaced ProviderConfigs may use credentials.source InjectedIdentity, the functions' own cloud identity (default none).",
  ),
  DRIFTLESS_CLAIMS: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Serverless deployment: also forward, sweep and reconcile claims and classes (default true)."),
  DRIFTLESS_DOORBELL_SECRET: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().optional())
    .describe(
      "The admission doorbell's path secret (≥ 32 characters of A-Z a-z 0-9 . _ ~ -): its endpoint answers only /<secret>/… (docs/doorbell.md).",
    ),
  DRIFTLESS_DOORBELL_IGNORE_USERS: commaList.describe(
    "Kubernetes usernames (comma list) whose writes do not ring the doorbell, besides driftless's own field manager.",
  ),
  DRIFTLESS_CLOUD_EVENTS: z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .describe(
      "Cloud audit events are routed to driftless (EventBridge rule, log sink, Event Grid): with the doorbell, the default poll interval becomes 1h.",
    ),
  DRIFTLESS_RATE_LIMIT: z.coerce
    .number()
    .positive()
    .default(20)
    .describe(
      "Cloud calls per second per ProviderConfig for the whole deployment (default 20; a ProviderConfig's spec.rateLimit overrides it): docs/operations.md.",
    ),
  DRIFTLESS_RATE_LIMIT_BURST: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Calls allowed at once on top after a quiet period, for the whole deployment (default twice the rate).",
    ),
  DRIFTLESS_MAX_INSTANCES: z.coerce
    .number()
    .int()
    .min(1)
    .default(1)
    .describe(
      "Processes of this deployment that may reconcile at once (the queue trigger's maximum concurrency, the function's max instances): each takes the rate limit ÷ this.",
    ),
  DRIFTLESS_OWN_PRINCIPALS: commaList.describe(
    "Cloud identities (comma list: IAM role ARNs, service-account e-mails, Azure object or app ids) whose audit events are driftless's own and dropped (docs/cloud-events.md).",
  ),
});
export type Config = Omit<z.infer<typeof Config>, "DRIFTLESS_POLL_INTERVAL"> & {
  /** Resolved: the variable, else DEFAULT_POLL_INTERVAL_MS or (doorbell and cloud events) SAFETY_NET_POLL_INTERVAL_MS. */
  DRIFTLESS_POLL_INTERVAL: number;
};

/** The default poll interval while a forwarder (or only the doorbell) brings Kubernetes changes. */
export const DEFAULT_POLL_INTERVAL_MS = 5 * 60_000;
/**
 * The default when the doorbell brings Kubernetes changes and cloud events bring the cloud's: the poll
 * is then only the safety net for events that were lost (docs/operations.md, "Poll interval").
 */
export const SAFETY_NET_POLL_INTERVAL_MS = 60 * 60_000;

/** Reads and validates the configuration; a bad value fails fast with the variable's name. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Config.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  const c = parsed.data;
  const bothRing = Boolean(c.DRIFTLESS_DOORBELL_SECRET) && c.DRIFTLESS_CLOUD_EVENTS;
  return {
    ...c,
    DRIFTLESS_POLL_INTERVAL:
      c.DRIFTLESS_POLL_INTERVAL ?? (bothRing ? SAFETY_NET_POLL_INTERVAL_MS : DEFAULT_POLL_INTERVAL_MS),
  };
}

/**
 * The stack's own queues and topics (work queue, dead letters, trigger subscription): the providers refuse
 * to manage them (shared/providers/own-queues.ts), so no tenant can import, change or delete them.
 */
export function ownQueuesOf(cfg: Config & { DRIFTLESS_PUBSUB_DLQ_TOPIC?: string | undefined }): OwnQueues {
  const named = (...refs: Array<string | undefined>) => refs.filter((r): r is string => Boolean(r));
  return {
    aws: named(cfg.DRIFTLESS_SQS_QUEUE_URL, cfg.DRIFTLESS_SQS_DLQ_URL),
    gcp: named(cfg.DRIFTLESS_PUBSUB_TOPIC, cfg.DRIFTLESS_PUBSUB_SUBSCRIPTION, cfg.DRIFTLESS_PUBSUB_DLQ_TOPIC),
  };
}

/** The deployment-wide cloud-call limit per ProviderConfig and the instances that share it (rate-limit.ts). */
export function rateLimitOf(c: Config): { rateLimit: RateLimit; rateLimitInstances: number } {
  return {
    rateLimit: {
      perSecond: c.DRIFTLESS_RATE_LIMIT,
      burst: c.DRIFTLESS_RATE_LIMIT_BURST ?? Math.max(1, Math.ceil(2 * c.DRIFTLESS_RATE_LIMIT)),
    },
    rateLimitInstances: c.DRIFTLESS_MAX_INSTANCES,
  };
}

/** The worker settings a function's environment decides, the same for every cloud's reconcile function. */
export function workerSettingsOf(c: Config) {
  return {
    pollIntervalMs: c.DRIFTLESS_POLL_INTERVAL,
    minPollIntervalMs: c.DRIFTLESS_MIN_POLL_INTERVAL,
    skipDefaultTags: c.DRIFTLESS_SKIP_DEFAULT_TAGS,
    secretRefNamespaces: c.DRIFTLESS_SECRET_REF_NAMESPACES,
    ambientIdentityNamespaces: c.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES,
    claims: c.DRIFTLESS_CLAIMS,
    ownPrincipals: c.DRIFTLESS_OWN_PRINCIPALS,
    ...rateLimitOf(c),
  };
}
