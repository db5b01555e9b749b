// A generated Google Cloud kind reconciled by the reconcile functions' own identity on the RBAC-on API
// server, with nothing but the generated rules: rbac.yaml (the hand-written kinds, ProviderConfigs, Secrets,
// events) plus googleapisRbacObjects for exactly the activated kind. Without those the identity is refused;
// with them a Secret Manager Secret is created, its drift put back and deleted through the generic Google
// fake; a generated kind that is not activated stays refused, to both identities.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { googleapisRbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { googleGenTestbed } from "../../support/gcp-generated.ts";
import {
  applyGeneratedRbac,
  expectOnlyActivated,
  reconcilerWithoutGeneratedRbac,
  removeGeneratedRbac,
} from "../../support/rbac.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const SECRET = "secretmanager.googleapis.com/Secret";
const WORKFLOW = "workflows.googleapis.com/Workflow";
const admin = newKube();
const PC = uniqueName("pc-gcpgen-rbac");
const bed = googleGenTestbed(admin, PC, [SECRET, WORKFLOW]);
const [def, notActivated] = [bed.def(SECRET), bed.def(WORKFLOW)];
/** The reconcile functions' identity. */
let kube: Kube;

beforeAll(async () => {
  kube = await reconcilerWithoutGeneratedRbac(admin, "googleapis");
  await bed.start({ opPolls: 1 }, { serve: [SECRET], as: kube });
}, 120_000);

afterAll(async () => {
  await removeGeneratedRbac(admin, "googleapis");
  await bed.close();
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
    const created = await settle(bed.reconciler, keyOf(def, name));
    await settle(bed.reconciler, keyOf(def, name));

    // Assess: created and Ready as the reconciler's identity; drift put back; deleted.
    expect(created.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    const mr = await getMr<Json>(admin, def, name);
    expectAvailable(mr);
    const where = String(mr?.status?.atProvider?.name);
    expect(bed.fake.resource(where), where).toBeDefined();
    bed.fake.mutate(where, { labels: { a: "2" } });
    const fixed = await settle(bed.reconciler, keyOf(def, name));
    await settle(bed.reconciler, keyOf(def, name));
    expect(fixed.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(bed.fake.resource(where)?.labels).toEqual({ ...defaultTags(def, name, PC), ...labels });
    await admin.delete(def, name);
    const deleted = await settle(bed.reconciler, keyOf(def, name));
    await settle(bed.reconciler, keyOf(def, name));
    expect(deleted.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(await admin.get(def, name)).toBeUndefined();
    expect(bed.fake.resource(where)).toBeUndefined();

    // Exactly the activated kinds: another generated kind stays refused, to both identities.
    await expectOnlyActivated(admin, kube, def, notActivated);
  });
});
