// Every kind driftless reconciles, from the per-cloud registries (shared/providers/<cloud>/kinds.ts):
// adding a kind is its schema, its provider file and one line there. The CRDs, RBAC, docs, the
// forwarder's kind list, the README's kinds table and serverless.yml's IAM derive from these lists.
import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import { awsKinds, awsProviderConfigKinds } from "./aws/kinds.ts";
import { azureKinds, azureProviderConfigKinds } from "./azure/kinds.ts";
import { gcpKinds, gcpProviderConfigKinds } from "./gcp/kinds.ts";

/** Every managed kind driftless reconciles. */
export const managedKinds: ManagedKindProvider[] = [...awsKinds, ...azureKinds, ...gcpKinds];

/** Every cloud's ProviderConfig and its credential check. */
export const providerConfigKinds: ProviderConfigKind[] = [
  ...awsProviderConfigKinds,
  ...azureProviderConfigKinds,
  ...gcpProviderConfigKinds,
];
