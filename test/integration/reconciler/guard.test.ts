import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { managedCrd } from "../../../shared/api/crd.ts";
import type {
  ExternalClient,
  ExternalObservation,
  ManagedKindProvider,
} from "../../../shared/api/external.ts";
import { defineManagedKind, type ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import type { ReconcilerOptions } from "../../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { CrashBeforeSucceeded } from "../../support/conformance.ts";
import { eventually, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

// A test-only kind whose cloud chooses the name (like an EC2 VPC's vpc-… id), backed by an in-memory cloud.
const WidgetForProvider = z.object({ size: z.number().int().min(1).optional() });
const WidgetAtProvider = z.object({ id: z.string().optional() });
type F = z.infer<typeof WidgetForProvider>;
type A = z.infer<typeof WidgetAtProvider>;

const Widget = defineManagedKind({
  group: "guardtest.aws",
  kind: "Widget",
  cloud: "aws",
  description: "A test-only widget whose id the in-memory cloud chooses on create.",
  forProvider: WidgetForProvider,
  atProvider: WidgetAtProvider,
  externalName: "providerChosen",
});

/** The in-memory cloud: widgets by id, every call counted, failures injected per test. */
class WidgetCloud {
  readonly widgets = new Map<string, { size: number; owner: string; ownerUid: string }>();
  readonly calls = { observe: 0, create: 0, update: 0, delete: 0 };
  failNextCreate: Error | undefined;
  /** While set, create waits for it: a slow create another worker can overlap with. */
  createGate: Promise<void> | undefined;
  /** Like a provider that tags what it creates with the managed resource's uid and looks it up by the tag. */
  findsByOwnerTag = false;

  client(): ExternalClient<F, A> {
    return {
      observe: async (mr, name): Promise<ExternalObservation<F, A>> => {
        this.calls.observe++;
        const tagged = [...this.widgets].find(([, w]) => w.ownerUid === mr.metadata.uid)?.[0];
        const id = name ?? (this.findsByOwnerTag ? tagged : undefined);
        const w = id ? this.widgets.get(id) : undefined;
        if (!w || !id) return { resourceExists: false };
        return {
          resourceExists: true,
          observed: { size: w.size },
          atProvider: { id },
          connectionDetails: { id },
          ...(id !== name ? { externalName: id } : {}),
        };
      },
      create: async (mr: ManagedResource<F, A>) => {
        this.calls.create++;
        const err = this.failNextCreate;
        this.failNextCreate = undefined;
        if (err) throw err;
        await this.createGate;
        const id = `w-${randomBytes(6).toString("hex")}`;
        this.widgets.set(id, {
          size: mr.spec.forProvider.size ?? 1,
          owner: mr.metadata.name,
          ownerUid: mr.metadata.uid ?? "",
        });
        return { externalName: id };
      },
      update: async (mr, id) => {
        this.calls.update++;
        const w = this.widgets.get(id);
        if (w) w.size = mr.spec.forProvider.size ?? w.size;
        return {};
      },
      delete: async (_mr, id) => {
        this.calls.delete++;
        this.widgets.delete(id);
      },
    };
  }

  ownedBy(name: string) {
    return [...this.widgets].filter(([, w]) => w.owner === name).map(([id]) => id);
  }
}

const kube = newKube();
const PC = uniqueName("pc-guard");

function newWidgetReconciler(cloud: WidgetCloud, k: Kube = kube, opts: ReconcilerOptions = {}) {
  const provider: ManagedKindProvider<F, A> = { definition: Widget, connect: async () => cloud.client() };
  return new Reconciler(k, new KindRegistry([provider as ManagedKindProvider]), opts);
}

const widgetObject = (name: string, annotations: Record<string, string> = {}) => ({
  apiVersion: Widget.apiVersion,
  kind: Widget.kind,
  metadata: { name, annotations },
  spec: { forProvider: { size: 2 }, providerConfigRef: { name: PC } },
});

beforeAll(async () => {
  // The ProviderConfig CRD too: this file must not depend on another having installed it.
  await ensureCrds();
  await applyCrds(kubeConfig(), [managedCrd(Widget)]);
  await createAwsProviderConfig(kube, PC);
});

describe("create-pending guard for a provider-chosen name, against the real API server", () => {
  it("writes the name the cloud chose to crossplane.io/external-name", async () => {
    const name = uniqueName("w-named");
    const cloud = new WidgetCloud();
    const r = newWidgetReconciler(cloud);
    await kube.create(Widget, widgetObject(name));

    await settle(r, keyOf(Widget, name));

    const ids = cloud.ownedBy(name);
    expect(ids).toHaveLength(1);
    const mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(ids[0]);
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
    expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
    expect(mr?.status?.atProvider).toEqual({ id: ids[0] });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
    expect(cloud.calls.create).toBe(1);
  });

  it("does not default the external name to metadata.name before the cloud chose one", async () => {
    const name = uniqueName("w-noname");
    const cloud = new WidgetCloud();
    cloud.failNextCreate = new Error("quota exceeded");
    const r = newWidgetReconciler(cloud);
    await kube.create(Widget, widgetObject(name));

    await r.reconcile(keyOf(Widget, name));

    expect(
      (await getMr(kube, Widget, name))?.metadata.annotations?.[Annotations.externalName],
    ).toBeUndefined();
  });

  it("after a crash between Create and recording it: never creates again, says how to proceed, continues once the name is set", async () => {
    const name = uniqueName("w-crash");
    const cloud = new WidgetCloud();
    await kube.create(Widget, widgetObject(name));
    const crashing = newWidgetReconciler(cloud, new CrashBeforeSucceeded(kubeConfig()), { random: () => 0 });

    const first = await crashing.reconcile(keyOf(Widget, name));

    expect(first.outcome).toBe("error");
    expect(cloud.calls.create).toBe(1);
    const [createdId] = cloud.ownedBy(name);
    let mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.createPending]).toBeDefined();
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeUndefined();
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBeUndefined();

    // Restarted workers: a prompt retry waits (the create may still be in flight elsewhere); one after the
    // pending timeout blocks. Neither creates a second widget.
    const restarted = newWidgetReconciler(cloud);
    const late = newWidgetReconciler(cloud, kube, { createPendingTimeoutMs: 0 });
    const again = await restarted.reconcile(keyOf(Widget, name));
    const later = await late.reconcile(keyOf(Widget, name));

    expect(again.outcome).toBe("creating");
    expect(later.outcome).toBe("blocked");
    expect(cloud.calls.create).toBe(1);
    expect(cloud.widgets.size).toBe(1);
    mr = await getMr(kube, Widget, name);
    const synced = conditionOf(mr, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced?.message).toContain("cannot determine creation result");
    expect(synced?.message).toContain(Annotations.externalName);
    expect(synced?.message).toContain(Annotations.createPending);

    // The user finds the widget in the cloud and names it: driftless records the create and carries on.
    await kube.patch(Widget, name, { metadata: { annotations: { [Annotations.externalName]: createdId } } });
    const { lines, logger } = captureLogger();
    const resumed = newWidgetReconciler(cloud, kube, { logger });
    await settle(resumed, keyOf(Widget, name));

    expect(cloud.calls.create).toBe(1);
    expect(lines.join("\n")).toContain("recovered an interrupted create");
    mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(mr?.status?.atProvider).toEqual({ id: createdId });
  });

  it("after a crash, records the id a provider finds by its ownership tag, without creating again", async () => {
    const name = uniqueName("w-tagged");
    const cloud = new WidgetCloud();
    cloud.findsByOwnerTag = true;
    await kube.create(Widget, widgetObject(name));
    const crashing = newWidgetReconciler(cloud, new CrashBeforeSucceeded(kubeConfig()), { random: () => 0 });
    expect((await crashing.reconcile(keyOf(Widget, name))).outcome).toBe("error");
    const [createdId] = cloud.ownedBy(name);

    const restarted = newWidgetReconciler(cloud);
    const results = await settle(restarted, keyOf(Widget, name));

    expect(results.map((r) => r.outcome)).not.toContain("blocked");
    expect(cloud.calls.create).toBe(1);
    const mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(createdId);
    expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
  });

  it("creates once the user removes the pending annotation of a create that never reached the cloud", async () => {
    const name = uniqueName("w-pending");
    const cloud = new WidgetCloud();
    // A worker recorded its intent and died before calling the cloud.
    await kube.create(Widget, widgetObject(name, { [Annotations.createPending]: new Date().toISOString() }));
    const r = newWidgetReconciler(cloud, kube, { createPendingTimeoutMs: 0 });

    const blocked = await r.reconcile(keyOf(Widget, name));
    expect(blocked.outcome).toBe("blocked");
    expect(cloud.calls.create).toBe(0);

    await kube.patch(Widget, name, { metadata: { annotations: { [Annotations.createPending]: null } } });
    await settle(r, keyOf(Widget, name));

    expect(cloud.calls.create).toBe(1);
    const [id] = cloud.ownedBy(name);
    const mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(id);
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
  });

  it("after a failed create: records the failure, reports it, and creates on the next reconcile", async () => {
    const name = uniqueName("w-failed");
    const cloud = new WidgetCloud();
    cloud.failNextCreate = new Error("quota exceeded for widgets");
    const r = newWidgetReconciler(cloud);
    await kube.create(Widget, widgetObject(name));

    const first = await r.reconcile(keyOf(Widget, name));

    expect(first.outcome).toBe("error");
    let mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.createFailed]).toBeDefined();
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "False", reason: "Creating" });
    expect(conditionOf(mr, "Synced")).toMatchObject({
      status: "False",
      reason: "ReconcileError",
      message: "cannot create external resource: quota exceeded for widgets",
    });
    expect(cloud.widgets.size).toBe(0);

    await settle(r, keyOf(Widget, name));

    expect(cloud.calls.create).toBe(2);
    const [id] = cloud.ownedBy(name);
    mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(id);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
  });

  it("creates exactly one widget for 10 concurrent reconciles of one new object", async () => {
    const name = uniqueName("w-concurrent");
    const cloud = new WidgetCloud();
    await kube.create(Widget, widgetObject(name));
    const workers = Array.from({ length: 10 }, () => newWidgetReconciler(cloud, new Kube(kubeConfig())));

    await Promise.all(workers.map((w) => w.reconcile(keyOf(Widget, name))));
    await settle(workers[0] as Reconciler, keyOf(Widget, name));

    expect(cloud.calls.create).toBe(1);
    expect(cloud.ownedBy(name)).toHaveLength(1);
    const mr = await getMr(kube, Widget, name);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(cloud.ownedBy(name)[0]);
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
  });

  it("a duplicate delivery during a slow create neither creates again nor leaves the resource unsynced", async () => {
    const name = uniqueName("w-overlap");
    const cloud = new WidgetCloud();
    let release = () => {};
    cloud.createGate = new Promise<void>((r) => {
      release = r;
    });
    await kube.create(Widget, widgetObject(name));
    const first = newWidgetReconciler(cloud, new Kube(kubeConfig()));
    const second = newWidgetReconciler(cloud, new Kube(kubeConfig()));

    const inFlight = first.reconcile(keyOf(Widget, name));
    await eventually(async () => cloud.calls.create === 1, { what: "the first worker to call create" });
    const overlapping = await second.reconcile(keyOf(Widget, name));
    release();
    expect((await inFlight).outcome).toBe("created");
    await settle(first, keyOf(Widget, name));

    // The second worker saw a create in progress: it must not create (it may wait or report it).
    expect(["blocked", "creating"]).toContain(overlapping.outcome);
    expect(cloud.calls.create).toBe(1);
    expect(cloud.ownedBy(name)).toHaveLength(1);
    const mr = await getMr(kube, Widget, name);
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
    expect(conditionOf(mr, "Ready")?.status).toBe("True");
  });
});
