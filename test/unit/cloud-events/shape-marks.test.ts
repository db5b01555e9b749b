// One LIST per cloud event (issue 33 item 6): a kind's two shapes are two CRDs, and the resolver asks only
// the shapes whose mark (shared/reconciler/shape-marks.ts) says they may hold labelled objects. The real
// engine writes the marks and the labels, the real resolver reads them; requests are counted on the
// in-memory API server.
import { describe, expect, it } from "vitest";
import { KubeError } from "../../../shared/kube/client.ts";
import {
  SHAPE_MARK_WAIT_MS,
  SHAPE_MARKS,
  SHAPE_MARKS_CACHE_MS,
  SHAPE_MARKS_REF,
  shapeKeyOf,
} from "../../../shared/reconciler/shape-marks.ts";
import { foundOf, type Shape, type TwoShapes, twoShapes } from "../../support/shapes.ts";

const marksOf = (t: TwoShapes) =>
  t.api.get<{ data?: Record<string, string> }>(SHAPE_MARKS, SHAPE_MARKS_REF.name, SHAPE_MARKS_REF.namespace)
    ?.data ?? {};

/** Resolves one event about `name`, returning what it found and the requests it made. */
async function resolve(t: TwoShapes, r: ReturnType<TwoShapes["newResolver"]>, name: string) {
  const from = t.api.requests.length;
  const res = await r.cloudTrail(t.event(name));
  const counts = t.countsSince(from);
  // The LISTs it reports are the LISTs the API server served.
  expect(res.lists).toBe(counts.lists);
  return { found: foundOf(res.keys), ...counts };
}

/** A managed widget in `shape`, created and labelled by the engine. */
async function managed(t: TwoShapes, shape: Shape, name: string) {
  t.apply(shape, name);
  await t.settle(t.newEngine(), shape, name);
  expect(t.label(shape, name)).toBeDefined();
}

