// A generated kind's home never moves silently (issue 36): a LogGroup Ready in us-east-1 whose spec then
// points to us-west-2, or to a ProviderConfig of another account, is refused — Synced=False naming the key
// and both values, a Warning event HomeChanged, no create in the new home — and set back it is in sync
// again. The Cloud Control fake keeps resources per account and region, as AWS does, so a read in the
// new home really finds nothing (the false green of the issue cannot hide).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../../shared/kube/events.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { awsccRegistry, awsccSpec, startFake } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

const kube = newKube();
const TYPE = "AWS::Logs::LogGroup";
const spec = awsccSpec(TYPE);
const def: ManagedKindDef = awsccKindOf(spec);
const PC = uniqueName("pc-home");
const OTHER_PC = uniqueName("pc-home-other");
// The fake's account of an access key `AKIA` + 12 digits is those digits (cloudcontrol-fake.ts).
const OTHER_ACCOUNT = "210987654321";
let fake: Awaited<ReturnType<typeof startFake>>;
let r: Reconciler;

interface FakeResource {
  identifier: string;
  account: string;
  region: string;
}
const inFake = async () =>
  (await (
    await fetch(`${fake.url}/__fake/resources?type=${encodeURIComponent(TYPE)}`)
  ).json()) as FakeResource[];

async function warnings(name: string) {
  const events = await coreApi(kube).listNamespacedEvent({ namespace: "default" });
  return events.items
    .filter((e) => e.involvedObject.name === name && e.type === "Warning")
    .map((e) => ({ reason: e.reason, message: e.message ?? "" }));
}

beforeAll(async () => {
  fake = await startFake();
  await ensureCrds();
  await installCrds(kube, [def]);
  await createAwsProviderConfig(kube, PC, { endpoint: fake.url });
  await createAwsProviderConfig(kube, OTHER_PC, {
    endpoint: fake.url,
    credentials: `[default]\naws_access_key_id = AKIA${OTHER_ACCOUNT}\naws_secret_access_key = other-secret\n`,
  });
  r = new Reconciler(kube, awsccRegistry([spec]), {
    creationGracePeriodMs: 0,
    events: new KubeEventRecorder(kube),
  });
}, 120_000);

afterAll(async () => {
  await removeCrds(kube, [def]);
  await fake?.close();
});

async function readyLogGroup() {
  const name = uniqueName("lg-home");
  await kube.create(
    def,
    managedObject(def, name, PC, {
      forProvider: { region: "us-east-1", retentionInDays: 7 },
      connectionSecret: false,
    }),
  );
  await settle(r, keyOf(def, name));
  const mr = await getMr(kube, def, name);
  expectAvailable(mr);
  return { name, externalName: mr?.metadata.annotations?.[Annotations.externalName] ?? "" };
}

describe("a generated kind's home", () => {
  it("is recorded at create: account from STS, region, endpoint", async () => {
    const { name } = await readyLogGroup();
    const mr = await getMr(kube, def, name);
    expect(JSON.parse(mr?.metadata.annotations?.[Annotations.home] ?? "{}")).toEqual({
      account: "123456789012",
      region: "us-east-1",
      endpoint: fake.url,
    });
  });

  it("refuses a changed region, creates nothing in the new one, and is in sync once set back", async () => {
    const { name, externalName } = await readyLogGroup();
    const creates = (await fake.requests()).CreateResource ?? 0;
    await kube.patch(def, name, { spec: { forProvider: { region: "us-west-2" } } });
    await settle(r, keyOf(def, name), 3);

    const mr = await getMr(kube, def, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced?.status).toBe("False");
    expect(synced?.reason).toBe("ReconcileError");
    expect(synced?.message).toContain('region "us-east-1"');
    expect(synced?.message).toContain('"us-west-2"');
    expect(await warnings(name)).toContainEqual(expect.objectContaining({ reason: "HomeChanged" }));
    expect((await fake.requests()).CreateResource ?? 0).toBe(creates);
    const mine = (await inFake()).filter((x) => x.identifier === externalName);
    expect(mine.map((x) => x.region)).toEqual(["us-east-1"]);

    await kube.patch(def, name, { spec: { forProvider: { region: "us-east-1" } } });
    await settle(r, keyOf(def, name));
    expectAvailable(await getMr(kube, def, name));
  });

  it("refuses a providerConfigRef switched to another account's ProviderConfig", async () => {
    const { name, externalName } = await readyLogGroup();
    const creates = (await fake.requests()).CreateResource ?? 0;
    await kube.patch(def, name, { spec: { providerConfigRef: { name: OTHER_PC } } });
    await settle(r, keyOf(def, name), 3);

    const synced = conditionOf(await getMr(kube, def, name), "Synced");
    expect(synced?.status).toBe("False");
    expect(synced?.message).toContain('account "123456789012"');
    expect(synced?.message).toContain(`"${OTHER_ACCOUNT}"`);
    expect(await warnings(name)).toContainEqual(expect.objectContaining({ reason: "HomeChanged" }));
    expect((await fake.requests()).CreateResource ?? 0).toBe(creates);
    expect((await inFake()).filter((x) => x.identifier === externalName).map((x) => x.account)).toEqual([
      "123456789012",
    ]);

    await kube.patch(def, name, { spec: { providerConfigRef: { name: PC } } });
    await settle(r, keyOf(def, name));
    expectAvailable(await getMr(kube, def, name));
  });
});
