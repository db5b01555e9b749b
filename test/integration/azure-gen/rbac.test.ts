// A generated Azure kind reconciled by the reconcile functions' own identity on the RBAC-on API server, with
// nothing but the generated rules: rbac.yaml (the hand-written kinds, ProviderConfigs, Secrets, events) plus
// azureGenRbacObjects for exactly the activated kind. Without those the identity is refused; with them a
// RouteTable whose resource group comes from a ResourceGroup reference (a hand-written kind, read with
// rbac.yaml's rules) is created, its drift put back and deleted through the generic ARM fake; a generated
// kind that is not activated stays refused, to both identities.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { azureGenRbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds } from "../../support/aws.ts";
import { armAsUser, createAzureProviderConfig, startGenericArmFake } from "../../support/azure.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import {
  applyGeneratedRbac,
  expectOnlyActivated,
  reconcilerWithoutGeneratedRbac,
  removeGeneratedRbac,
} from "../../support/rbac.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
const admin = newKube();
const PC = uniqueName("pc-azgen-rbac");
const TYPE = "Microsoft.Network/routeTables";
const NOT_ACTIVATED_TYPE = "Microsoft.Network/applicationSecurityGroups";

let fake: FakeServer;
let def: ManagedKindDef;
let notActivated: ManagedKindDef;
let kube: Kube;
let r: Reconciler;

const arm = (method: string, path: string, apiVersion: string, body?: unknown) =>
  armAsUser(fake.url, method, path, apiVersion, body);

beforeAll(async () => {
  generateAzure();
  const catalog = loadAzureCatalog();
  const spec = (t: string) => loadAzureSpec(catalog.kinds.find((k) => k.type === t)!);
  const routeTables = spec(TYPE);
  def = azureGenKindOf(routeTables);
  notActivated = azureGenKindOf(spec(NOT_ACTIVATED_TYPE));
  fake = await startGenericArmFake();
  await ensureCrds();
  await installCrds(admin, [def, notActivated]);
  await createAzureProviderConfig(admin, PC, { armEndpoint: fake.url, noStorage: true });
  kube = await reconcilerWithoutGeneratedRbac(admin, "azure-gen");
  r = new Reconciler(
    kube,
    new KindRegistry([...managedKinds, ...withNamespacedVariants(azureGenProviders([routeTables]))]),
    { creationGracePeriodMs: 0 },
  );
}, 120_000);

afterAll(async () => {
  await removeGeneratedRbac(admin, "azure-gen");
  if (def) await removeCrds(admin, [def, notActivated]);
  await fake?.close();
});

describe("a generated Azure kind with only the generated RBAC (RBAC-on API server)", () => {
  it("is refused without its rules, and reconciled end to end with azureGenRbacObjects for it", async () => {
    const rg = uniqueName("rg-rbac");
    const name = uniqueName("rt-rbac");
    await admin.create(
      ResourceGroup,
      managedObject(ResourceGroup, rg, PC, {
        connectionSecret: false,
        forProvider: { location: "westeurope" },
      }),
    );
    await admin.create(
      def,
      managedObject(def, name, PC, {
        connectionSecret: false,
        forProvider: { resourceGroupNameRef: { name: rg }, location: "westeurope", tags: { team: "a" } },
      }),
    );

    // Prepare: rbac.yaml alone (the hand-written kinds) reaches the ResourceGroup, not a generated kind.
    expect(statusOf(await kube.get(def, name).catch((e) => e))).toBe(403);
    const group = await settle(r, keyOf(ResourceGroup, rg));
    expect(group.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expectAvailable(await getMr(admin, ResourceGroup, rg));

    // Act: the rules for exactly the activated kind, both shapes.
    await applyGeneratedRbac(kube, azureGenRbacObjects([def, namespacedVariantOf(def)]), def, name);
    const created = await settle(r, keyOf(def, name));
    await settle(r, keyOf(def, name));

    // Assess: created and Ready as the reconciler's identity; drift put back; deleted.
    expect(created.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    const mr = await getMr(admin, def, name);
    expectAvailable(mr);
    const id = (mr?.status?.atProvider as Json | undefined)?.id as string;
    const apiVersion = loadAzureCatalog().kinds.find((k) => k.type === TYPE)!.apiVersion;
    expect(id).toBe(
      `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${rg}/providers/${TYPE}/${name}`,
    );
    const put = await arm("PUT", id, apiVersion, { location: "westeurope", tags: { team: "console" } });
    expect(put.status).toBeLessThan(300);
    const fixed = await settle(r, keyOf(def, name));
    await settle(r, keyOf(def, name));
    expect(fixed.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect((await arm("GET", id, apiVersion)).body.tags).toMatchObject({ team: "a" });
    await admin.delete(def, name);
    const deleted = await settle(r, keyOf(def, name));
    expect(deleted.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(await admin.get(def, name)).toBeUndefined();
    expect((await arm("GET", id, apiVersion)).status).toBe(404);

    // Exactly the activated kinds: another generated kind stays refused, to both identities.
    await expectOnlyActivated(admin, kube, def, notActivated);

    await admin.delete(ResourceGroup, rg);
    await settle(r, keyOf(ResourceGroup, rg));
  });
});
