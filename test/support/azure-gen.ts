// The generated Azure kinds in tests: a file's testbed, like awsccTestbed for the AWS ones — the kinds
// generated once (skipped when current), their specs and defs by ARM type, an ARM fake of the file's own
// with the generic handler, their CRDs held on the shared API server, a ProviderConfig and a reconciler.
import { generateAzure } from "../../infra/gen-azure.ts";
import type { FakeServer } from "../../infra/local/fakes/arm-fake.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../shared/api/azure-gen/kind.ts";
import type { AzureKindSpec } from "../../shared/api/azure-gen/spec.ts";
import { withNamespacedVariants } from "../../shared/api/external.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { azureGenProviders } from "../../shared/providers/azure/arm-generic/kinds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { ensureCrds } from "./aws.ts";
import {
  armAsUser,
  createAzureProviderConfig,
  reconcileGone,
  reconcileReady,
  startGenericArmFake,
} from "./azure.ts";
import { installCrds, removeCrds } from "./crd-holds.ts";
import { generatedKinds } from "./generated-testbed.ts";
import { Reconciler } from "./routed.ts";

/** The generated kinds of these ARM types (generated first if this checkout has not, or has stale ones). */
export function azureGenSpecs(types: readonly string[]): Map<string, AzureKindSpec> {
  generateAzure();
  const catalog = loadAzureCatalog();
  return new Map(
    types.map((t) => {
      const entry = catalog.kinds.find((k) => k.type === t);
      if (!entry) throw new Error(`no generated Azure kind for ${t}`);
      return [t, loadAzureSpec(entry)] as const;
    }),
  );
}

/**
 * A test file's generated Azure kinds: specs and defs at once; `start` (in beforeAll) brings up the file's
 * own generic ARM fake, holds the kinds' CRDs (crd-holds.ts), creates the ProviderConfig `pc` on the fake and
 * a reconciler of every hand-written kind plus these (both shapes); `close` (in afterAll) lets go of them.
 */
export function azureGenTestbed(kube: Kube, pc: string, types: readonly string[]) {
  const { started, ...kinds } = generatedKinds("azureGenTestbed", azureGenSpecs(types), azureGenKindOf);
  const { specs, defs } = kinds;
  let fake: FakeServer | undefined;
  let reconciler: Reconciler | undefined;
  const bed = {
    ...kinds,
    get fake() {
      return started("fake", fake);
    },
    get reconciler() {
      return started("reconciler", reconciler);
    },
    async start(fakeOpts: Parameters<typeof startGenericArmFake>[0] = {}) {
      fake = await startGenericArmFake(fakeOpts);
      await ensureCrds();
      await installCrds(kube, [...defs.values()]);
      await createAzureProviderConfig(kube, pc, { armEndpoint: fake.url, noStorage: true });
      reconciler = new Reconciler(
        kube,
        new KindRegistry([
          ...managedKinds,
          ...withNamespacedVariants(azureGenProviders([...specs.values()])),
        ]),
        { creationGracePeriodMs: 0 },
      );
    },
    async close() {
      await removeCrds(kube, [...defs.values()]);
      await fake?.close();
    },
    /** A direct ARM call to the file's fake, as a user's own tooling (the portal, az) would make it. */
    arm: (method: string, path: string, apiVersion: string, body?: unknown) =>
      armAsUser(bed.fake.url, method, path, apiVersion, body),
    untilReady: (def: ManagedKindDef, name: string) => reconcileReady(bed.reconciler, kube, def, name),
    untilGone: (def: ManagedKindDef, name: string) => reconcileGone(bed.reconciler, def, name),
  };
  return bed;
}
