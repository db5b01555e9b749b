// The GCP functions' settings: the shared typed config plus what only Cloud Functions need, read once.
import { z } from "zod";
import { type Config, readConfig } from "../config.ts";

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === "" ? undefined : v), schema.optional());

export const GcpFunctionEnv = z.object({
  DRIFTLESS_PUBSUB_DLQ_TOPIC: optional(z.string()).describe(
    "Dead-letter topic malformed messages are copied to (else they are nacked for the dead-letter policy).",
  ),
  DRIFTLESS_PUBSUB_MAX_DELIVERY_ATTEMPTS: optional(z.coerce.number().int().min(5).max(100)).describe(
    "The trigger subscription's maxDeliveryAttempts: a requeue at the last attempt is re-published fresh.",
  ),
  DRIFTLESS_GKE_ENDPOINT: optional(z.url()).describe("GKE API server endpoint, https://…"),
  DRIFTLESS_LABEL_SELECTOR: optional(z.string()).describe(
    "Only sweep objects matching this label selector (several deployments sharing one cluster).",
  ),
  DRIFTLESS_GKE_CA_DATA: optional(z.string()).describe(
    "GKE cluster CA, base64 PEM (masterAuth.clusterCaCertificate).",
  ),
});

export type GcpFunctionConfig = Config & z.infer<typeof GcpFunctionEnv>;

export function readGcpConfig(env: NodeJS.ProcessEnv = process.env): GcpFunctionConfig {
  const base = readConfig(env);
  const parsed = GcpFunctionEnv.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  return { ...base, ...parsed.data };
}
