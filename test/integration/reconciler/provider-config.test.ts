import { beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { PROVIDER_CONFIG_FINALIZER } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";

const kube = newKube();
const pcType = providerConfigs.aws.type;
const newPcReconciler = () =>
  new ProviderConfigReconciler(kube, new KindRegistry(managedKinds), providerConfigKinds);
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
});
