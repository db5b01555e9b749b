// One typed configuration object, read once from the environment at the edge and passed in.
import { z } from "zod";

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
  DRIFTLESS_POLL_INTERVAL: Duration.default(5 * 60_000),
  DRIFTLESS_SWEEP_INTERVAL: Duration.default(60_000),
  DRIFTLESS_MAX_POLL_INTERVAL: Duration.default(20 * 60_000).describe(
    "Adaptive polling: the longest interval a resource that stays unchanged is checked at (default 20m; the poll interval turns it off).",
  ),
  DRIFTLESS_SWEEP_BATCH: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Send in-sync resources' drift checks as batch messages (default true)."),
  DRIFTLESS_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  DRIFTLESS_LABEL_SELECTOR: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().optional())
    .describe("Default label selector of `driftless run` (only objects matching it are watched and swept)."),
  DRIFTLESS_SECRET_REF_NAMESPACES: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .describe(
      "Namespaces (comma list, * for any) a managed resource may read Secrets from besides its connection Secret's own (default none).",
    ),
  DRIFTLESS_CLAIMS: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("Serverless deployment: also forward, sweep and reconcile claims and classes (default true)."),
});
export type Config = z.infer<typeof Config>;

/** Reads and validates the configuration; a bad value fails fast with the variable's name. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Config.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}
