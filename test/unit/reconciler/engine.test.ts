// The engine table, in crossplane-runtime's style: each row is one behaviour of the generic managed
// reconciler, run against an in-memory API server and a fake cloud that can lag, hold a create in
// flight, or fail on demand. Emulators are strongly consistent and fast; races and eventual consistency
// show only here. Rows run in milliseconds.
import { describe, expect, it } from "vitest";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Reason } from "../../../shared/reconciler/reconciler.ts";
import { type Engine, type EngineOptions, engine } from "../../support/engine.ts";
import { parentType } from "../../support/fake-cloud.ts";
import { type ParsedRequest, serverError } from "../../support/memory-apiserver.ts";

interface Row {
  name: string;
  kind?: EngineOptions["kind"];
  reconciler?: EngineOptions["reconciler"];
  run(e: Engine): Promise<void>;
}

const GRACE_MS = 30_000;
const PENDING_TIMEOUT_MS = 60_000;

/** Creates `name` and reconciles until it is Ready and in sync. */
async function ready(
  e: Engine,
  name: string,
  forProvider: Record<string, unknown> = { size: 1 },
  extra = {},
) {
  e.apply(name, forProvider, extra);
  await e.settle(name);
  e.advance(GRACE_MS * 2);
  expect(e.condition(name, "Synced")?.status).toBe("True");
}

const isFinalizerPatch = (r: ParsedRequest) =>
  r.method === "PATCH" &&
  !r.subresource &&
  (r.body as { metadata?: { finalizers?: unknown } }).metadata?.finalizers !== undefined;
const isAnnotationPatch = (annotation: string) => (r: ParsedRequest) =>
  r.method === "PATCH" && !r.subresource && JSON.stringify(r.body).includes(annotation);

