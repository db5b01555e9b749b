// The Usage reconciler's table: selectors resolved into names, the in-use label, the binding to the user
// (ownerReference), Ready, release when the user is gone, and replayDeletion. In-memory API server, widgets.
import { describe, expect, it } from "vitest";
import { apiVersionOf } from "../../../shared/api/meta.ts";
import {
  ClusterUsageType,
  DELETION_ATTEMPT_ANNOTATION,
  IN_USE_LABEL,
  USAGE_DETAILS_ANNOTATION,
  USAGE_FINALIZER,
  type UsageObject,
} from "../../../shared/api/protection/usage.ts";
import { UsageReconciler } from "../../../shared/usages/reconciler.ts";
import { type Engine, engine } from "../../support/engine.ts";

function setup() {
  const e = engine();
  const r = new UsageReconciler(e.kube, (apiVersion, kind) =>
    apiVersion === apiVersionOf(e.def) && kind === e.def.kind ? e.def : undefined,
  );
  const key = (name: string) => ({
    apiVersion: "protection.crossplane.io/v1beta1",
    kind: "ClusterUsage",
    name,
  });
  const get = (name: string) => e.api.get<UsageObject>(ClusterUsageType, name);
  return { e, r, key, get };
}

function seedUsage(e: Engine, name: string, spec: Record<string, unknown>) {
  const ref = (v: unknown) =>
    typeof v === "string" ? { resourceRef: { name: v } } : { resourceSelector: v as Record<string, unknown> };
  const { of, by, ...rest } = spec;
  e.api.seed(ClusterUsageType, {
    apiVersion: "protection.crossplane.io/v1beta1",
    kind: "ClusterUsage",
    metadata: { name },
    spec: {
      of: { apiVersion: e.def.apiVersion, kind: e.def.kind, ...ref(of) },
      ...(by ? { by: { apiVersion: e.def.apiVersion, kind: e.def.kind, ...ref(by) } } : {}),
      ...rest,
    },
  });
}

const ready = (u: UsageObject | undefined) => u?.status?.conditions?.find((c) => c.type === "Ready");

describe("Usage reconciler", () => {
  it("labels the used resource, binds the Usage to its user, writes details and Ready", async () => {
    const { e, r, key, get } = setup();
    e.apply("vpc", { size: 1 });
    e.apply("subnet", { size: 1 });
    seedUsage(e, "u", { of: "vpc", by: "subnet" });
    expect((await r.reconcile(key("u"))).outcome).toBe("ready");
    expect(e.get("vpc")?.metadata.labels?.[IN_USE_LABEL]).toBe("true");
    const u = get("u");
    expect(u?.metadata.finalizers).toContain(USAGE_FINALIZER);
    expect(u?.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Widget", name: "subnet", uid: e.get("subnet")?.metadata.uid }),
    ]);
    expect(u?.metadata.annotations?.[USAGE_DETAILS_ANNOTATION]).toBe("Widget/subnet (ClusterUsage u)");
    expect(ready(u)).toMatchObject({ status: "True", reason: "Available" });
    // In sync: a second reconcile writes nothing.
    const writes = e.api.writes().length;
    await r.reconcile(key("u"));
    expect(e.api.writes().length).toBe(writes);
  });

  it("resolves a selector into a name once, as Crossplane writes it", async () => {
    const { e, r, key, get } = setup();
    e.apply("db", { size: 1 }, { labels: { tier: "data" } });
    e.apply("other", { size: 1 }, { labels: { tier: "web" } });
    seedUsage(e, "u", { of: { matchLabels: { tier: "data" } }, reason: "keep" });
    expect((await r.reconcile(key("u"))).outcome).toBe("ready");
    expect(get("u")?.spec.of.resourceRef).toEqual({ name: "db" });
    expect(e.get("db")?.metadata.labels?.[IN_USE_LABEL]).toBe("true");
    expect(e.get("other")?.metadata.labels?.[IN_USE_LABEL]).toBeUndefined();
  });

  it("a user not created yet: Ready=False says so, the Usage stays and keeps holding", async () => {
    const { e, r, key, get } = setup();
    e.apply("vpc", { size: 1 });
    seedUsage(e, "u", { of: "vpc", by: "later" });
    const res = await r.reconcile(key("u"));
    expect(res.outcome).toBe("waiting");
    expect(res.requeueAfterMs).toBeGreaterThan(0);
    expect(ready(get("u"))?.message).toContain("Widget/later");
    expect(get("u")).toBeDefined();
  });

  it("the bound user is gone: the Usage is deleted and releases the used resource's label", async () => {
    const { e, r, key, get } = setup();
    e.apply("vpc", { size: 1 });
    e.apply("subnet", { size: 1 });
    seedUsage(e, "u", { of: "vpc", by: "subnet" });
    await r.reconcile(key("u"));
    await e.delete("subnet");
    expect(e.get("subnet")).toBeUndefined();
    expect((await r.reconcile(key("u"))).outcome).toBe("released");
    expect(get("u")?.metadata.deletionTimestamp).toBeDefined();
    await r.reconcile(key("u"));
    expect(get("u")).toBeUndefined();
    expect(e.get("vpc")?.metadata.labels?.[IN_USE_LABEL]).toBeUndefined();
  });

  it("another Usage of the same resource keeps its label when one goes", async () => {
    const { e, r, key } = setup();
    e.apply("vpc", { size: 1 });
    seedUsage(e, "a", { of: "vpc", reason: "a" });
    seedUsage(e, "b", { of: "vpc", reason: "b" });
    await r.reconcile(key("a"));
    await r.reconcile(key("b"));
    await e.kube.delete(ClusterUsageType, "a");
    await r.reconcile(key("a"));
    expect(e.get("vpc")?.metadata.labels?.[IN_USE_LABEL]).toBe("true");
  });

  it("replayDeletion: a deletion refused while the Usage held it is made again when the Usage goes", async () => {
    const { e, r, key } = setup();
    e.apply("vpc", { size: 1 }, { finalizers: ["keep.example.com"] });
    seedUsage(e, "u", { of: "vpc", reason: "r", replayDeletion: true });
    await r.reconcile(key("u"));
    // What Crossplane's webhook records when it refuses a DELETE.
    await e.kube.patch(e.def, "vpc", {
      metadata: { annotations: { [DELETION_ATTEMPT_ANNOTATION]: "Background" } },
    });
    await e.kube.delete(ClusterUsageType, "u");
    expect((await r.reconcile(key("u"))).outcome).toBe("released");
    expect(e.get("vpc")?.metadata.deletionTimestamp).toBeDefined();
  });

  it("without replayDeletion the used resource is left alone", async () => {
    const { e, r, key } = setup();
    e.apply("vpc", { size: 1 }, { finalizers: ["keep.example.com"] });
    seedUsage(e, "u", { of: "vpc", reason: "r" });
    await r.reconcile(key("u"));
    await e.kube.patch(e.def, "vpc", {
      metadata: { annotations: { [DELETION_ATTEMPT_ANNOTATION]: "Background" } },
    });
    await e.kube.delete(ClusterUsageType, "u");
    await r.reconcile(key("u"));
    expect(e.get("vpc")?.metadata.deletionTimestamp).toBeUndefined();
  });
});
