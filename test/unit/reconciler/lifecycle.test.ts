// The lifecycle kernel every reconciler shares (shared/reconciler/lifecycle.ts), on the in-memory API
// server: an unchanged status makes no write, finalizer writes are guarded by resourceVersion, a
// failure reaches conditions and events, and its backoff grows from the condition's transition time.
import { describe, expect, it } from "vitest";
import type { Condition, ResourceType } from "../../../shared/api/meta.ts";
import { ConflictError } from "../../../shared/kube/client.ts";
import { setConditions } from "../../../shared/reconciler/conditions.ts";
import type { EventSubject } from "../../../shared/reconciler/contract.ts";
import {
  ERROR_BACKOFF,
  Lifecycle,
  type LifecycleObject,
  WAITING_BACKOFF,
} from "../../../shared/reconciler/lifecycle.ts";
import { MemoryApiServer, notFound, serverError } from "../../support/memory-apiserver.ts";
import { captureLogger } from "../../support/reconcile.ts";

const Thing: ResourceType = {
  group: "things.test",
  version: "v1",
  kind: "Thing",
  plural: "things",
  namespaced: true,
};
type Obj = LifecycleObject & { status?: Record<string, unknown> & { conditions?: Condition[] } };

const T0 = new Date("2026-01-01T00:00:00.000Z");
const ready = { type: "Ready", status: "True" as const, reason: "Available" };
const failing = (message: string) => ({
  type: "Synced",
  status: "False" as const,
  reason: "ReconcileError",
  message,
});

function setup(status?: Obj["status"]) {
  const api = new MemoryApiServer();
  let clock = T0;
  const events: Array<{ name: string; type: string; reason: string }> = [];
  const log = captureLogger();
  const lc = new Lifecycle(api.kube(), {
    now: () => clock,
    random: () => 0.5,
    logger: log.logger,
    events: {
      async record(obj: EventSubject, type, reason) {
        events.push({ name: obj.metadata.name, type, reason });
      },
    },
  });
  api.seed(Thing, {
    apiVersion: "things.test/v1",
    kind: "Thing",
    metadata: { name: "t", namespace: "ns" },
    ...(status ? { status } : {}),
  });
  const read = async () =>
    (await lc.read<Obj>(Thing, {
      apiVersion: "things.test/v1",
      kind: "Thing",
      name: "t",
      namespace: "ns",
    })) as Obj;
  const writes = () => api.writes().filter((r) => r.resource !== "v1/events").length;
  return {
    api,
    lc,
    events,
    log,
    read,
    writes,
    advance: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    },
  };
}

describe("Lifecycle.writeStatus", () => {
  it("writes conditions stamped with the generation, then nothing while nothing changes", async () => {
    const s = setup();
    const written = await s.lc.writeStatus(Thing, await s.read(), [ready], { users: 2 });
    expect(written?.status?.conditions).toEqual([
      { ...ready, observedGeneration: 1, lastTransitionTime: T0.toISOString() },
    ]);
    s.advance(60_000);
    const before = s.writes();
    expect(await s.lc.writeStatus(Thing, await s.read(), [ready], { users: 2 })).toBeUndefined();
    expect(s.writes()).toBe(before);
  });

  it("replaces an object field whole and leaves an undefined one as it is", async () => {
    const s = setup({ atProvider: { arn: "a", stale: "x" }, users: 1 });
    await s.lc.writeStatus(Thing, await s.read(), [ready], { atProvider: { arn: "a" }, users: undefined });
    const after = await s.read();
    expect(after.status?.atProvider).toEqual({ arn: "a" });
    expect(after.status?.users).toBe(1);
  });

  it("with exclusive, drops conditions of other types; by default keeps them", async () => {
    const other = {
      type: "Custom",
      status: "True" as const,
      reason: "X",
      lastTransitionTime: T0.toISOString(),
    };
    const s = setup({ conditions: [other] });
    await s.lc.writeStatus(Thing, await s.read(), [ready]);
    expect((await s.read()).status?.conditions?.map((c) => c.type)).toEqual(["Custom", "Ready"]);
    await s.lc.writeStatus(Thing, await s.read(), [ready], {}, { exclusive: true });
    expect((await s.read()).status?.conditions?.map((c) => c.type)).toEqual(["Ready"]);
  });

  it("an object deleted meanwhile is nothing to report on; other failures are thrown", async () => {
    const s = setup();
    const obj = await s.read();
    s.api.failNext(
      (r) => r.subresource === "status",
      () => notFound("Thing t"),
    );
    expect(await s.lc.writeStatus(Thing, obj, [ready])).toBeUndefined();
    s.api.failNext(
      (r) => r.subresource === "status",
      () => serverError(),
    );
    await expect(s.lc.writeStatus(Thing, obj, [ready])).rejects.toThrow(/timed out/);
  });
});