const behaviours: Row[] = [
  {
    name: "records the annotations an update answers (its own, never crossplane.io/ ones), in one metadata write",
    async run(e) {
      await ready(e, "u");
      e.cloud.updateAnnotations = {
        "widgets.example.org/applied": "2",
        [Annotations.externalName]: "hijacked",
      };
      await e.kube.patch(e.def, "u", { spec: { forProvider: { size: 2 } } });
      await e.settle("u");
      expect(e.cloud.calls.update).toBe(1);
      const mr = e.get("u");
      expect(mr?.metadata.annotations?.["widgets.example.org/applied"]).toBe("2");
      expect(mr?.metadata.annotations?.[Annotations.externalName]).not.toBe("hijacked");
      expect(e.api.writes().filter(isAnnotationPatch("widgets.example.org/applied"))).toHaveLength(1);
    },
  },
  {
    name: "creates once, records the result, then an in-sync reconcile makes one cloud read and zero writes",
    async run(e) {
      await ready(e, "w");
      expect(e.cloud.calls.create).toBe(1);
      const mr = e.get("w");
      expect(mr?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
      expect(mr?.metadata.finalizers).toContain(MANAGED_FINALIZER);
      expect(e.condition("w", "Ready")?.status).toBe("True");
      const writes = e.api.writes().length;
      const observes = e.cloud.calls.observe;
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("in-sync");
      expect(e.api.writes().length).toBe(writes);
      expect(e.cloud.calls.observe).toBe(observes + 1);
    },
  },
  {
    name: "paused: no cloud call, Synced=False ReconcilePaused, one ReconciliationPaused event",
    async run(e) {
      e.apply("w", { size: 1 }, { annotations: { [Annotations.paused]: "true" } });
      await e.reconcile("w");
      await e.reconcile("w");
      expect(e.cloud.calls).toEqual({ observe: 0, observeMany: 0, create: 0, update: 0, delete: 0 });
      expect(e.condition("w", "Synced")?.reason).toBe("ReconcilePaused");
      expect(e.reasons("w")).toEqual([Reason.paused]);
    },
  },
  {
    name: "orphan: deletionPolicy Orphan keeps the cloud resource and lets the object go",
    async run(e) {
      await ready(e, "w", { size: 1 }, { spec: { deletionPolicy: "Orphan" } });
      await e.delete("w");
      await e.settle("w");
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(1);
      expect(e.cloud.calls.delete).toBe(0);
    },
  },
  {
    name: "two workers reconciling the same new resource at once create it exactly once",
    async run(e) {
      e.apply("w", { size: 1 });
      const b = e.newReconciler();
      await Promise.all([e.reconcile("w"), e.reconcile("w", b), e.reconcile("w", e.newReconciler())]);
      await e.settle("w");
      await e.settle("w", 20, b);
      expect(e.cloud.calls.create).toBe(1);
      expect(e.cloud.resources.size).toBe(1);
    },
  },
  {
    name: "an immutable field change is reported in Synced and never applied",
    // region is the widget's home too (a changed home is refused before any read: the home rows below)
    kind: { immutable: ["region", "color"] },
    async run(e) {
      await ready(e, "w", { size: 1, color: "red" });
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as { forProvider: { color: string } }).forProvider.color = "blue";
      });
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("error");
      expect(e.cloud.calls.update).toBe(0);
      expect(e.condition("w", "Synced")?.message).toContain("immutable field(s) color");
      expect(e.reasons("w")).toContain(Reason.cannotUpdate);
    },
  },
  {
    name: "looks again within a second of a create, then, while the cloud says Creating, after a quarter of the time it has been creating (1–30 s)",
    async run(e) {
      e.cloud.initialState = "creating";
      e.apply("w", { size: 1 });
      const created = await e.reconcile("w");
      expect(created.outcome).toBe("created");
      // jittered by [0.5, 1.5)
      expect(created.requeueAfterMs).toBeGreaterThanOrEqual(250);
      expect(created.requeueAfterMs).toBeLessThan(750);
      const early = await e.reconcile("w");
      expect(e.condition("w", "Ready")?.reason).toBe("Creating");
      expect(early.requeueAfterMs).toBeGreaterThanOrEqual(500);
      expect(early.requeueAfterMs).toBeLessThan(1_500);
      e.advance(60_000);
      const minute = await e.reconcile("w");
      expect(minute.requeueAfterMs).toBeGreaterThanOrEqual(7_500);
      expect(minute.requeueAfterMs).toBeLessThan(22_500);
      e.advance(600_000);
      const long = await e.reconcile("w");
      expect(long.requeueAfterMs).toBeGreaterThanOrEqual(15_000);
      expect(long.requeueAfterMs).toBeLessThan(45_000);
      expect(e.cloud.calls.create).toBe(1);
    },
  },
  {
    name: "a reference to a target that is not Ready blocks creation: a wait (looked at again soon), not a failure",
    async run(e) {
      e.parent("p", "parent-1", { ready: false });
      e.apply("w", { parentRef: { name: "p" } });
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("waiting");
      // WAITING_BACKOFF from 1 s, jittered by [0.5, 1.5)
      expect(res.requeueAfterMs).toBeGreaterThanOrEqual(500);
      expect(res.requeueAfterMs).toBeLessThan(1_500);
      expect(e.cloud.calls.create).toBe(0);
      expect(e.condition("w", "Synced")?.message).toContain('referenced Parent "p" is not Ready');
      expect(e.reasons("w")).toEqual([Reason.cannotResolveRefs]);
    },
  },
  {
    name: "a kind whose cloud publishes no delete: deleting the object releases it, no delete is sent, an event says it stays",
    kind: { lacks: { Delete: "Widgets publish no delete" } },
    async run(e) {
      // Neither the management policies (*) nor deletionPolicy Delete can ask for what the cloud lacks.
      await ready(e, "w", { size: 1 }, { spec: { deletionPolicy: "Delete", managementPolicies: ["*"] } });
      await e.delete("w");
      await e.settle("w");
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(1);
      expect(e.cloud.calls.delete).toBe(0);
      const kept = e.events.filter((x) => x.name === "w" && x.reason === Reason.externalKept);
      expect(kept).toHaveLength(1);
      expect(kept[0]?.type).toBe("Normal");
      expect(kept[0]?.message).toContain("Widgets publish no delete");
    },
  },
  {
    name: "a kind whose cloud publishes no create: a missing resource is Synced=False with the kind's reason, never a create",
    kind: { lacks: { Create: "Widgets are made by their parent" } },
    async run(e) {
      e.apply("w", { size: 1 }, { spec: { managementPolicies: ["*"] } });
      const res = await e.reconcile("w");
      await e.reconcile("w");
      expect(res.outcome).toBe("blocked");
      expect(e.cloud.calls.create).toBe(0);
      expect(e.cloud.resources.size).toBe(0);
      expect(e.condition("w", "Synced")?.status).toBe("False");
      expect(e.condition("w", "Synced")?.message).toContain("Widgets are made by their parent");
      expect(e.reasons("w")).toEqual([Reason.cannotObserve]);
    },
  },
];

