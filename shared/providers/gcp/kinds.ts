// The GCP kinds: a new one is its schema in shared/api/gcp/, its provider file here and one line below;
// `npm run gen:kinds` then regenerates what derives from this list. The GCP functions import this file,
// never shared/providers/index.ts, so their bundles carry Google's SDKs only.
import {
  defineProviderConfigKind,
  type ManagedKindProvider,
  type ProviderConfigKind,
  providerConfigKindsOf,
  withNamespacedVariants,
} from "../../api/external.ts";
import { providerConfigs, v2ProviderConfigs } from "../../api/provider-config.ts";
import { checkGcpCredentials } from "./config.ts";
import { subscriptionProvider } from "./pubsub-subscription.ts";
import { topicProvider } from "./pubsub-topic.ts";
import { gcsBucketProvider } from "./storage-bucket.ts";

export const gcpKinds: ManagedKindProvider[] = withNamespacedVariants([
  topicProvider,
  subscriptionProvider,
  gcsBucketProvider,
]);

export const gcpProviderConfigKinds: ProviderConfigKind[] = providerConfigKindsOf(
  defineProviderConfigKind({ cloud: "gcp", type: providerConfigs.gcp.type, check: checkGcpCredentials }),
  v2ProviderConfigs.gcp,
);
