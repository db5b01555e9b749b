// The managed kinds the GCP functions serve. Imported by file, never through shared/providers/index.ts,
// so the Cloud Functions bundles carry Google's SDKs only (no AWS SDK, no Azure); a unit test checks this
// list against the full registry, so a new GCP kind cannot be forgotten here.
import type { ManagedKindProvider, ProviderConfigKind } from "../../shared/api/external.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { checkGcpCredentials } from "../../shared/providers/gcp/config.ts";
import { subscriptionProvider } from "../../shared/providers/gcp/pubsub-subscription.ts";
import { topicProvider } from "../../shared/providers/gcp/pubsub-topic.ts";
import { gcsBucketProvider } from "../../shared/providers/gcp/storage-bucket.ts";

export const gcpKinds: ManagedKindProvider[] = [
  topicProvider as ManagedKindProvider,
  subscriptionProvider as ManagedKindProvider,
  gcsBucketProvider as ManagedKindProvider,
];

export const gcpProviderConfigKinds: ProviderConfigKind[] = [
  { cloud: "gcp", type: providerConfigs.gcp.type, check: checkGcpCredentials as ProviderConfigKind["check"] },
];