const cases: Row[] = [
  {
    name: "1. delete right after create does not trust an eventually consistent not-found",
    async run(e) {
      e.cloud.lagReads = 3; // reads after each write still show the state before it
      e.apply("w", { size: 1 });
      await e.reconcile("w"); // creates
      expect(e.cloud.resources.size).toBe(1);
      await e.delete("w");
      e.advance(2_000);
      const res = await e.reconcile("w"); // the read lags: not found, within the grace period
      expect(res.outcome).toBe("deleting");
      expect(e.hasFinalizer("w")).toBe(true);
      await e.settle("w", 40);
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "1b. once driftless requested the delete, the not-found that follows is trusted at once",
    async run(e) {
      e.apply("w", { size: 1 });
      await e.reconcile("w"); // creates
      await e.delete("w");
      expect((await e.reconcile("w")).outcome).toBe("deleting"); // seen, delete requested
      expect(e.condition("w", "Ready")?.message).toBe("deletion of the external resource was requested");
      expect((await e.reconcile("w")).outcome).toBe("deleted"); // within the grace period, no wait
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "2. a delete racing an in-flight create waits for its result, then deletes what it made",
    async run(e) {
      const a = e.reconciler;
      const b = e.newReconciler();
      e.apply("w", { size: 1 });
      const inFlight = await e.createInFlight("w", "before", a); // worker A: nothing in the cloud yet
      await e.delete("w");
      const res = await e.reconcile("w", b); // worker B: the deletion, sees nothing in the cloud
      expect(res.outcome).toBe("deleting");
      expect(e.hasFinalizer("w")).toBe(true);
      expect(e.condition("w", "Ready")?.message).toContain("create that is in flight");
      inFlight.release();
      expect((await inFlight.result).outcome).toBe("created");
      // The creating worker leaves the status to the deletion: no Creating over a deleting object.
      expect(e.condition("w", "Ready")?.reason).toBe("Deleting");
      await e.settle("w", 40, b);
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "2b. an interrupted create (worker died mid-create) is found by name and deleted, not left behind",
    async run(e) {
      e.apply("w", { size: 1 });
      await e.createInFlight("w", "after"); // the resource lands in the cloud, the worker never returns
      await e.delete("w");
      const b = e.newReconciler();
      expect((await e.reconcile("w", b)).outcome).toBe("deleting"); // exists: deleted, finalizer kept
      await e.settle("w", 40, b);
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "2c. an interrupted create of a provider-chosen kind with no ownership lookup blocks the delete instead of leaking",
    kind: { kind: "Gadget", externalName: "providerChosen" },
    async run(e) {
      e.apply("w", { size: 1 });
      await e.createInFlight("w", "before"); // the worker dies before we learn the id
      await e.delete("w");
      const b = e.newReconciler();
      expect((await e.reconcile("w", b)).outcome).toBe("deleting");
      e.advance(PENDING_TIMEOUT_MS + 1);
      const res = await e.reconcile("w", b);
      expect(res.outcome).toBe("blocked");
      expect(e.hasFinalizer("w")).toBe(true);
      expect(e.condition("w", "Synced")?.message).toContain("deleting now could leave it behind");
      expect(e.reasons("w")).toContain(Reason.cannotDetermineCreation);
    },
  },
  {
    name: "2d. the managed resource vanished during a create (finalizer removed by hand): the new resource is deleted again",
    async run(e) {
      e.apply("w", { size: 1 });
      const inFlight = await e.createInFlight("w", "after");
      await e.kube.patch(e.def, "w", { metadata: { finalizers: [] } });
      await e.delete("w");
      inFlight.release();
      expect((await inFlight.result).outcome).toBe("gone");
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "3. the external resource is deleted only when driftless's finalizer is the last one",
    async run(e) {
      await ready(e, "w", { size: 1 }, { finalizers: ["other.example.com/keep"] });
      await e.delete("w");
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("deleting");
      expect(e.cloud.calls.delete).toBe(0);
      expect(e.condition("w", "Ready")?.message).toContain("other.example.com/keep");
      await e.kube.patch(e.def, "w", { metadata: { finalizers: [MANAGED_FINALIZER] } });
      await e.settle("w");
      expect(e.cloud.calls.delete).toBe(1);
      expect(e.get("w")).toBeUndefined();
    },
  },
  {
    name: "4. a field the user set that the cloud lost (redrive removed in the console) is put back",
    async run(e) {
      await ready(e, "w", { size: 1, redrive: { target: "dlq", maxReceives: 3 } });
      const [res] = [...e.cloud.resources.values()];
      e.cloud.edit(res?.id ?? "", (r) => {
        delete r.spec.redrive;
      });
      const out = await e.reconcile("w");
      expect(out.outcome).toBe("updated");
      expect(e.cloud.resources.get(res?.id ?? "")?.spec.redrive).toEqual({ target: "dlq", maxReceives: 3 });
      expect(e.reasons("w")).toContain(Reason.updated);
    },
  },
  {
    name: "5. a version the cloud upgraded by itself is neither drift nor pinned into spec by late-init",
    async run(e) {
      e.apply("w", { size: 1 });
      await e.settle("w");
      const [res] = [...e.cloud.resources.values()];
      e.cloud.edit(res?.id ?? "", (r) => {
        r.spec.version = "16.4";
      });
      await e.reconcile("w");
      expect(e.get("w")?.spec.forProvider.version).toBeUndefined(); // not late-initialized
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as { forProvider: Record<string, unknown> }).forProvider.version = "16";
      });
      e.cloud.edit(res?.id ?? "", (r) => {
        r.spec.version = "16.5"; // automatic minor upgrade
      });
      const out = await e.reconcile("w");
      expect(out.outcome).toBe("in-sync");
      expect(e.cloud.calls.update).toBe(0);
      expect(e.condition("w", "Synced")?.status).toBe("True");
    },
  },
  {
    name: "6a. [Observe] imports without writing the spec",
    async run(e) {
      e.cloud.put({ name: "imported", spec: { region: "eu-west-1", size: 7, color: "red" }, tags: {} });
      e.apply("imported", {}, { spec: { managementPolicies: ["Observe"] } });
      await e.settle("imported");
      expect(e.get("imported")?.spec.forProvider).toEqual({ region: "eu-west-1" });
      expect(e.condition("imported", "Ready")?.status).toBe("True");
      expect(e.condition("imported", "Synced")?.status).toBe("True");
      expect(
        e.api.writes().filter((w) => w.method === "PATCH" && JSON.stringify(w.body).includes("forProvider")),
      ).toEqual([]);
    },
  },
  {
    name: "6b. [Observe, LateInitialize] imports and fills the spec",
    async run(e) {
      e.cloud.put({ name: "imported", spec: { region: "eu-west-1", size: 7 }, tags: {} });
      e.apply("imported", {}, { spec: { managementPolicies: ["Observe", "LateInitialize"] } });
      await e.settle("imported");
      expect(e.get("imported")?.spec.forProvider.size).toBe(7);
    },
  },
  {
    name: "6c. [Observe] of a missing resource: Synced=False at the poll interval, not a failing message",
    async run(e) {
      e.apply("missing", {}, { spec: { managementPolicies: ["Observe"] } });
      const res = await e.reconcile("missing");
      expect(res.outcome).toBe("blocked");
      expect(res.requeueAfterMs).toBe(5 * 60_000);
      expect(e.condition("missing", "Synced")?.status).toBe("False");
      expect(e.condition("missing", "Synced")?.message).toContain("external resource does not exist");
      expect(e.reasons("missing")).toEqual([Reason.cannotObserve]);
      await e.reconcile("missing");
      expect(e.reasons("missing")).toEqual([Reason.cannotObserve]); // said once, not every poll
      expect(e.cloud.calls.create).toBe(0);
    },
  },
  {
    name: "6d. an unsupported management-policy combination is reported and nothing is done",
    async run(e) {
      e.apply("w", { size: 1 }, { spec: { managementPolicies: ["Create", "Update"] } });
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("error");
      expect(e.cloud.calls).toEqual({ observe: 0, observeMany: 0, create: 0, update: 0, delete: 0 });
      expect(e.condition("w", "Synced")?.message).toContain("unsupported combination of managementPolicies");
      expect(e.reasons("w")).toEqual([Reason.invalidPolicy]);
    },
  },
  {
    name: "7. a connection Secret deleted or edited out of band is repaired on the next reconcile",
    async run(e) {
      e.cloud.details = { url: "https://w.example", token: "s3cr3t" };
      await ready(
        e,
        "w",
        { size: 1 },
        { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "apps" } } },
      );
      expect(e.api.secret("apps", "w-conn")).toBeDefined();
      e.api.deleteSecret("apps", "w-conn");
      await e.reconcile("w");
      const data = e.api.secret("apps", "w-conn")?.data as Record<string, string>;
      expect(Buffer.from(data.token ?? "", "base64").toString()).toBe("s3cr3t");
      // edited: a key overwritten by hand
      await e.kube.replaceSecret({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          ...(e.api.secret("apps", "w-conn")?.metadata as object),
          name: "w-conn",
          namespace: "apps",
        },
        data: { ...data, token: Buffer.from("tampered").toString("base64") },
      });
      await e.reconcile("w");
      const again = e.api.secret("apps", "w-conn")?.data as Record<string, string>;
      expect(Buffer.from(again.token ?? "", "base64").toString()).toBe("s3cr3t");
    },
  },
  {
    name: "a Secret the resource names must be in its connection Secret's namespace (no copying Secrets across namespaces)",
    async run(e) {
      e.api.seedSecret("kube-system", "admin", { password: "not-yours" });
      e.apply(
        "w",
        { passwordSecretRef: { namespace: "kube-system", name: "admin", key: "password" } },
        { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "team-a" } } },
      );
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.cloud.calls.create).toBe(0); // refused before the cloud saw a create
      expect(e.cloud.resources.size).toBe(0);
      expect(e.condition("w", "Synced")?.message).toContain(
        'not in the connection Secret\'s namespace "team-a"',
      );
      expect(JSON.stringify(e.get("w")?.status)).not.toContain("not-yours");
    },
  },
  {
    name: "…unless the platform allows that namespace",
    reconciler: { secretRefNamespaces: ["shared-secrets"] },
    async run(e) {
      e.api.seedSecret("shared-secrets", "db", { password: "ok" });
      e.apply(
        "w",
        { passwordSecretRef: { namespace: "shared-secrets", name: "db", key: "password" } },
        { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "team-a" } } },
      );
      await e.settle("w");
      expect(e.cloud.resources.size).toBe(1);
    },
  },
  {
    name: "9. an object whose spec became invalid can still be deleted",
    async run(e) {
      await ready(e, "w");
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as { forProvider: { size: number } }).forProvider.size = 1000; // over the schema's max
      });
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.reasons("w")).toContain(Reason.invalidSpec);
      await e.delete("w");
      await e.settle("w");
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "10a. a selector with resolve: Always chooses again when the selection changes",
    async run(e) {
      e.parent("p-a", "parent-a", { labels: { team: "x" } });
      e.apply("w", { parentSelector: { matchLabels: { team: "x" }, policy: { resolve: "Always" } } });
      await e.settle("w");
      expect(e.get("w")?.spec.forProvider.parentId).toBe("parent-a");
      await e.kube.patch(parentType(), "p-a", { metadata: { labels: { team: "y" } } });
      e.parent("p-b", "parent-b", { labels: { team: "x" } });
      await e.reconcile("w");
      const fp = e.get("w")?.spec.forProvider;
      expect(fp?.parentRef).toEqual({ name: "p-b" });
      expect(fp?.parentId).toBe("parent-b");
    },
  },
  {
    name: "10b. matchControllerRef does not match two objects that both have no controller",
    async run(e) {
      e.parent("p", "parent-1");
      e.apply("w", { parentSelector: { matchControllerRef: true } });
      const res = await e.reconcile("w");
      // Nothing matches (yet): a wait, as for a reference not Ready — a matching object may be made later.
      expect(res.outcome).toBe("waiting");
      expect(e.get("w")?.spec.forProvider.parentId).toBeUndefined();
      expect(e.cloud.calls.create).toBe(0);
    },
  },
  {
    name: "10c. an Optional multi-reference keeps the references that did resolve",
    async run(e) {
      e.parent("p1", "m-1");
      e.parent("p2", "m-2", { ready: false });
      e.apply("w", {
        memberRefs: [
          { name: "p1", policy: { resolution: "Optional" } },
          { name: "p2", policy: { resolution: "Optional" } },
        ],
      });
      await e.reconcile("w");
      expect(e.get("w")?.spec.forProvider.memberIds).toEqual(["m-1"]);
    },
  },
  {
    name: "11. atProvider is replaced whole and conditions carry observedGeneration",
    async run(e) {
      await ready(e, "w");
      await e.kube.patchStatus(e.def, "w", {
        atProvider: { id: "w", state: "ready", legacy: "gone-from-the-cloud" },
      });
      const [res] = [...e.cloud.resources.values()];
      e.cloud.edit(res?.id ?? "", (r) => {
        r.state = "busy";
      });
      await e.reconcile("w");
      const mr = e.get("w");
      expect(mr?.status?.atProvider).toEqual({ id: "w", state: "busy" });
      for (const c of mr?.status?.conditions ?? [])
        expect(c.observedGeneration).toBe(mr?.metadata.generation);
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as { forProvider: { size: number } }).forProvider.size = 2;
        (o.metadata as { generation: number }).generation = 2;
      });
      await e.settle("w");
      expect(e.condition("w", "Synced")?.observedGeneration).toBe(2);
    },
  },
  {
    name: "12. an eventually consistent update is not repeated while the cloud's reads settle",
    kind: { updateSettleMs: 60_000 },
    async run(e) {
      await ready(e, "w");
      e.cloud.lagReads = 4; // four reads after the update still show the old size
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as { forProvider: { size: number } }).forProvider.size = 9;
        (o.metadata as { generation: number }).generation = 2;
      });
      const first = await e.reconcile("w");
      expect(first.outcome).toBe("updated");
      expect(first.requeueAfterMs).toBeGreaterThanOrEqual(60_000);
      for (let i = 0; i < 4; i++) {
        e.advance(2_000);
        expect((await e.reconcile("w")).outcome).toBe("settling");
      }
      e.advance(60_000);
      expect((await e.reconcile("w")).outcome).toBe("in-sync");
      expect(e.cloud.calls.update).toBe(1);
      expect(e.reasons("w").filter((r) => r === Reason.updated)).toHaveLength(1);
    },
  },
];