describe("Lifecycle finalizers", () => {
  it("adds and removes once, writing nothing when there is nothing to do", async () => {
    const s = setup();
    const added = await s.lc.addFinalizer(Thing, await s.read(), "f.test");
    expect(added.metadata.finalizers).toEqual(["f.test"]);
    const n = s.writes();
    await s.lc.addFinalizer(Thing, added, "f.test");
    expect(s.writes()).toBe(n);
    const removed = await s.lc.removeFinalizer(Thing, added, "f.test");
    expect(removed.metadata.finalizers ?? []).toEqual([]);
    await s.lc.removeFinalizer(Thing, removed, "f.test");
    expect(s.writes()).toBe(n + 1);
  });

  it("guards each write by resourceVersion: a stale object's write is a ConflictError for the router", async () => {
    const s = setup();
    const stale = await s.read();
    s.api.mutate(Thing, "t", (o) => ((o.metadata as { labels?: object }).labels = { moved: "on" }), "ns");
    await expect(s.lc.addFinalizer(Thing, stale, "f.test")).rejects.toBeInstanceOf(ConflictError);
  });

  it("wraps other failures in a short message; a finalizer on an object already gone needs no removal", async () => {
    const s = setup();
    const obj = await s.lc.addFinalizer(Thing, await s.read(), "f.test");
    s.api.failNext(
      (r) => r.method === "PATCH",
      () => serverError(),
    );
    await expect(s.lc.removeFinalizer(Thing, obj, "f.test")).rejects.toThrow(/^cannot remove finalizer: /);
    s.api.failNext(
      (r) => r.method === "PATCH",
      () => notFound("Thing t"),
    );
    await expect(s.lc.removeFinalizer(Thing, obj, "f.test")).resolves.toBe(obj);
  });
});

describe("Lifecycle.fail", () => {
  it("reports Synced=False and a Warning event, and doubles the backoff while the failure lasts", async () => {
    const s = setup();
    const f = (message: string) => ({
      reason: "CannotDoIt",
      error: new Error(message),
      conditions: [failing(message)],
      backoff: ERROR_BACKOFF,
    });
    expect(await s.lc.fail(Thing, await s.read(), f("boom"))).toBe(ERROR_BACKOFF.minMs);
    expect((await s.read()).status?.conditions).toEqual([
      { ...failing("boom"), observedGeneration: 1, lastTransitionTime: T0.toISOString() },
    ]);
    expect(s.events).toEqual([{ name: "t", type: "Warning", reason: "CannotDoIt" }]);
    s.advance(10_000);
    // A reworded message is the same failure: failing for 10 s, wait 20 s.
    expect(await s.lc.fail(Thing, await s.read(), f("boom again"))).toBe(20_000);
    s.advance(60_000);
    expect(await s.lc.fail(Thing, await s.read(), { ...f("boom"), backoff: WAITING_BACKOFF })).toBe(
      WAITING_BACKOFF.maxMs,
    );
  });

  it("a failure of another reason starts the backoff again", async () => {
    const s = setup();
    const obj = await s.read();
    await s.lc.fail(Thing, obj, {
      reason: "A",
      error: new Error("a"),
      conditions: [failing("a")],
      backoff: ERROR_BACKOFF,
    });
    s.advance(100_000);
    const other = { ...failing("b"), reason: "ClassNotFound" };
    const wait = await s.lc.fail(Thing, await s.read(), {
      reason: "B",
      error: new Error("b"),
      conditions: [other],
      backoff: ERROR_BACKOFF,
    });
    expect(wait).toBe(ERROR_BACKOFF.minMs);
  });

  it("a status that cannot be written is logged; the failure still gets its backoff", async () => {
    const s = setup();
    s.api.failNext(
      (r) => r.subresource === "status",
      () => serverError(),
    );
    const wait = await s.lc.fail(Thing, await s.read(), {
      reason: "X",
      error: new Error("x"),
      conditions: [failing("x")],
      backoff: ERROR_BACKOFF,
    });
    expect(wait).toBe(ERROR_BACKOFF.minMs);
    expect(s.log.lines.some((l) => l.includes("cannot write the failure to the status"))).toBe(true);
  });
});

describe("setConditions: a mirrored condition", () => {
  it("keeps its own lastTransitionTime when it is new or transitions, and ours when it does not", () => {
    const upstream = { ...ready, lastTransitionTime: "2025-06-01T00:00:00.000Z" };
    const first = setConditions(undefined, [upstream], T0);
    expect(first[0]?.lastTransitionTime).toBe(upstream.lastTransitionTime);
    const kept = setConditions(
      first,
      [{ ...upstream, message: "reworded", lastTransitionTime: "2025-07-01T00:00:00.000Z" }],
      T0,
    );
    expect(kept[0]?.lastTransitionTime).toBe(upstream.lastTransitionTime);
  });
});
