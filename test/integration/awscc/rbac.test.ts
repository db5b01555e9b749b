// A generated kind reconciled by the reconcile functions' own identity on the RBAC-on API server, with
// nothing but the generated rules: rbac.yaml (the hand-written kinds, ProviderConfigs, Secrets, events)
// plus awsccRbacObjects for exactly the activated kind. Without those the identity is refused; with them a
// WorkGroup is created, its drift put back and deleted through the Cloud Control fake; a generated kind
// that is not activated stays refused.
import { UpdateResourceCommand } from "@aws-sdk/client-cloudcontrol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsccRbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { awsccRegistry, awsccSpec, awsccTestbed, requestDone } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import {
  applyGeneratedRbac,
  expectOnlyActivated,
  reconcilerWithoutGeneratedRbac,
  removeGeneratedRbac,
} from "../../support/rbac.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

const admin = newKube();
const TYPE = "AWS::Athena::WorkGroup";
const NOT_ACTIVATED = awsccKindOf(awsccSpec("AWS::SNS::Topic"));
const PC = uniqueName("pc-awscc-rbac");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let kube: Kube;

beforeAll(async () => {
  bed = await awsccTestbed(admin, PC, [TYPE]);
  kube = await reconcilerWithoutGeneratedRbac(admin, "awscc");
}, 120_000);

afterAll(async () => {
  await removeGeneratedRbac(admin, "awscc");
  await bed?.close();
});

describe("a generated kind with only the generated RBAC (RBAC-on API server)", () => {
  it("is refused without its rules, and reconciled end to end with awsccRbacObjects for it", async () => {
    const def = bed.defs.get(TYPE)!;
    const name = uniqueName("wg-rbac");
    await admin.create(
      def,
      managedObject(def, name, PC, { connectionSecret: false, forProvider: { description: "one" } }),
    );
    const r = new Reconciler(kube, awsccRegistry([...bed.specs.values()]), { creationGracePeriodMs: 0 });

    // Prepare: rbac.yaml alone (the hand-written kinds) does not reach a generated kind.
    expect(statusOf(await kube.get(def, name).catch((e) => e))).toBe(403);

    // Act: the rules for exactly the activated kind, both shapes.
    await applyGeneratedRbac(kube, awsccRbacObjects([def, namespacedVariantOf(def)]), def, name);
    const created = await settle(r, keyOf(def, name));

    // Assess: created and Ready as the reconciler's identity; drift put back; deleted.
    expect(created.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expectAvailable(await getMr(admin, def, name));
    const [wire] = await bed.fake.resources(TYPE);
    expect(wire?.identifier).toBe(name);
    const cc = bed.fake.client();
    const change = await cc.send(
      new UpdateResourceCommand({
        TypeName: TYPE,
        Identifier: name,
        PatchDocument: JSON.stringify([{ op: "replace", path: "/Description", value: "drifted" }]),
      }),
    );
    expect((await requestDone(cc, change.ProgressEvent)).OperationStatus).toBe("SUCCESS");
    const fixed = await settle(r, keyOf(def, name));
    expect(fixed.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    await eventually(async () => (await bed.fake.resources(TYPE))[0]?.model.Description === "one", {
      what: "the drifted description put back",
    });
    await admin.delete(def, name);
    const deleted = await settle(r, keyOf(def, name));
    expect(deleted.map((x) => x.error?.message).filter(Boolean)).toEqual([]);
    expect(await admin.get(def, name)).toBeUndefined();
    expect(await bed.fake.resources(TYPE)).toEqual([]);

    // Exactly the activated kinds: another generated kind stays refused, to both identities.
    await expectOnlyActivated(admin, kube, def, NOT_ACTIVATED);
  });
});
