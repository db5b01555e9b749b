import { beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { PROVIDER_CONFIG_FINALIZER } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { Forwarder } from "../../../shared/pipeline/forwarder.ts";
import { ProviderConfigUsers } from "../../../shared/pipeline/provider-config-users.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { type KnownUsers, ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { RecordingSink } from "../pipeline/helpers.ts";

const kube = newKube();
const pcType = providerConfigs.aws.type;
const newPcReconciler = (knownUsers?: KnownUsers) =>
  new ProviderConfigReconciler(kube, new KindRegistry(managedKinds), providerConfigKinds, {
    ...(knownUsers ? { knownUsers } : {}),
  });
const pcKey = (name: string) => ({
  apiVersion: `${pcType.group}/${pcType.version}`,
  kind: "ProviderConfig",
  name,
});
const createQueue = (name: string, providerConfig: string) =>
  kube.create(Queue, {
    apiVersion: Queue.apiVersion,
    kind: "Queue",
    metadata: { name },
    spec: { forProvider: {}, providerConfigRef: { name: providerConfig } },
  });
const readyOf = async (name: string) =>
  (
    await kube.get<{
      metadata: { name: string };
      status?: {
        users?: number;
        conditions?: Array<{ type: string; status: string; reason: string; message?: string }>;
      };
    }>(pcType, name)
  )?.status;

beforeAll(ensureCrds);

describe("AWS ProviderConfig health against the real API server and moto STS", () => {
  it("is Ready after a credential check and counts the managed resources using it", async () => {
    const name = uniqueName("pc-health");
    await createAwsProviderConfig(kube, name);
    for (const q of [uniqueName("q-user"), uniqueName("q-user")]) {
      await kube.create(Queue, {
        apiVersion: Queue.apiVersion,
        kind: "Queue",
        metadata: { name: q },
        spec: { forProvider: {}, providerConfigRef: { name } },
      });
    }

    const res = await newPcReconciler().reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: name,
    });

    expect(res).toMatchObject({ outcome: "ready", users: 2 });
    const status = await readyOf(name);
    expect(status?.users).toBe(2);
    expect(status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "True",
      reason: "Available",
    });
    expect(status?.conditions?.[0]?.message).toContain("credentials accepted");
  });

  it("reports credentials it cannot use, without echoing them", async () => {
    const name = uniqueName("pc-broken");
    await createAwsProviderConfig(kube, name, {
      credentials: "[default]\naws_access_key_id = AKIAHALFONLY\n",
    });
    const res = await newPcReconciler().reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: name,
    });
    expect(res.outcome).toBe("unready");
    const ready = (await readyOf(name))?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "CredentialsRefused" });
    expect(ready?.message).toContain("aws_secret_access_key");
    expect(ready?.message).not.toContain("AKIAHALFONLY");
  });

  it("holds its deletion while in use, with a clear message, and releases it when unused", async () => {
    const name = uniqueName("pc-inuse");
    await createAwsProviderConfig(kube, name);
    const q = uniqueName("q-holder");
    await kube.create(Queue, {
      apiVersion: Queue.apiVersion,
      kind: "Queue",
      metadata: { name: q },
      spec: { forProvider: {}, providerConfigRef: { name } },
    });
    const r = newPcReconciler();
    await r.reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: name,
    });
    expect((await kube.get(pcType, name))?.metadata.finalizers).toContain(PROVIDER_CONFIG_FINALIZER);

    await kube.delete(pcType, name);
    const held = await r.reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: name,
    });
    expect(held).toMatchObject({ outcome: "in-use", users: 1 });
    const ready = (await readyOf(name))?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.message).toContain("1 managed resource(s) still use this ProviderConfig");
    expect(await kube.get(pcType, name)).toBeDefined();

    await kube.delete(Queue, q);
    const released = await r.reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: name,
    });
    expect(released.outcome).toBe("released");
    expect(await kube.get(pcType, name)).toBeUndefined();
  });

  it("counts users from what the forwarder's watches know, and follows a user's deletion", async () => {
    const name = uniqueName("pc-known");
    await createAwsProviderConfig(kube, name);
    const users = new ProviderConfigUsers(managedKinds.map((k) => k.definition));
    const forwarder = new Forwarder({
      kube,
      types: [Queue],
      sink: new RecordingSink(),
      providerConfigUsers: users,
    });
    await forwarder.start();
    try {
      const [a, b] = [uniqueName("q-known"), uniqueName("q-known")];
      await createQueue(a, name);
      await createQueue(b, name);
      const target = { type: pcType, name };
      await eventually(async () => users.count(Queue, target) === 2, {
        what: "the watch to show both users",
      });
      const r = newPcReconciler(users);

      const before = await r.reconcile(pcKey(name));
      await kube.delete(Queue, a);
      await eventually(async () => users.count(Queue, target) === 1, {
        what: "the watch to show the deletion",
      });
      const after = await r.reconcile(pcKey(name));

      expect([before.users, after.users, (await readyOf(name))?.users]).toEqual([2, 1, 1]);
      await kube.delete(Queue, b);
    } finally {
      await forwarder.stop();
    }
  });

  it("lists every kind before it releases a ProviderConfig being deleted, whatever the known users say", async () => {
    const name = uniqueName("pc-stale");
    await createAwsProviderConfig(kube, name);
    const q = uniqueName("q-stale");
    await createQueue(q, name);
    // A cache that lags (or is wrong): it knows every kind and says nobody uses this ProviderConfig.
    const stale: KnownUsers = { count: () => 0 };
    const r = newPcReconciler(stale);
    const counted = await r.reconcile(pcKey(name));

    await kube.delete(pcType, name);
    const held = await r.reconcile(pcKey(name));

    expect([counted.users, held.outcome, held.users]).toEqual([0, "in-use", 1]);
    expect(await kube.get(pcType, name)).toBeDefined();
    await kube.delete(Queue, q);
    expect((await r.reconcile(pcKey(name))).outcome).toBe("released");
  });
});
