import { withNamespacedVariants } from "../../shared/api/external.ts";
import type { GoogleKindSpec } from "../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { googleProvider } from "../../shared/providers/gcp/generic/client.ts";
import { googleProviders } from "../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../shared/providers/gcp/home.ts";
import { withHome } from "../../shared/providers/home.ts";
import type { ReconcilerOptions } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { ensureCrds } from "./aws.ts";
import { installCrds } from "./crd-holds.ts";
import { createGcpProviderConfig } from "./gcp.ts";
import { Reconciler } from "./routed.ts";

export async function serveGoogleKinds(
  kube: Kube,
  o: {
    specs: readonly GoogleKindSpec[];
    defs: readonly ManagedKindDef[];
    pc: string;
    fakeUrl: string;
    /** Where the reconciler logs (a test that checks what reaches the logs captures them). */
    logger?: ReconcilerOptions["logger"];
  },
): Promise<Reconciler> {
  await ensureCrds();
  await installCrds(kube, [...o.defs]);
  await createGcpProviderConfig(kube, o.pc, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${o.fakeUrl}/{api}` },
  });
  const providers = googleProviders([...o.specs], { pollDelaysMs: [] }).map((p) => withHome(p, gcpHome));
  return new Reconciler(kube, new KindRegistry(withNamespacedVariants(providers)), {
    creationGracePeriodMs: 0,
    ...(o.logger ? { logger: o.logger } : {}),
  });
}

/**
 * A generated Google kind's client against a fake, for a ProviderConfig of `project` (no cluster needed),
 * answering its home as the registry's does (providers/gcp/kinds.ts).
 */
export const connectGoogle = (spec: GoogleKindSpec, fakeUrl: string, project = "p") =>
  withHome(googleProvider(spec, { pollDelaysMs: [] }), gcpHome).connect({
    providerConfig: {
      apiVersion: "gcp.driftless.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "default", uid: "u" },
      spec: {
        projectID: project,
        credentials: { source: "InjectedIdentity" },
        endpoint: { apis: `${fakeUrl}/{api}` },
      },
    },
    readSecretKey: async () => "",
  } as never);
