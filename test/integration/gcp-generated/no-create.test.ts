// Kinds Google publishes no create for, on a real kube-apiserver against the generic fake. Cloud KMS's
// AutokeyConfig (AutokeyAdmin has GetAutokeyConfig and UpdateAutokeyConfig only: one per folder, made by
// Google with it) is adopted by its parent, its drift corrected with an update mask of the drifted field only,
// and where none exists it is Synced=False with Google's reason and nothing is ever POSTed. KMS's
// RetiredResource (GetRetiredResource only) is observe-only: observed, never written, and its CRD refuses
// asking for more. Compute's MachineType (MachineTypes has Get, List and AggregatedList only: Google fills the
// collection) is observe-only too, observed by its name in its zone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const AK = "cloudkms.googleapis.com/AutokeyConfig";
const RR = "cloudkms.googleapis.com/RetiredResource";
const MT = "compute.googleapis.com/MachineType";
const kube = newKube();
const PC = uniqueName("gcpak");
const bed = googleGenTestbed(kube, PC, [AK, RR, MT]);
const [autokey, retired, machineType] = [bed.def(AK), bed.def(RR), bed.def(MT)];

beforeAll(() => bed.start({ opPolls: 0 }, { reconciler: { events: new KubeEventRecorder(kube) } }), 120_000);
afterAll(() => bed.close());

const twice = async (def: typeof autokey, name: string) => {
  await settle(bed.reconciler, keyOf(def, name));
  await settle(bed.reconciler, keyOf(def, name));
};

/** An observe-only object named `name` for the external name `id`, settled twice: it and the fake's counts before. */
const observed = async (def: typeof autokey, name: string, id: string, forProvider: Json) => {
  await kube.create(def, {
    ...managedObject(def, name, PC, { forProvider, connectionSecret: false }),
    metadata: { name, annotations: { [Annotations.externalName]: id } },
  } as never);
  const before = bed.fake.stats();
  await twice(def, name);
  return { before, mr: await getMr<Json>(kube, def, name) };
};

