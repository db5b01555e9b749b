// A kind Google publishes no delete for, on a real kube-apiserver against the generic fake: Cloud KMS's KeyRing
// (google/cloud/kms/v1 has CreateKeyRing and GetKeyRing, no DeleteKeyRing). It is created and Ready; a
// CryptoKey is made under it by parentRef; its CRD refuses deletionPolicy Delete; deleting the object releases
// it (finalizer gone, a Normal ExternalResourceKept event) with no DELETE sent, and the KeyRing stays in the fake,
// which answers a DELETE of it as Google's front end does a URL no method is bound to.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { Reason } from "../../../shared/reconciler/reconciler.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const KR = "cloudkms.googleapis.com/KeyRing";
const CK = "cloudkms.googleapis.com/CryptoKey";
const kube = newKube();
const PC = uniqueName("gcpkr");
const bed = googleGenTestbed(kube, PC, [KR, CK]);
const [keyRing, cryptoKey] = [bed.def(KR), bed.def(CK)];

beforeAll(() => bed.start({ opPolls: 0 }, { reconciler: { events: new KubeEventRecorder(kube) } }), 120_000);
afterAll(() => bed.close());

const twice = async (def: typeof keyRing, name: string) => {
  await settle(bed.reconciler, keyOf(def, name));
  await settle(bed.reconciler, keyOf(def, name));
};

async function eventsOf(name: string, namespace = "default") {
  const events = await coreApi(kube).listNamespacedEvent({ namespace });
  return events.items
    .filter((e) => e.involvedObject.name === name)
    .map((e) => ({ type: e.type, reason: e.reason, message: e.message ?? "" }));
}

describe("Cloud KMS KeyRing: Google publishes no delete", () => {
  it("created Ready, a CryptoKey under it by parentRef; deleting the object releases it and sends no DELETE", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("kr");
    await kube.create(
      keyRing,
      managedObject(keyRing, name, PC, { forProvider: { location: "global" }, connectionSecret: false }),
    );
    await twice(keyRing, name);
    const kr = await getMr<Json>(kube, keyRing, name);
    expect(conditionOf(kr, "Ready"), JSON.stringify(kr?.status)).toMatchObject({ status: "True" });
    // The schema's default: Orphan, the only value it takes.
    expect(kr?.spec.deletionPolicy).toBe("Orphan");
    const full = `projects/${gcpProject()}/locations/global/keyRings/${name}`;
    expect(bed.fake.resource(full)).toMatchObject({ name: full });

    // A CryptoKey names the KeyRing by parentRef: its parent is the KeyRing's full name.
    const ck = uniqueName("ck");
    await kube.create(
      cryptoKey,
      managedObject(cryptoKey, ck, PC, {
        forProvider: { parentRef: { name }, purpose: "ENCRYPT_DECRYPT" },
        connectionSecret: false,
      }),
    );
    await twice(cryptoKey, ck);
    const key = await getMr<Json>(kube, cryptoKey, ck);
    expect(conditionOf(key, "Ready"), JSON.stringify(key?.status)).toMatchObject({ status: "True" });
    expect(key?.spec.forProvider.parent).toBe(full);
    expect(bed.fake.resource(`${full}/cryptoKeys/${ck}`)).toMatchObject({ purpose: "ENCRYPT_DECRYPT" });

    // The CRD refuses asking for a delete Google does not have.
    const refused = await kube
      .patch(keyRing, name, { spec: { deletionPolicy: "Delete" } })
      .then(() => undefined)
      .catch((e: unknown) => e as { status?: number; message?: string });
    expect(refused, "deletionPolicy Delete must be refused").toMatchObject({ status: 422 });
    // Kubernetes 1.20 (the local stack) runs the enum, not the CEL rule that words Google's reason.
    expect(refused?.message).toContain('supported values: "Orphan"');

    const before = bed.fake.stats();
    await kube.delete(keyRing, name);
    await twice(keyRing, name);
    expect(await getMr(kube, keyRing, name)).toBeUndefined();
    expect(requestsSince(bed.fake, before, /^DELETE cloudkms/)).toEqual([]);
    expect(bed.fake.resource(full)).toMatchObject({ name: full });
    const kept = (await eventsOf(name)).filter((e) => e.reason === Reason.externalKept);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({
      type: "Normal",
      message: expect.stringContaining("Google publishes no delete for KeyRing"),
    });

    // Google's answer to a DELETE of a KeyRing: no method is bound to it (404), and the KeyRing stays.
    const res = await fetch(`${bed.fake.url}/cloudkms/v1/${full}`, { method: "DELETE" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error?: { status?: string } }).error?.status).toBe("NOT_FOUND");
    expect(bed.fake.resource(full)).toMatchObject({ name: full });

    await kube.delete(cryptoKey, ck);
    await twice(cryptoKey, ck);
    expect(await getMr(kube, cryptoKey, ck)).toBeUndefined();
  });
});
