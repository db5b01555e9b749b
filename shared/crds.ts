import { claimCrds } from "./api/claims/index.ts";
import { managedCrd, providerConfigCrd } from "./api/crd.ts";
import { exportTemplateCrd } from "./api/export/template.ts";
import { activationPolicyCrd } from "./api/pkg/activation-policy.ts";
import { providerCrd } from "./api/pkg/provider.ts";
import { usageCrds } from "./api/protection/usage.ts";
import { providerConfigs, v2ProviderConfigs } from "./api/provider-config.ts";
import { managedKinds } from "./providers/index.ts";

/**
 * Every CRD driftless serves: one per managed kind (both shapes), three ProviderConfig kinds per cloud,
 * claims and classes, export templates, the Provider objects of its deployments, activation policies and
 * Usages (Crossplane's group and shape: where Crossplane installed its own, applyCrds leaves them alone).
 */
export function allCrds() {
  const pcs = Object.entries(providerConfigs).flatMap(([cloud, pc]) => {
    const v2 = v2ProviderConfigs[cloud as keyof typeof v2ProviderConfigs];
    return [
      providerConfigCrd(pc.type, pc.spec, cloud),
      providerConfigCrd(v2.namespaced.type, v2.namespaced.spec, cloud),
      providerConfigCrd(v2.cluster.type, v2.cluster.spec, cloud),
    ];
  });
  return [
    ...pcs,
    ...managedKinds.map((k) => managedCrd(k.definition)),
    ...claimCrds(),
    exportTemplateCrd(),
    providerCrd(),
    activationPolicyCrd(),
    ...usageCrds(),
  ];
}
