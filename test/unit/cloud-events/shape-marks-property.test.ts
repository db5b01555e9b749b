// Two paths must agree: for any sequence of objects made in either shape, reconciles by two engine
// containers (which label them and mark their shapes), cloud events resolved by two resolver containers, and
// time passing (caches running out, waits ending), the resolver that asks only the shapes its marks allow
// finds exactly what a label-selected LIST of every shape finds at that moment (the resolver before marks).
// No bound is needed: a label is only ever written once its shape is marked in use, and a shape a resolver
// still believes unused holds no label yet (shared/reconciler/shape-marks.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SHAPE_MARK_WAIT_MS, SHAPE_MARKS_CACHE_MS } from "../../../shared/reconciler/shape-marks.ts";
import { foundOf, type Shape, twoShapes } from "../../support/shapes.ts";

const shape = fc.constantFrom<Shape>("cluster", "namespaced");
const index = fc.integer({ min: 0, max: 1 });
const nameOf = (s: Shape, i: number) => `${s === "cluster" ? "c" : "n"}${i}`;

const action = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant("apply" as const), shape, i: index }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("reconcile" as const),
      shape,
      i: index,
      engine: fc.integer({ min: 0, max: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("delete" as const), shape, i: index }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("event" as const),
      resolver: fc.integer({ min: 0, max: 1 }),
      about: fc.oneof(
        fc.record({ shape, i: index }).map((o) => nameOf(o.shape, o.i)),
        index.map((i) => `unmanaged-${i}`),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("advance" as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 2_000 }),
        fc.constantFrom(
          SHAPE_MARKS_CACHE_MS - 1,
          SHAPE_MARKS_CACHE_MS,
          SHAPE_MARK_WAIT_MS - 1,
          SHAPE_MARK_WAIT_MS,
        ),
        fc.integer({ min: 0, max: 2 * SHAPE_MARK_WAIT_MS }),
      ),
    }),
  },
);

describe("cloud events: the shapes' marks never hide a labelled object", () => {
  it("the marked resolver finds exactly what a LIST of every shape finds, at every event", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 10, maxLength: 60, size: "max" }), async (actions) => {
        const t = twoShapes();
        const engines = [t.newEngine(), t.newEngine()];
        const resolvers = [t.newResolver(), t.newResolver()];
        const made = new Set<string>();
        for (const a of actions) {
          switch (a.op) {
            case "apply": {
              const name = nameOf(a.shape, a.i);
              if (!made.has(name)) t.apply(a.shape, name);
              made.add(name);
              break;
            }
            case "reconcile":
              if (made.has(nameOf(a.shape, a.i)))
                await engines[a.engine]?.reconcile(t.keyOf(a.shape, nameOf(a.shape, a.i)));
              break;
            case "delete": {
              const key = t.keyOf(a.shape, nameOf(a.shape, a.i));
              await t.kube.delete(t.defs[a.shape], key.name, key.namespace);
              break;
            }
            case "event": {
              const res = await resolvers[a.resolver]?.cloudTrail(t.event(a.about));
              expect(foundOf(res?.keys ?? [])).toEqual(await t.reference(a.about));
              break;
            }
            case "advance":
              t.advance(a.ms);
              break;
          }
        }
      }),
      { numRuns: 1_000 },
    );
  }, 120_000);
});