/** 8: every failure point sets Synced=False with a specific message and a Warning with a specific reason. */
const failures: Row[] = [
  {
    name: "8a. finalizer patch fails → CannotAddFinalizer",
    async run(e) {
      e.apply("w", { size: 1 });
      e.api.failNext(isFinalizerPatch, () => serverError());
      await e.reconcile("w");
      expect(e.condition("w", "Synced")).toMatchObject({ status: "False" });
      expect(e.condition("w", "Synced")?.message).toContain("cannot add finalizer");
      expect(e.reasons("w")).toContain(Reason.cannotAddFinalizer);
      expect(e.cloud.calls.create).toBe(0);
    },
  },
  {
    name: "8b. late-init patch fails → CannotUpdateManagedResource, Synced=True replaced",
    async run(e) {
      await ready(e, "w");
      const [res] = [...e.cloud.resources.values()];
      e.cloud.edit(res?.id ?? "", (r) => {
        r.spec.color = "blue"; // something to late-initialize
      });
      e.api.failNext(
        (r) => r.method === "PATCH" && JSON.stringify(r.body).includes('"color"'),
        () => serverError(),
      );
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.status).toBe("False");
      expect(e.condition("w", "Synced")?.message).toContain("late-initialized");
      expect(e.reasons("w")).toContain(Reason.cannotUpdateManaged);
    },
  },
  {
    name: "8c. the create result cannot be recorded → CannotUpdateManagedResource, and no second create",
    async run(e) {
      e.apply("w", { size: 1 });
      e.api.failNext(isAnnotationPatch(Annotations.createSucceeded), () => serverError(), 5);
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.status).toBe("False");
      expect(e.condition("w", "Synced")?.message).toContain("cannot record the result of creating");
      expect(e.reasons("w")).toContain(Reason.cannotUpdateManaged);
      await e.settle("w");
      expect(e.cloud.calls.create).toBe(1);
      expect(e.get("w")?.metadata.annotations?.[Annotations.createSucceeded]).toBeDefined();
      expect(e.condition("w", "Synced")?.status).toBe("True");
    },
  },
  {
    name: "8d. unpublishing the connection Secret fails during delete → CannotUnpublishConnectionDetails",
    async run(e) {
      e.cloud.details = { url: "u" };
      await ready(
        e,
        "w",
        { size: 1 },
        { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "apps" } } },
      );
      await e.delete("w");
      await e.reconcile("w"); // deletes the cloud resource
      e.api.failNext(
        (r) => r.resource === "v1/secrets",
        () => serverError(),
        1,
      );
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.message).toContain("cannot unpublish connection details");
      expect(e.reasons("w")).toContain(Reason.cannotUnpublish);
      expect(e.hasFinalizer("w")).toBe(true);
      await e.settle("w");
      expect(e.get("w")).toBeUndefined();
      expect(e.api.secret("apps", "w-conn")).toBeUndefined();
    },
  },
  {
    name: "8e. removing the finalizer fails → CannotRemoveFinalizer",
    async run(e) {
      await ready(e, "w");
      await e.delete("w");
      await e.reconcile("w");
      e.api.failNext(isFinalizerPatch, () => serverError());
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.reasons("w")).toContain(Reason.cannotRemoveFinalizer);
      expect(e.condition("w", "Synced")?.status).toBe("False");
    },
  },
  ...(
    [
      ["connect", "CannotConnectToProvider", "cannot connect to the provider"],
      ["observe", "CannotObserveExternalResource", "cannot observe external resource"],
      ["update", "CannotUpdateExternalResource", "cannot update external resource"],
      ["delete", "CannotDeleteExternalResource", "cannot delete external resource"],
      ["create", "CannotCreateExternalResource", "cannot create external resource"],
      ["publish", "CannotPublishConnectionDetails", "cannot publish connection details"],
    ] as const
  ).map(
    ([step, reason, message]): Row => ({
      name: `8f. ${step} fails after Synced=True → Synced=False "${message}", Warning ${reason}`,
      async run(e) {
        if (step === "create") {
          e.apply("w", { size: 1 });
          e.cloud.failNext("create", () => new Error("quota exceeded"));
        } else {
          e.cloud.details = { url: "u" };
          await ready(
            e,
            "w",
            { size: 1 },
            { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "apps" } } },
          );
          e.events.length = 0;
          if (step === "connect")
            e.api.mutate(e.def, "w", (o) => {
              (o.spec as Record<string, unknown>).providerConfigRef = { name: "missing" };
            });
          if (step === "observe") e.cloud.failNext("observe", () => new Error("timeout"));
          if (step === "update") {
            e.api.mutate(e.def, "w", (o) => {
              (o.spec as { forProvider: { size: number } }).forProvider.size = 5;
            });
            e.cloud.failNext("update", () => new Error("denied"));
          }
          if (step === "delete") {
            await e.delete("w");
            e.cloud.failNext("delete", () => new Error("denied"));
          }
          if (step === "publish") {
            e.cloud.details = { url: "new" };
            e.api.failNext(
              (r) => r.resource === "v1/secrets" && r.method === "PUT",
              () => serverError(),
            );
          }
        }
        expect((await e.reconcile("w")).outcome).toBe("error");
        const synced = e.condition("w", "Synced");
        expect(synced?.status).toBe("False");
        expect(synced?.message).toContain(message);
        expect(e.events.filter((ev) => ev.type === "Warning").map((ev) => ev.reason)).toContain(reason);
      },
    }),
  ),
  {
    name: "8g. a create in flight on another worker emits PendingExternalResource",
    async run(e) {
      e.apply("w", { size: 1 });
      const inFlight = await e.createInFlight("w");
      expect((await e.reconcile("w", e.newReconciler())).outcome).toBe("creating");
      expect(e.reasons("w")).toContain(Reason.pending);
      inFlight.release();
      await inFlight.result;
    },
  },
];

describe("managed reconciler: behaviours", () => {
  it.each(behaviours)("$name", async (row) =>
    row.run(engine({ kind: row.kind, reconciler: row.reconciler })),
  );
});

describe("managed reconciler: never leak, never lie", () => {
  it.each(cases)("$name", async (row) => row.run(engine({ kind: row.kind, reconciler: row.reconciler })));
});

describe("managed reconciler: every failure reaches the status", () => {
  it.each(failures)("$name", async (row) => row.run(engine({ kind: row.kind, reconciler: row.reconciler })));
});
