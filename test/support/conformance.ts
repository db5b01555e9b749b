import { beforeAll, describe, expect, it } from "vitest";
import type { ManagedResource } from "../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER, type ResourceType } from "../../shared/api/meta.ts";
import { Kube, KubeError, type KubeObject } from "../../shared/kube/client.ts";
import type { ReconcileResult, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { createAwsProviderConfig, ensureCrds } from "./aws.ts";
import type { AzureProviderConfigOptions } from "./azure.ts";
import { eventually, kubeConfig, newKube, uniqueName } from "./env.ts";
import type { GcpProviderConfigOptions } from "./gcp.ts";
import { captureLogger, conditionOf, getMr, keyOf, newReconciler, settle } from "./reconcile.ts";
import type { Reconciler } from "./routed.ts";

/** A managed kind as tests address it: its resource type plus apiVersion. */
export type ManagedType = ResourceType & { apiVersion: string };

/** The behaviours every managed kind shares, proved once here for each kind. */
export type Behaviour =
  | "paused"
  | "emptyPolicies"
  | "inSync"
  | "externalName"
  | "delete"
  | "orphan"
  | "concurrentCreate"
  | "crashRecovery"
  | "import"
  | "importMissing"
  | "missingProviderConfig";

export interface MrOptions {
  forProvider?: Record<string, unknown>;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  /** Extra spec fields (managementPolicies, deletionPolicy, providerConfigRef …). */
  spec?: Record<string, unknown>;
  providerConfig?: string;
  /** Write the connection Secret to default/<name>-conn (default true). */
  connectionSecret?: boolean;
}

/** A managed resource object the way users write one. */
export function managedObject(t: ManagedType, name: string, pc: string, o: MrOptions = {}) {
  return {
    apiVersion: t.apiVersion,
    kind: t.kind,
    metadata: {
      name,
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.labels ? { labels: o.labels } : {}),
    },
    spec: {
      forProvider: o.forProvider ?? {},
      providerConfigRef: { name: o.providerConfig ?? pc },
      ...(o.connectionSecret === false
        ? {}
        : { writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` } }),
      ...o.spec,
    },
  };
}

/** Ready=True Available, Synced=True ReconcileSuccess, our finalizer, and the external name if given. */
export function expectAvailable(mr: ManagedResource | undefined, externalName?: string) {
  expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
  expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True", reason: "ReconcileSuccess" });
  if (externalName !== undefined)
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(externalName);
  expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
}

/** The connection Secret default/<name>-conn is owned by the managed resource (garbage-collected with it). */
export async function expectSecretOwnedBy(kube: Kube, mr: ManagedResource | undefined) {
  const secret = await kube.getSecret("default", `${mr?.metadata.name}-conn`);
  expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
    kind: mr?.kind,
    name: mr?.metadata.name,
    uid: mr?.metadata.uid,
  });
}

/** The decoded data of default/<mr name>-conn. */
export async function connectionData(kube: Kube, mrName: string) {
  const secret = await kube.getSecret("default", `${mrName}-conn`);
  return Object.fromEntries(
    Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]),
  );
}

type ProviderConfigOptions = {
  aws: { credentials?: string; secretKey?: string };
  gcp: GcpProviderConfigOptions;
  azure: AzureProviderConfigOptions;
};

/**
 * Registers a beforeAll that applies the CRDs and creates a ProviderConfig for `cloud`; returns its name.
 * The GCP and Azure helpers are imported on use: an AWS suite does not load their SDKs.
 */
export function useProviderConfig<C extends keyof ProviderConfigOptions>(
  cloud: C,
  prefix: string,
  opts: ProviderConfigOptions[C] = {},
): string {
  const name = uniqueName(prefix);
  const kube = newKube();
  beforeAll(async () => {
    await ensureCrds();
    if (cloud === "aws") await createAwsProviderConfig(kube, name, opts as ProviderConfigOptions["aws"]);
    else if (cloud === "gcp")
      await (await import("./gcp.ts")).createGcpProviderConfig(kube, name, opts as GcpProviderConfigOptions);
    else
      await (await import("./azure.ts")).createAzureProviderConfig(
        kube,
        name,
        opts as AzureProviderConfigOptions,
      );
  });
  return name;
}

export interface CheckContext {
  kube: Kube;
  name: string;
  /** The cloud name when it differs from the object's name (external-name, import). */
  cloudName: string;
  r: Reconciler;
}

export interface ManagedKindFixture {
  type: ManagedType;
  /** What the kind runs against, for the suite's title ("moto", "the Pub/Sub emulator" …). */
  cloud: string;
  /** Prefix of generated names; must make valid cloud names with uniqueName. */
  prefix: string;
  /** The ProviderConfig every generic test uses (e.g. from useProviderConfig). */
  providerConfig: string;
  /** Whether the test objects write a connection Secret (then it is read on every reconcile). */
  connectionSecret: boolean;
  /** A minimal valid forProvider for `behaviour`; may arrange prerequisites in the cloud. Default {}. */
  forProvider?: (
    behaviour: Behaviour,
    name: string,
  ) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Whether a resource with this cloud name exists, asked with the real SDK. */
  exists: (cloudName: string) => Promise<boolean>;
  /** How many cloud resources carry this name (a crash must not leave a second one). */
  count?: (cloudName: string) => Promise<number>;
  /**
   * Set for kinds whose cloud chooses the id (recorded as the external name): the ids of the cloud
   * resources tagged as owned by the object with this uid. Then external-name means adoption.
   */
  owned?: (uid: string) => Promise<string[]>;
  /** Provider-chosen ids: an existing resource the external name names is adopted, never created. */
  adopt?: {
    /** Makes the resource in the cloud; returns its id. */
    arrange: () => Promise<string>;
    forProvider: Record<string, unknown>;
    check?: (ctx: CheckContext) => Promise<void>;
  };
  /** The cloud requests (request key → count) made while `fn` runs, from a counting proxy or fake. */
  requests?: {
    during: (fn: () => Promise<unknown>) => Promise<Record<string, number>>;
    /** Whether a request is one observing may make; any other is a write observe-only must never send. */
    isRead: (requestKey: string) => boolean;
  };
  /** Reconciles a deleted object to its end (default settle); long-running deletes poll. */
  settleDelete?: (r: Reconciler, key: ResourceKey) => Promise<ReconcileResult[]>;
  /** A long-running delete is sent again on each reconcile until the resource is gone (ARM: idempotent). */
  deleteRepeatsUntilGone?: boolean;
  /** The exact cloud requests of an in-sync reconcile, when the kind counts them. */
  inSyncRequests?: Record<string, number>;
  /** Observe-only import of an existing resource; false: the kind cannot be imported at all. */
  import?:
    | false
    | {
        /** Makes the resource in the cloud behind driftless's back; returns its id if the cloud chose it. */
        arrange: (cloudName: string) => Promise<unknown>;
        forProvider?: Record<string, unknown>;
        /** Asserts what [Observe, LateInitialize] filled into the spec. */
        expectSpec: (forProvider: Record<string, unknown>, ctx: CheckContext) => void | Promise<void>;
        /** A spec change that observe-only must never apply. */
        change: Record<string, unknown>;
        /** Asserts the cloud still holds what `arrange` made. */
        expectUnchanged: (cloudName: string) => Promise<void>;
        /** Runs at the end, after the object is gone (kind-specific checks, cloud clean-up). */
        after?: (ctx: CheckContext) => Promise<void>;
      };
  /** A forProvider the CRD's schema refuses, and the field the API server's 422 must name. */
  invalidSpec?: { forProvider: Record<string, unknown>; field: string };
  /** Kind-specific assertions appended to a generic behaviour. */
  checks?: Partial<Record<Behaviour, (ctx: CheckContext) => Promise<void>>>;
  /** Clean-up of cloud resources a behaviour leaves behind on purpose (orphan). */
  cleanup?: (cloudName: string) => Promise<void>;
  /** Behaviours the kind's own file proves in a form with its cloud's quirks, with the reason. */
  ownTests?: Partial<Record<Behaviour, string>>;
}

/** The API server refuses the write that records a successful create: the state a crash at that point leaves. */
export class CrashBeforeSucceeded extends Kube {
  override async patch<T extends KubeObject>(...args: Parameters<Kube["patch"]>): Promise<T> {
    const annotations = (args[2].metadata as { annotations?: Record<string, string> } | undefined)
      ?.annotations;
    if (annotations?.[Annotations.createSucceeded]) throw new KubeError("injected crash", 503);
    return super.patch<T>(...args);
  }
}

const NO_CALLS = { observe: 0, observeMany: 0, create: 0, update: 0, delete: 0 };

/**
 * The generic managed-resource behaviours (Crossplane's managed reconciler semantics) against the real
 * API server and the kind's emulator: each kind's own file keeps only its field mapping and cloud quirks.
 */
export function describeManagedKind(fx: ManagedKindFixture) {
  const kube = newKube();
  const t = fx.type;
  const key = (name: string) => keyOf(t, name);
  const object = (name: string, o: MrOptions = {}) =>
    managedObject(t, name, fx.providerConfig, { connectionSecret: fx.connectionSecret, ...o });
  const forProvider = async (b: Behaviour, name: string) => (await fx.forProvider?.(b, name)) ?? {};
  const requestsDuring = async (fn: () => Promise<unknown>) => {
    if (fx.requests) return fx.requests.during(fn);
    await fn();
    return undefined;
  };
  const settleDelete = (r: Reconciler, name: string) => (fx.settleDelete ?? settle)(r, key(name));
  const check = async (b: Behaviour, ctx: CheckContext) => fx.checks?.[b]?.(ctx);
  const runs = (b: Behaviour) => !fx.ownTests?.[b];
  const secretOf = (name: string) => kube.getSecret("default", `${name}-conn`);
  const externalNameOf = async (name: string) =>
    (await getMr(kube, t, name))?.metadata.annotations?.[Annotations.externalName] ?? "";
  /** Nothing exists in the cloud for the object `name` (which still exists). */
  const expectNothingCreated = async (name: string) => {
    if (fx.owned) expect(await fx.owned((await getMr(kube, t, name))?.metadata.uid ?? "")).toEqual([]);
    else expect(await fx.exists(name)).toBe(false);
  };

  describe(`${t.kind} (${t.apiVersion}) conformance against the real API server and ${fx.cloud}`, () => {
    if (runs("paused"))
      it("makes no cloud calls at all while paused", async () => {
        const name = uniqueName(`${fx.prefix}-paused`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("paused", name),
            annotations: { [Annotations.paused]: "true" },
          }),
        );

        let outcome = "";
        const requests = await requestsDuring(async () => {
          outcome = (await r.reconcile(key(name))).outcome;
        });

        expect(outcome).toBe("paused");
        if (requests) expect(requests).toEqual({});
        expect(r.externalCalls).toEqual(NO_CALLS);
        expect(conditionOf(await getMr(kube, t, name), "Synced")).toMatchObject({
          status: "False",
          reason: "ReconcilePaused",
        });
        await expectNothingCreated(name);
      });

    if (runs("emptyPolicies"))
      it("treats empty management policies as paused", async () => {
        const name = uniqueName(`${fx.prefix}-nopolicies`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("emptyPolicies", name),
            spec: { managementPolicies: [] },
          }),
        );

        const res = await r.reconcile(key(name));

        expect(res.outcome).toBe("paused");
        expect(r.externalCalls).toEqual(NO_CALLS);
        await expectNothingCreated(name);
      });

    if (runs("inSync"))
      it(`makes zero API-server writes, ${fx.connectionSecret ? "two GETs (object and connection Secret)" : "one GET"} and one cloud read when in sync`, async () => {
        const name = uniqueName(`${fx.prefix}-insync`);
        const r = newReconciler(kube);
        await kube.create(t, object(name, { forProvider: await forProvider("inSync", name) }));
        await settle(r, key(name));

        const counted = new Kube(kubeConfig());
        const r2 = newReconciler(counted);
        await r2.reconcile(key(name)); // warms the ProviderConfig/credentials caches
        counted.resetStats();
        let outcome = "";
        const requests = await requestsDuring(async () => {
          outcome = (await r2.reconcile(key(name))).outcome;
        });

        expect(outcome).toBe("in-sync");
        expect(counted.stats.writes).toBe(0);
        // The object, and its connection Secret: read every time, so one deleted by hand is repaired.
        expect(counted.stats.gets).toBe(fx.connectionSecret ? 2 : 1);
        // One cloud read per reconcile (the warm-up and this one), nothing else.
        expect(r2.externalCalls).toEqual({ observe: 2, observeMany: 0, create: 0, update: 0, delete: 0 });
        if (fx.inSyncRequests) expect(requests).toEqual(fx.inSyncRequests);
        await check("inSync", { kube, name, cloudName: name, r: r2 });
      });

    const adopt = fx.adopt;
    if (runs("externalName") && !fx.owned)
      it("names the cloud resource after the external-name annotation", async () => {
        const name = uniqueName(`${fx.prefix}-extname`);
        const cloudName = uniqueName(`${fx.prefix}-cloud-name`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("externalName", name),
            annotations: { [Annotations.externalName]: cloudName },
          }),
        );

        await settle(r, key(name));

        expect(await fx.exists(cloudName)).toBe(true);
        expect(await fx.exists(name)).toBe(false);
        await check("externalName", { kube, name, cloudName, r });
      });
    if (runs("externalName") && fx.owned && adopt)
      it("adopts the resource the external name names instead of creating one", async () => {
        const cloudName = await adopt.arrange();
        const name = uniqueName(`${fx.prefix}-extname`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: adopt.forProvider,
            annotations: { [Annotations.externalName]: cloudName },
          }),
        );

        await settle(r, key(name));

        expect(r.externalCalls.create).toBe(0);
        expect(conditionOf(await getMr(kube, t, name), "Ready")?.status).toBe("True");
        await adopt.check?.({ kube, name, cloudName, r });
        await kube.delete(t, name);
        await settle(r, key(name));
        expect(await fx.exists(cloudName)).toBe(false);
      });

    if (runs("delete"))
      it("deletes the cloud resource, then removes the finalizer (deletionPolicy Delete)", async () => {
        const name = uniqueName(`${fx.prefix}-delete`);
        const r = newReconciler(kube);
        await kube.create(t, object(name, { forProvider: await forProvider("delete", name) }));
        await settle(r, key(name));
        if (fx.connectionSecret) expect(await secretOf(name)).toBeDefined();

        await kube.delete(t, name);
        // Held by the finalizer until the cloud is clean.
        expect((await getMr(kube, t, name))?.metadata.deletionTimestamp).toBeDefined();
        const results = await settleDelete(r, name);

        expect(results.map((x) => x.outcome)).toEqual(expect.arrayContaining(["deleting", "deleted"]));
        if (fx.deleteRepeatsUntilGone) expect(r.externalCalls.delete).toBeGreaterThanOrEqual(1);
        else expect(r.externalCalls.delete).toBe(1);
        expect(await fx.exists(name)).toBe(false);
        expect(await getMr(kube, t, name)).toBeUndefined();
        expect(await secretOf(name)).toBeUndefined();
        await check("delete", { kube, name, cloudName: name, r });
      });

    if (runs("orphan"))
      it("keeps the cloud resource with deletionPolicy Orphan", async () => {
        const name = uniqueName(`${fx.prefix}-orphan`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("orphan", name),
            spec: { deletionPolicy: "Orphan" },
          }),
        );
        await settle(r, key(name));
        const cloudName = await externalNameOf(name);

        await kube.delete(t, name);
        const results = await settle(r, key(name));

        expect(results.at(-1)?.outcome).toBe("orphaned");
        expect(r.externalCalls.delete).toBe(0);
        expect(await getMr(kube, t, name)).toBeUndefined();
        expect(await fx.exists(cloudName)).toBe(true);
        expect(await secretOf(name)).toBeUndefined();
        await check("orphan", { kube, name, cloudName, r });
        await fx.cleanup?.(cloudName);
      });

    if (runs("concurrentCreate"))
      it("calls Create exactly once for 20 concurrent reconciles of one new object", async () => {
        const name = uniqueName(`${fx.prefix}-concurrent`);
        await kube.create(t, object(name, { forProvider: await forProvider("concurrentCreate", name) }));
        // 20 independent workers (own reconciler and API client each), as 20 Lambda containers would be.
        const workers = Array.from({ length: 20 }, () => newReconciler(new Kube(kubeConfig())));

        await Promise.all(workers.map((w) => w.reconcile(key(name))));
        await Promise.all(workers.map((w) => settle(w, key(name))));
        // `settle` reconciles again at once, whatever delay the result asks for; a cloud whose create
        // completes by time (an ARM long-running operation) may need longer than its ten rounds.
        const mr = await eventually(
          async () => {
            await workers[0]?.reconcile(key(name));
            const got = await getMr(kube, t, name);
            return conditionOf(got, "Ready")?.status === "True" ? got : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 250, what: `${name} Ready after the concurrent reconciles` },
        );

        expect(workers.reduce((n, w) => n + w.externalCalls.create, 0)).toBe(1);
        if (fx.count) expect(await fx.count(name)).toBe(1);
        const cloudName = mr?.metadata.annotations?.[Annotations.externalName] ?? "";
        if (fx.owned) expect(await fx.owned(mr?.metadata.uid ?? "")).toEqual([cloudName]);
        await check("concurrentCreate", { kube, name, cloudName, r: workers[0] as Reconciler });
      });

    if (runs("crashRecovery"))
      it("recovers from a crash after Create and before the succeeded annotation without a second resource", async () => {
        const name = uniqueName(`${fx.prefix}-crash`);
        await kube.create(t, object(name, { forProvider: await forProvider("crashRecovery", name) }));
        const crashing = newReconciler(new CrashBeforeSucceeded(kubeConfig()), {
          random: () => 0,
          retryBaseMs: 1, // the refused write is retried: no need to wait 1.5 s for it to give up
        });
        const first = await crashing.reconcile(key(name));
        expect(first.outcome).toBe("error");
        expect(crashing.externalCalls.create).toBe(1);
        const stuck = await getMr(kube, t, name);
        expect(stuck?.metadata.annotations?.[Annotations.createPending]).toBeDefined();
        expect(stuck?.metadata.annotations?.[Annotations.createSucceeded]).toBeUndefined();

        const { lines, logger } = captureLogger();
        const restarted = newReconciler(kube, { logger });
        await settle(restarted, key(name));

        expect(restarted.externalCalls.create).toBe(0);
        expect(lines.join("\n")).toContain("recovered an interrupted create");
        const mr = await getMr(kube, t, name);
        expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
        expect(conditionOf(mr, "Ready")?.status).toBe("True");
        if (fx.count) expect(await fx.count(name)).toBe(1);
        else expect(await fx.exists(name)).toBe(true);
        await check("crashRecovery", { kube, name, cloudName: name, r: restarted });
      });

    if (runs("missingProviderConfig"))
      it("names the ProviderConfig when it is missing, and creates nothing", async () => {
        const name = uniqueName(`${fx.prefix}-nopc`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("missingProviderConfig", name),
            providerConfig: "does-not-exist",
          }),
        );

        const [res] = await settle(r, key(name), 1);

        expect(res?.outcome).toBe("error");
        const synced = conditionOf(await getMr(kube, t, name), "Synced");
        expect(synced).toMatchObject({ status: "False", reason: "ReconcileError" });
        expect(synced?.message).toContain('ProviderConfig "does-not-exist"');
        expect(synced?.message).toContain("not found");
        expect(r.externalCalls).toEqual(NO_CALLS);
        await expectNothingCreated(name);
      });

    const invalid = fx.invalidSpec;
    if (invalid)
      it(`rejects an invalid spec at the API server, naming ${invalid.field}`, async () => {
        const name = uniqueName(`${fx.prefix}-invalid`);
        const err = await kube.create(t, object(name, { forProvider: invalid.forProvider })).catch((e) => e);
        expect(err).toBeInstanceOf(KubeError);
        expect((err as KubeError).status).toBe(422);
        expect((err as Error).message).toContain(invalid.field);
      });

    const imp = fx.import;
    if (imp && runs("import"))
      it("imports an existing resource observe-only: fills the spec ([Observe, LateInitialize]), never modifies or deletes it", async () => {
        const wanted = uniqueName(`${fx.prefix}-import-cloud`);
        const chosen = await imp.arrange(wanted);
        const cloudName = typeof chosen === "string" ? chosen : wanted;
        const name = uniqueName(`${fx.prefix}-import`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: imp.forProvider ?? {},
            annotations: { [Annotations.externalName]: cloudName },
            spec: { managementPolicies: ["Observe", "LateInitialize"] },
          }),
        );
        const ctx = { kube, name, cloudName, r };

        // Neither the import, nor a spec change, nor the deletion may reach the cloud but with reads.
        const requests = await requestsDuring(async () => {
          await settle(r, key(name));
          const mr = await getMr<Record<string, unknown>>(kube, t, name);
          await imp.expectSpec(mr?.spec.forProvider ?? {}, ctx);
          expect(conditionOf(mr, "Ready")?.status).toBe("True");
          await check("import", ctx);

          await kube.patch(t, name, { spec: { forProvider: imp.change } });
          await settle(r, key(name));
          await kube.delete(t, name);
          await settle(r, key(name));
        });
        if (requests && fx.requests)
          expect(Object.keys(requests).filter((k) => !fx.requests?.isRead(k))).toEqual([]);
        await imp.expectUnchanged(cloudName);
        expect(await getMr(kube, t, name)).toBeUndefined();
        expect(await fx.exists(cloudName)).toBe(true);
        expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
        await imp.after?.(ctx);
      });

    if (fx.import !== false && runs("importMissing"))
      it("reports observe-only import of a resource that does not exist: blocked, Synced=False", async () => {
        const name = uniqueName(`${fx.prefix}-import-missing`);
        const r = newReconciler(kube);
        await kube.create(
          t,
          object(name, {
            forProvider: await forProvider("importMissing", name),
            spec: { managementPolicies: ["Observe"] },
          }),
        );

        const [res] = await settle(r, key(name), 1);

        expect(res?.outcome).toBe("blocked"); // looked at again at the poll interval, not a failing message
        const synced = conditionOf(await getMr(kube, t, name), "Synced");
        expect(synced?.status).toBe("False");
        expect(synced?.message).toContain("external resource does not exist");
        expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
        await expectNothingCreated(name);
      });
  });
}
