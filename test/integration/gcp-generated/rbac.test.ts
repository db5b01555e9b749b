// A generated Google Cloud kind reconciled by the reconcile functions' own identity on the RBAC-on API
// server, with nothing but the generated rules: rbac.yaml (the hand-written kinds, ProviderConfigs, Secrets,
// events) plus googleapisRbacObjects for exactly the activated kind. Without those the identity is refused;
// with them a Secret Manager Secret is created, its drift put back and deleted through the generic Google
// fake; a generated kind that is not activated stays refused, to both identities.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { googleapisRbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../../shared/providers/gcp/home.ts";
import { withHome } from "../../../shared/providers/home.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds } from "../../support/aws.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig } from "../../support/gcp.ts";
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
const PC = uniqueName("pc-gcpgen-rbac");

let fake: GoogleGenericFake;
let def: ManagedKindDef;
let notActivated: ManagedKindDef;
let kube: Kube;
let r: Reconciler;

beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 1 });
  const catalog = loadGoogleCatalog();
  const spec = (type: string, kind: string) =>
    loadGoogleSpec(catalog.kinds.find((x) => x.typeName === type && x.kind === kind)!);
  const secret = spec("secretmanager.googleapis.com/Secret", "Secret");
  def = googleKindOf(secret);
  notActivated = googleKindOf(spec("workflows.googleapis.com/Workflow", "Workflow"));
  await ensureCrds();
  await installCrds(admin, [def, notActivated]);
  await createGcpProviderConfig(admin, PC, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${fake.url}/{api}` },
  });
  kube = await reconcilerWithoutGeneratedRbac(admin, "googleapis");
  const providers = googleProviders([secret], { pollDelaysMs: [] }).map((p) => withHome(p, gcpHome));
  r = new Reconciler(kube, new KindRegistry(withNamespacedVariants(providers)), { creationGracePeriodMs: 0 });
}, 120_000);

afterAll(async () => {
  await removeGeneratedRbac(admin, "googleapis");
  if (def) await removeCrds(admin, [def, notActivated]);
  await fake?.close();
});

describe("a generated Google Cloud kind with only the generated RBAC (RBAC-on API server)", () => {
  it("is refused without its rules, and reconciled end to end with googleapisRbacObjects for it", async () => {
    const name = uniqueName("secret-rbac");
    const labels = { a: "1" };
    await admin.create(
      def,
      managedObject(def, name, PC, {
        connectionSecret: false,
        forProvider: { replication: { automatic: {} }, labels },
      }),
    );

    // Prepare: rbac.yaml alone (the hand-written kinds) does not reach a generated kind.
    expect(statusOf(await kube.get(def, name).catch((e) => e))).toBe(403);

    // Act: the rules for exactly the activated kind, both shapes.
    await applyGeneratedRbac(kube, googleapisRbacObjects([def, namespacedVariantOf(def)]), def, name);
    const created = await settle(r, keyOf(def, name));
    await settle(r, keyOf(def, name));

    // Assess: created and Ready as the reconciler's identity; drift put back; deleted.
    expect(created.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    const mr = await getMr<Json>(admin, def, name);
    expectAvailable(mr);
    const where = String(mr?.status?.atProvider?.name);
    expect(fake.resource(where), where).toBeDefined();
    fake.mutate(where, { labels: { a: "2" } });
    const fixed = await settle(r, keyOf(def, name));
    await settle(r, keyOf(def, name));
    expect(fixed.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(fake.resource(where)?.labels).toEqual({ ...defaultTags(def, name, PC), ...labels });
    await admin.delete(def, name);
    const deleted = await settle(r, keyOf(def, name));
    await settle(r, keyOf(def, name));
    expect(deleted.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(await admin.get(def, name)).toBeUndefined();
    expect(fake.resource(where)).toBeUndefined();

    // Exactly the activated kinds: another generated kind stays refused, to both identities.
    await expectOnlyActivated(admin, kube, def, notActivated);
  });
});
