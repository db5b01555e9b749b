// IAM Admin v1's ServiceAccount as a generated kind on a real kube-apiserver, against the generic fake: a
// create whose whole request is the body (`{accountId, serviceAccount}`), named by Google with the account's
// email (the external name); drift corrected with a wrapped patch (`{serviceAccount, updateMask}`); a changed
// accountId refused as immutable (Google never answers it); import by the full name; delete. The fake refuses
// what Google refuses: an unknown field, an OUTPUT_ONLY field sent, a bad account id.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, rawGoogleRequest } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const SA = "iam.googleapis.com/ServiceAccount";
const FW = "compute.googleapis.com/Firewall";
const kube = newKube();
const PC = uniqueName("gcpsa");
const bed = googleGenTestbed(kube, PC, [SA, FW]);
const [def, firewall] = [bed.def(SA), bed.def(FW)];

beforeAll(() => bed.start({ opPolls: 0 }), 120_000);
afterAll(() => bed.close());

const twice = async (name: string) => {
  await settle(bed.reconciler, keyOf(def, name));
  await settle(bed.reconciler, keyOf(def, name));
};

const post = (path: string, body: unknown) => rawGoogleRequest(bed.fake.url, "POST", `iam/v1/${path}`, body);

describe("IAM ServiceAccount (a create whose whole request is the body)", () => {
  it("created with its accountId, named by its email; drift corrected; a changed accountId refused; deleted", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("sa");
    const accountId = `app-${Date.now().toString(36)}`.slice(0, 30);
    await kube.create(
      def,
      managedObject(def, name, PC, {
        forProvider: { accountId, displayName: "App", description: "runs the app" },
        connectionSecret: false,
      }),
    );
    await twice(name);
    const mr = await getMr<Json>(kube, def, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    const project = gcpProject();
    const email = `${accountId}@${project}.iam.gserviceaccount.com`;
    const full = `projects/${project}/serviceAccounts/${email}`;
    // The external name is the full name Google answers (its email), not the id it was created with.
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(full);
    expect(mr?.status?.atProvider).toMatchObject({ name: full, email, uniqueId: expect.any(String) });
    expect(bed.fake.resource(full)).toMatchObject({ displayName: "App", description: "runs the app", email });
    expect(bed.fake.resource(full)).not.toHaveProperty("accountId");

    // Drift (a console edit) is put back with the wrapped patch, only that field in the mask.
    bed.fake.mutate(full, { description: "console" });
    await twice(name);
    expect(bed.fake.resource(full)?.description).toBe("runs the app");
    expect(conditionOf(await getMr(kube, def, name), "Synced")).toMatchObject({ status: "True" });

    // A changed accountId is refused: Google cannot rename an account, and never answers the id.
    await kube.patch(def, name, { spec: { forProvider: { accountId: "other-account" } } });
    await bed.reconciler.reconcile(keyOf(def, name));
    const changed = await getMr<Json>(kube, def, name);
    expect(conditionOf(changed, "Synced"), JSON.stringify(changed?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("accountId"),
    });
    expect(bed.fake.resource(full)).toBeDefined();
    expect(
      bed.fake.resource(
        `projects/${project}/serviceAccounts/other-account@${project}.iam.gserviceaccount.com`,
      ),
    ).toBeUndefined();
    await kube.patch(def, name, { spec: { forProvider: { accountId } } });
    await twice(name);
    expect(conditionOf(await getMr(kube, def, name), "Synced")).toMatchObject({ status: "True" });

    // Import by the full name: a second managed resource observes the same account.
    const imported = uniqueName("sa-import");
    await kube.create(def, {
      ...managedObject(def, imported, PC, {
        forProvider: { accountId, displayName: "App", description: "runs the app" },
        connectionSecret: false,
      }),
      metadata: { name: imported, annotations: { [Annotations.externalName]: full } },
    } as never);
    await twice(imported);
    const imp = await getMr<Json>(kube, def, imported);
    expect(conditionOf(imp, "Ready"), JSON.stringify(imp?.status)).toMatchObject({ status: "True" });
    expect(imp?.status?.atProvider).toMatchObject({ email });
    await kube.patch(def, imported, { spec: { deletionPolicy: "Orphan" } });
    await kube.delete(def, imported);
    await twice(imported);
    expect(bed.fake.resource(full)).toBeDefined();

    await kube.delete(def, name);
    await twice(name);
    expect(await getMr(kube, def, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });

  it("a Compute Firewall's targetServiceAccountRefs fill targetServiceAccounts with the account's email", {
    timeout: 120_000,
  }, async () => {
    const [sa, fw] = [uniqueName("sa-fw"), uniqueName("fw-sa")];
    const accountId = `fw-${Date.now().toString(36)}`;
    await kube.create(
      def,
      managedObject(def, sa, PC, { forProvider: { accountId }, connectionSecret: false }),
    );
    await twice(sa);
    const email = `${accountId}@${gcpProject()}.iam.gserviceaccount.com`;
    await kube.create(
      firewall,
      managedObject(firewall, fw, PC, {
        forProvider: {
          network: `projects/${gcpProject()}/global/networks/default`,
          allowed: [{ IPProtocol: "tcp", ports: ["443"] }],
          targetServiceAccountRefs: [{ name: sa }],
        },
        connectionSecret: false,
      }),
    );
    await settle(bed.reconciler, keyOf(firewall, fw));
    await settle(bed.reconciler, keyOf(firewall, fw));
    const got = await getMr<Json>(kube, firewall, fw);
    expect(conditionOf(got, "Ready"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
    expect(got?.spec.forProvider.targetServiceAccounts).toEqual([email]);
    expect(
      bed.fake.resource(`/compute/v1/projects/${gcpProject()}/global/firewalls/${fw}`)?.targetServiceAccounts,
    ).toEqual([email]);
    await kube.delete(firewall, fw);
    await settle(bed.reconciler, keyOf(firewall, fw));
    await settle(bed.reconciler, keyOf(firewall, fw));
    await kube.delete(def, sa);
    await twice(sa);
    expect(await getMr(kube, def, sa)).toBeUndefined();
  });

  it("the fake refuses what Google refuses: unknown fields, OUTPUT_ONLY sent, a bad account id, a second create", async () => {
    const at = `projects/${gcpProject()}/serviceAccounts`;
    const unknownTop = await post(at, { accountId: "valid-one", serviceAccount: {}, extra: 1 });
    expect(unknownTop).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    expect(unknownTop.body.error?.message).toContain('Unknown name "extra"');
    const unknownInner = await post(at, { accountId: "valid-two", serviceAccount: { colour: "red" } });
    expect(unknownInner.status).toBe(400);
    expect(unknownInner.body.error?.message).toContain('Unknown name "colour"');
    const output = await post(at, { accountId: "valid-three", serviceAccount: { email: "x@y" } });
    expect(output.status).toBe(400);
    expect(output.body.error?.message).toContain("OUTPUT_ONLY");
    expect((await post(at, { serviceAccount: {} })).status).toBe(400);
    expect((await post(at, { accountId: "Bad_Id", serviceAccount: {} })).status).toBe(400);
    expect((await post(at, { accountId: "valid-four", serviceAccount: {} })).status).toBe(200);
    expect((await post(at, { accountId: "valid-four", serviceAccount: {} })).status).toBe(409);
  });
});