describe("cloud events: one LIST per event (the shapes' marks)", () => {
  it("no shape in use: the first event checks each shape once and records it unused; then 0 LISTs", async () => {
    const t = twoShapes();
    const r = t.newResolver();
    const first = await resolve(t, r, "nobody-manages-this");
    expect(first).toMatchObject({ found: [], lists: 2, markReads: 1, markWrites: 2 });
    expect(marksOf(t)).toEqual({
      [shapeKeyOf(t.defs.cluster)]: "unused",
      [shapeKeyOf(t.defs.namespaced)]: "unused",
    });
    for (let i = 0; i < 5; i++)
      expect(await resolve(t, r, `unmanaged-${i}`)).toMatchObject({ found: [], lists: 0, markReads: 0 });
    // Another container: one read of the marks, no LIST.
    expect(await resolve(t, t.newResolver(), "unmanaged-x")).toMatchObject({
      lists: 0,
      markReads: 1,
      markWrites: 0,
    });
  });

  for (const shape of ["cluster", "namespaced"] as const) {
    it(`a kind used in the ${shape} shape only: a managed resource's event 1 LIST, an unmanaged one's 1`, async () => {
      const t = twoShapes();
      await managed(t, shape, "orders");
      // The engine marked its shape before the first label, straight from "no mark": in use.
      expect(marksOf(t)).toEqual({ [shapeKeyOf(t.defs[shape])]: "in-use" });
      const r = t.newResolver();
      // Once per cluster: the other shape, never checked, is checked and recorded unused.
      const settling = await resolve(t, r, "not-ours-0");
      expect(settling).toMatchObject({ found: [], lists: 2, markWrites: 1 });
      for (let i = 1; i <= 3; i++)
        expect(await resolve(t, r, `not-ours-${i}`)).toMatchObject({ found: [], lists: 1, markWrites: 0 });
      for (let i = 0; i < 3; i++)
        expect(await resolve(t, r, "orders")).toMatchObject({ found: [`${shape}/orders`], lists: 1 });
      // A new container: the same, after one read of the marks.
      const fresh = t.newResolver();
      expect(await resolve(t, fresh, "orders")).toMatchObject({
        found: [`${shape}/orders`],
        lists: 1,
        markReads: 1,
      });
      expect(await resolve(t, fresh, "not-ours-9")).toMatchObject({ lists: 1, markReads: 0 });
    });
  }

  it("the marks are read once per cache period per container, not per event", async () => {
    const t = twoShapes();
    await managed(t, "cluster", "orders");
    const r = t.newResolver();
    await resolve(t, r, "settle");
    let reads = 0;
    for (let i = 0; i < 30; i++) {
      reads += (await resolve(t, r, "orders")).markReads;
      t.advance(SHAPE_MARKS_CACHE_MS / 10);
    }
    // 30 events over three cache periods: one read as each of the last two began (the first began with
    // this container's own write of the namespaced shape's mark).
    expect(reads).toBe(2);
  });

  it("the first object of a new shape: its label waits SHAPE_MARK_WAIT_MS after the shape is marked pending, and the next event after the label finds it", async () => {
    const t = twoShapes();
    await managed(t, "cluster", "orders");
    const r = t.newResolver();
    await resolve(t, r, "settle"); // the namespaced shape is checked: unused
    expect(marksOf(t)[shapeKeyOf(t.defs.namespaced)]).toBe("unused");
    // A first namespaced widget: the engine marks the shape pending, creates, and leaves the label for later.
    t.apply("namespaced", "first");
    const engine = t.newEngine();
    const created = await engine.reconcile(t.keyOf("namespaced", "first"));
    expect(created.outcome).toBe("created");
    expect(t.cloud.calls.create).toBe(2);
    expect(marksOf(t)[shapeKeyOf(t.defs.namespaced)]).toMatch(/^pending /);
    expect(t.label("namespaced", "first")).toBeUndefined();
    // Meanwhile an event about it finds nothing: nor would a LIST of every shape (no label yet).
    expect(await resolve(t, r, "first")).toMatchObject({ found: [], lists: 1 });
    expect(await t.reference("first")).toEqual([]);
    // Until the wait is over, reconciles leave the label and look again when it may be written.
    const pendingAt = t.now().getTime();
    t.advance(1_000);
    const early = await engine.reconcile(t.keyOf("namespaced", "first"));
    expect(t.label("namespaced", "first")).toBeUndefined();
    expect(early.requeueAfterMs).toBeLessThanOrEqual(SHAPE_MARK_WAIT_MS - 1_000);
    await t.settle(engine, "namespaced", "first");
    expect(marksOf(t)[shapeKeyOf(t.defs.namespaced)]).toBe("in-use");
    expect(t.label("namespaced", "first")).toBeDefined();
    expect(t.now().getTime() - pendingAt).toBeGreaterThanOrEqual(SHAPE_MARK_WAIT_MS);
    // The resolver's "unused" was read before "pending" and has run out: the next event finds it.
    expect(await resolve(t, r, "first")).toMatchObject({ found: ["namespaced/first"], lists: 2 });
  });

  it("both shapes in use: a managed resource's event 1 LIST once its shape answered, an unmanaged one's 2", async () => {
    const t = twoShapes();
    await managed(t, "cluster", "orders");
    await managed(t, "namespaced", "payments");
    const r = t.newResolver();
    expect(await resolve(t, r, "orders")).toMatchObject({ found: ["cluster/orders"], lists: 1 });
    expect(await resolve(t, r, "not-ours")).toMatchObject({ found: [], lists: 2 });
    // The namespaced shape answered last: asked first from then on.
    expect(await resolve(t, r, "payments")).toMatchObject({ found: ["namespaced/payments"], lists: 2 });
    expect(await resolve(t, r, "payments")).toMatchObject({ found: ["namespaced/payments"], lists: 1 });
  });

  it("labelled objects from before the marks (none recorded): each shape is checked once, then 1 LIST", async () => {
    const t = twoShapes();
    await managed(t, "namespaced", "orders");
    // As an upgrade finds a cluster: labels, no marks.
    t.api.mutate(
      SHAPE_MARKS,
      SHAPE_MARKS_REF.name,
      (o) => {
        o.data = {};
      },
      SHAPE_MARKS_REF.namespace,
    );
    const r = t.newResolver();
    expect(await resolve(t, r, "orders")).toMatchObject({ found: ["namespaced/orders"], lists: 3 });
    expect(marksOf(t)).toEqual({
      [shapeKeyOf(t.defs.cluster)]: "unused",
      [shapeKeyOf(t.defs.namespaced)]: "in-use",
    });
    expect(await resolve(t, r, "orders")).toMatchObject({ found: ["namespaced/orders"], lists: 1 });
    expect(await resolve(t, r, "not-ours")).toMatchObject({ found: [], lists: 1 });
  });

  it("race: an engine marks a shape and labels its first object between a resolver's check of it and its write", async () => {
    const t = twoShapes();
    await managed(t, "cluster", "orders");
    const r = t.newResolver();
    const engine = t.newEngine();
    let raced = false;
    // The resolver has found the namespaced shape empty; before its "unused" reaches the API server, the
    // engine (another container) marks the shape in use from "no mark" and labels a first object.
    t.api.inject(async (req) => {
      if (raced || req.plural !== "configmaps" || !JSON.stringify(req.body ?? null).includes("unused"))
        return undefined;
      raced = true;
      t.apply("namespaced", "first");
      await t.settle(engine, "namespaced", "first");
      return undefined;
    });
    expect(await resolve(t, r, "not-ours")).toMatchObject({ found: [], lists: 2 });
    expect(raced).toBe(true);
    expect(t.label("namespaced", "first")).toBeDefined();
    // Its write was guarded by the marks it had read: refused, so the engine's mark stands.
    expect(marksOf(t)[shapeKeyOf(t.defs.namespaced)]).toBe("in-use");
    expect(await resolve(t, r, "first")).toMatchObject({ found: ["namespaced/first"] });
  });

  it("marks the engine cannot read (no RBAC): the resource is still created and reconciled, its label waits", async () => {
    const t = twoShapes();
    t.api.inject((req) =>
      req.plural === "configmaps"
        ? new KubeError("configmaps is forbidden", 403, { reason: "Forbidden" })
        : undefined,
    );
    t.apply("cluster", "orders");
    const results = await t.settle(t.newEngine(), "cluster", "orders");
    expect(results.at(-1)?.outcome).toBe("in-sync");
    expect(t.cloud.calls.create).toBe(1);
    expect(t.label("cluster", "orders")).toBeUndefined();
    // The resolver, unable to read them either, asks every shape (as before the marks): nothing is skipped.
    expect(await resolve(t, t.newResolver(), "orders")).toMatchObject({ found: [], lists: 2 });
  });

  it("no driftless-system namespace (a cluster `driftless run` was pointed at): the label is written, and the resolver, unable to record a mark, still finds the resource", async () => {
    const t = twoShapes();
    // The API server answers as it does for a namespace that does not exist: GET 404, create 404.
    t.api.inject((req) =>
      req.plural === "configmaps"
        ? new KubeError(`namespaces "${SHAPE_MARKS_REF.namespace}" not found`, 404, { reason: "NotFound" })
        : undefined,
    );
    t.apply("cluster", "orders");
    const results = await t.settle(t.newEngine(), "cluster", "orders");
    expect(results.at(-1)?.outcome).toBe("in-sync");
    // No ConfigMap can exist without its namespace, so no resolver can have recorded the shape unused: the
    // label may go at once.
    expect(t.label("cluster", "orders")).toBeDefined();
    const r = t.newResolver();
    expect((await resolve(t, r, "orders")).found).toEqual(["cluster/orders"]);
    expect((await resolve(t, r, "orders")).found).toEqual(["cluster/orders"]);
  });

  it("the marks deleted: every shape is asked again (checked), nothing is missed", async () => {
    const t = twoShapes();
    await managed(t, "cluster", "orders");
    const r = t.newResolver();
    await resolve(t, r, "settle");
    await t.kube.delete(SHAPE_MARKS, SHAPE_MARKS_REF.name, SHAPE_MARKS_REF.namespace);
    t.advance(SHAPE_MARKS_CACHE_MS);
    expect(await resolve(t, r, "orders")).toMatchObject({ found: ["cluster/orders"], lists: 2 });
    expect(marksOf(t)).toEqual({ [shapeKeyOf(t.defs.cluster)]: "in-use" });
  });
});