describe("Cloud KMS AutokeyConfig: Google publishes no create (adopt and manage)", () => {
  it("adopted by its folder, drift corrected with a mask of the drifted field; none there: refused, no POST", {
    timeout: 120_000,
  }, async () => {
    const folder = `folders/${Date.now()}`;
    const full = `${folder}/autokeyConfig`;
    bed.fake.made(AK, full, {
      keyProject: "projects/keys-a",
      keyProjectResolutionMode: "DEDICATED_KEY_PROJECT",
      state: "ACTIVE",
      etag: "e1",
    });
    const name = uniqueName("ak");
    await kube.create(
      autokey,
      managedObject(autokey, name, PC, {
        forProvider: { parent: folder, keyProject: "projects/keys-b" },
        connectionSecret: false,
      }),
    );
    const before = bed.fake.stats();
    await twice(autokey, name);
    const mr = await getMr<Json>(kube, autokey, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    // The schema's defaults: adopt and manage, released on deletion.
    expect(mr?.spec.managementPolicies).toEqual(["Observe", "Update", "LateInitialize"]);
    expect(mr?.spec.deletionPolicy).toBe("Orphan");
    // The spec's keyProject was put on the existing config; its resolution mode, unset, late-initialized.
    expect(bed.fake.resource(full)).toMatchObject({ keyProject: "projects/keys-b", state: "ACTIVE" });
    expect(mr?.spec.forProvider.keyProjectResolutionMode).toBe("DEDICATED_KEY_PROJECT");
    expect(requestsSince(bed.fake, before, /^POST /)).toEqual([]);
    expect(requestsSince(bed.fake, before, /^PATCH cloudkms/).length).toBe(1);

    // Drift (a console edit) is put back; the update names only the drifted field.
    bed.fake.mutate(full, { keyProject: "projects/console" });
    const seen = bed.fake.stats();
    await twice(autokey, name);
    expect(bed.fake.resource(full)?.keyProject).toBe("projects/keys-b");
    // One more PATCH (its counter, keyed by the folder, at 2), nothing else written.
    expect(requestsSince(bed.fake, seen, /^PATCH cloudkms/).map(([, n]) => n)).toEqual([2]);
    expect(requestsSince(bed.fake, seen, /^(POST|PUT|DELETE) /)).toEqual([]);
    expect(conditionOf(await getMr(kube, autokey, name), "Synced")).toMatchObject({ status: "True" });
    // The adoption's update and the correction's each named only what differed: keyProject.
    expect(bed.fake.updatesOf(full)).toEqual([["keyProject"], ["keyProject"]]);

    // Asking to create is refused by the schema (Create, *).
    for (const policies of [["*"], ["Observe", "Create"]]) {
      const refused = await kube
        .patch(autokey, name, { spec: { managementPolicies: policies } })
        .then(() => undefined)
        .catch((e: unknown) => e as { status?: number; message?: string });
      expect(refused, JSON.stringify(policies)).toMatchObject({ status: 422 });
    }

    // None for another folder: Synced=False with Google's reason, and never a create.
    const none = uniqueName("ak-none");
    await kube.create(
      autokey,
      managedObject(autokey, none, PC, {
        forProvider: { parent: `folders/${Date.now() + 1}`, keyProject: "projects/keys-b" },
        connectionSecret: false,
      }),
    );
    const atNone = bed.fake.stats();
    await twice(autokey, none);
    const missing = await getMr<Json>(kube, autokey, none);
    expect(conditionOf(missing, "Synced"), JSON.stringify(missing?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("Google publishes no create for AutokeyConfig"),
    });
    expect(requestsSince(bed.fake, atNone, /^(POST|PATCH) /)).toEqual([]);

    // Deleting the objects releases the config: Google's stays as it is.
    await kube.delete(autokey, none);
    await kube.delete(autokey, name);
    await twice(autokey, none);
    await twice(autokey, name);
    expect(await getMr(kube, autokey, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toMatchObject({ keyProject: "projects/keys-b" });
  });
});

describe("Cloud KMS RetiredResource: Google publishes only a get (observe-only)", () => {
  it("is observed by its id, never written; its CRD takes Observe only", { timeout: 120_000 }, async () => {
    const id = uniqueName("rr");
    const full = `projects/${gcpProject()}/locations/global/retiredResources/${id}`;
    bed.fake.made(RR, full, {
      originalResource: `projects/${gcpProject()}/locations/global/keyRings/k/cryptoKeys/c`,
      resourceType: "CryptoKey",
    });
    const name = uniqueName("rr");
    const { before, mr } = await observed(retired, name, id, { location: "global" });
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.spec.managementPolicies).toEqual(["Observe"]);
    expect(mr?.status?.atProvider).toMatchObject({ name: full, resourceType: "CryptoKey" });
    expect(requestsSince(bed.fake, before, /^(POST|PATCH|PUT|DELETE) /)).toEqual([]);
    const refused = await kube
      .patch(retired, name, { spec: { managementPolicies: ["Observe", "Update"] } })
      .then(() => undefined)
      .catch((e: unknown) => e as { status?: number });
    expect(refused).toMatchObject({ status: 422 });
    await kube.delete(retired, name);
    await twice(retired, name);
    expect(await getMr(kube, retired, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeDefined();
  });
});

describe("Compute MachineType: Google publishes Get and List only (observe-only)", () => {
  it("is observed by its name in its zone, never written; its CRD takes Observe only", {
    timeout: 120_000,
  }, async () => {
    const zone = "us-central1-a";
    const type = uniqueName("e2-custom");
    const self = `/compute/v1/projects/${gcpProject()}/zones/${zone}/machineTypes/${type}`;
    bed.fake.made(MT, self, { guestCpus: 2, memoryMb: 8192, zone, description: "2 vCPUs, 8 GB RAM" });
    const name = uniqueName("mt");
    const { before, mr } = await observed(machineType, name, type, { zone });
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.spec.managementPolicies).toEqual(["Observe"]);
    expect(mr?.spec.deletionPolicy).toBe("Orphan");
    expect(mr?.status?.atProvider).toMatchObject({
      name: type,
      guestCpus: 2,
      memoryMb: 8192,
      selfLink: `https://compute.googleapis.com${self}`,
    });
    expect(requestsSince(bed.fake, before, /^GET compute/).length).toBeGreaterThan(0);
    expect(requestsSince(bed.fake, before, /^(POST|PATCH|PUT|DELETE) /)).toEqual([]);
    for (const policies of [["*"], ["Observe", "Create"], ["Observe", "Update"]]) {
      const refused = await kube
        .patch(machineType, name, { spec: { managementPolicies: policies } })
        .then(() => undefined)
        .catch((e: unknown) => e as { status?: number });
      expect(refused, JSON.stringify(policies)).toMatchObject({ status: 422 });
    }
    await kube.delete(machineType, name);
    await twice(machineType, name);
    expect(await getMr(kube, machineType, name)).toBeUndefined();
    expect(bed.fake.resource(self)).toMatchObject({ name: type, guestCpus: 2 });
    expect(requestsSince(bed.fake, before, /^(POST|PATCH|PUT|DELETE) /)).toEqual([]);
  });
});
