import { claimCrds } from "./api/claims/index.ts";
import { managedCrd, providerConfigCrd } from "./api/crd.ts";
import { exportTemplateCrd } from "./api/export/template.ts";
import { providerConfigs } from "./api/provider-config.ts";
import { managedKinds } from "./providers/index.ts";

/** Every CRD driftless serves: one per managed kind, one ProviderConfig per cloud, claims and classes, export templates. */
export function allCrds() {
  const pcs = Object.entries(providerConfigs).map(([cloud, pc]) =>
    providerConfigCrd(pc.type, pc.spec, cloud),
  );
  return [...pcs, ...managedKinds.map((k) => managedCrd(k.definition)), ...claimCrds(), exportTemplateCrd()];
}
