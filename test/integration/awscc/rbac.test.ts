// A generated kind reconciled by the reconcile functions' own identity on the RBAC-on API server, with
// nothing but the generated rules: rbac.yaml (the hand-written kinds, ProviderConfigs, Secrets, events)
// plus awsccRbacObjects for exactly the activated kind. Without those the identity is refused; with them a
// WorkGroup is created, its drift put back and deleted through the Cloud Control fake; a generated kind
// that is not activated stays refused.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UpdateResourceCommand } from "@aws-sdk/client-cloudcontrol";
import type { KubernetesObject } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  AWSCC_FORWARDER,
  AWSCC_RECONCILER,
  awsccRbacObjects,
  FORWARDER,
  RECONCILER,
} from "../../../infra/k8s/gen-rbac.ts";
import { REPO_ROOT } from "../../../infra/local/stack.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { awsccRegistry, awsccSpec, awsccTestbed, requestDone } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { applyAll, kubeAs } from "../../support/rbac.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

const admin = newKube();
const TYPE = "AWS::Athena::WorkGroup";
const NOT_ACTIVATED = awsccKindOf(awsccSpec("AWS::SNS::Topic"));
const PC = uniqueName("pc-awscc-rbac");
const manifests = (file: string) =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, "infra/k8s", file), "utf8")).map(
    (d) => d.toJS() as KubernetesObject,
  );
const RBAC_TYPES = [
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", plural: "clusterroles" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", plural: "clusterrolebindings" },
].map((t) => ({ ...t, group: "rbac.authorization.k8s.io", version: "v1", namespaced: false }));

async function removeAwsccRbac() {
  for (const t of RBAC_TYPES)
    for (const name of [AWSCC_FORWARDER, AWSCC_RECONCILER])
      await admin.delete(t, name).catch(() => undefined);
}

let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let kube: Kube;

beforeAll(async () => {
  bed = await awsccTestbed(admin, PC, [TYPE]);
  const forwarderSa = manifests("forwarder.yaml").filter((o) => o.kind === "ServiceAccount");
  await applyAll([...manifests("namespace.yaml"), ...forwarderSa, ...manifests("rbac.yaml")]);
  await removeAwsccRbac();
  kube = await kubeAs(admin, RECONCILER);
}, 120_000);

afterAll(async () => {
  await removeAwsccRbac();
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
    await applyAll(awsccRbacObjects([def, namespacedVariantOf(def)]));
    await eventually(async () => (await kube.get(def, name).catch(() => undefined)) !== undefined, {
      what: "the generated rules in force",
    });
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
    expect(statusOf(await kube.list(NOT_ACTIVATED).catch((e) => e))).toBe(403);
    const forwarder = await kubeAs(admin, FORWARDER);
    await expect(forwarder.list(def)).resolves.toBeDefined();
    expect(statusOf(await forwarder.list(NOT_ACTIVATED).catch((e) => e))).toBe(403);
    expect(
      statusOf(await forwarder.patch(def, "x", { metadata: { labels: { a: "b" } } }).catch((e) => e)),
    ).toBe(403);
  });
});
