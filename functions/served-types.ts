// The types a deployment serves, from data alone: the hand-written kinds' list generated from the registries
// (forwarder-kinds.ts), the activated generated kinds' definitions, the ProviderConfigs, claims and usages.
// The forwarder and the doorbells only need to know the kinds (names, groups, shapes), never to reconcile
// one: they load no provider and no cloud SDK (test/packaging/doorbell-bundles.test.ts).
import { type ManagedKindDef, namespacedVariantOf } from "../shared/api/managed.ts";
import type { ResourceType } from "../shared/api/meta.ts";
import { usageTypes } from "../shared/api/protection/usage.ts";
import { claimTypes } from "../shared/claims/kinds.ts";
import { type Cloud, managedTypes, providerConfigTypes } from "./forwarder-kinds.ts";

/**
 * The kinds (and ProviderConfigs) of the given clouds, the activated generated kinds in both shapes (as
 * the registries' withNamespacedVariants adds them), and with `claims` the claim and class kinds: what the
 * functions behind the queue serve (worker.ts typesOf with the same options).
 */
export function servedTypes(
  clouds: readonly Cloud[],
  opts: { claims?: boolean; generated?: readonly ManagedKindDef[] } = {},
): ResourceType[] {
  const generated = opts.generated ?? [];
  return [
    ...managedTypes.filter((d) => clouds.includes(d.cloud)),
    ...generated,
    ...generated.map((d) => namespacedVariantOf(d)),
    ...providerConfigTypes.filter((t) => clouds.includes(t.cloud)),
    ...(opts.claims ? claimTypes() : []),
    ...usageTypes(),
  ];
}
