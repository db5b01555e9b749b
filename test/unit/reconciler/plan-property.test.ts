// The batched drift check and the full reconcile make one decision (shared/reconciler/plan.ts). Property:
// for any history of a managed resource — reconciles, spec edits, console edits, annotations, policies,
// a changed home, another writer fighting updates, deletion — the batch says "in sync" exactly when a full reconcile of the same object
// would write nothing to the API server, change nothing in the cloud, record no event and ask for no early
// look again. And the batch itself never writes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EXTERNAL_KEY_LABEL } from "../../../shared/api/cloud-events.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Reason } from "../../../shared/reconciler/reconciler.ts";
import { type Engine, engine } from "../../support/engine.ts";

type Op =
  | { op: "reconcile" }
  | { op: "settle" }
  | { op: "advance"; ms: number }
  | { op: "spec"; field: "size" | "color"; value: number | string | undefined }
  | { op: "tags"; tags: Record<string, string> | undefined }
  | { op: "cloud"; field: "size" | "color" | "state"; value: number | string }
  | { op: "cloudGone" }
  | { op: "fight"; size: number | undefined }
  | { op: "annotate"; key: string; value: string | undefined }
  | { op: "label"; value: string | undefined }
  | { op: "finalizers"; list: string[] }
  | { op: "policies"; policies: string[] | undefined }
  | { op: "region"; region: string }
  | { op: "details"; details: Record<string, string> | undefined }
  | { op: "secretGone" }
  | { op: "conditions"; drop: "Ready" | "Synced" | "generation" }
  | { op: "delete" };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant<Op>({ op: "reconcile" }), weight: 6 },
  // Follow the requeues a few times, as the queue would.
  { arbitrary: fc.constant<Op>({ op: "settle" }), weight: 2 },
  {
    arbitrary: fc.constantFrom(1_000, 31_000, 61_000, 600_000).map((ms): Op => ({ op: "advance", ms })),
    weight: 3,
  },
  fc
    .record({
      op: fc.constant("spec" as const),
      field: fc.constantFrom("size" as const, "color" as const),
      value: fc.option(fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom("red", "blue")), {
        nil: undefined,
      }),
    })
    .map(
      (o): Op => ({
        ...o,
        value:
          o.field === "size"
            ? typeof o.value === "number"
              ? o.value
              : undefined
            : typeof o.value === "string"
              ? o.value
              : undefined,
      }),
    ),
  fc
    .option(fc.constantFrom({ team: "a" }, { team: "b" }), { nil: undefined })
    .map((tags): Op => ({ op: "tags", tags })),
  fc.oneof(
    fc.integer({ min: 1, max: 3 }).map((value): Op => ({ op: "cloud", field: "size", value })),
    fc.constantFrom("red", "green").map((value): Op => ({ op: "cloud", field: "color", value })),
    fc.constantFrom("ready", "creating").map((value): Op => ({ op: "cloud", field: "state", value })),
  ),
  fc.constant<Op>({ op: "cloudGone" }),
  // Another writer in the cloud changing size back after each update (the update-loop detector's case).
  fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }).map((size): Op => ({ op: "fight", size })),
  fc.record({
    op: fc.constant("annotate" as const),
    key: fc.constantFrom(
      Annotations.paused,
      Annotations.pollInterval,
      Annotations.reconcileRequestedAt,
      Annotations.externalName,
      Annotations.home,
      Annotations.createPending,
    ),
    value: fc.option(fc.constantFrom("true", "1m", "r1", "r2", "other", "2026-01-01T00:00:00.000Z"), {
      nil: undefined,
    }),
  }),
  fc.option(fc.constantFrom("stale"), { nil: undefined }).map((value): Op => ({ op: "label", value })),
  fc
    .constantFrom([], [MANAGED_FINALIZER], [MANAGED_FINALIZER, "other.example/hold"])
    .map((list): Op => ({ op: "finalizers", list: [...list] })),
  fc
    .option(
      fc.constantFrom(
        ["*"],
        ["Observe"],
        ["Observe", "Create", "Delete"],
        ["Observe", "Update", "LateInitialize"],
        [],
      ),
      { nil: undefined },
    )
    .map((policies): Op => ({ op: "policies", policies: policies && [...policies] })),
  fc.constantFrom("eu-west-1", "us-east-1").map((region): Op => ({ op: "region", region })),
  fc
    .option(fc.constantFrom<Record<string, string>>({ url: "a" }, { url: "b", password: "p" }), {
      nil: undefined,
    })
    .map((details): Op => ({ op: "details", details: details && { ...details } })),
  fc.constant<Op>({ op: "secretGone" }),
  fc
    .constantFrom("Ready" as const, "Synced" as const, "generation" as const)
    .map((drop): Op => ({ op: "conditions", drop })),
  fc.constant<Op>({ op: "delete" }),
);

const NAME = "w";

function mutateSpec(e: Engine, change: (spec: Record<string, unknown>, fp: Record<string, unknown>) => void) {
  e.api.mutate(e.def, NAME, (o) => {
    const spec = o.spec as Record<string, unknown>;
    change(spec, spec.forProvider as Record<string, unknown>);
    (o.metadata as { generation: number }).generation += 1;
  });
}

async function play(e: Engine, o: Op) {
  if (!e.get(NAME)) return;
  const cloudRes = () => [...e.cloud.resources.values()][0];
  switch (o.op) {
    case "reconcile":
      await e.reconcile(NAME);
      return;
    case "advance":
      e.advance(o.ms);
      return;
    case "spec":
      return mutateSpec(e, (_, fp) => {
        if (o.value === undefined) delete fp[o.field];
        else fp[o.field] = o.value;
      });
    case "tags":
      return mutateSpec(e, (_, fp) => {
        if (o.tags) fp.tags = o.tags;
        else delete fp.tags;
      });
    case "region":
      return mutateSpec(e, (_, fp) => {
        fp.region = o.region;
      });
    case "policies":
      return mutateSpec(e, (spec) => {
        if (o.policies) spec.managementPolicies = o.policies;
        else delete spec.managementPolicies;
      });
    case "cloud": {
      const r = cloudRes();
      if (!r) return;
      e.cloud.edit(r.id, (c) => {
        if (o.field === "state") c.state = String(o.value);
        else c.spec[o.field] = o.value;
      });
      return;
    }
    case "settle":
      await e.settle(NAME, 4);
      return;
    case "fight": {
      const fight = (r: { spec: Record<string, unknown> }) => {
        r.spec.size = o.size;
      };
      e.cloud.afterUpdate = o.size === undefined ? undefined : fight;
      const r = cloudRes();
      if (r && o.size !== undefined) e.cloud.edit(r.id, fight);
      return;
    }
    case "cloudGone": {
      const r = cloudRes();
      if (r) e.cloud.resources.delete(r.id);
      return;
    }
    case "annotate":
      return e.api.mutate(e.def, NAME, (obj) => {
        const meta = obj.metadata as { annotations?: Record<string, string> };
        meta.annotations = { ...(meta.annotations ?? {}) };
        if (o.value === undefined) delete meta.annotations[o.key];
        else meta.annotations[o.key] = o.value;
      });
    case "label":
      return e.api.mutate(e.def, NAME, (obj) => {
        const meta = obj.metadata as { labels?: Record<string, string> };
        meta.labels = { ...(meta.labels ?? {}) };
        if (o.value === undefined) delete meta.labels[EXTERNAL_KEY_LABEL];
        else meta.labels[EXTERNAL_KEY_LABEL] = o.value;
      });
    case "finalizers":
      if (e.get(NAME)?.metadata.deletionTimestamp) return;
      return e.api.mutate(e.def, NAME, (obj) => {
        (obj.metadata as { finalizers?: string[] }).finalizers = [...o.list];
      });
    case "details":
      if (o.details) e.cloud.details = o.details;
      else e.cloud.details = undefined;
      return;
    case "secretGone":
      if (e.api.secret("apps", "w-conn")) await e.kube.deleteSecret("apps", "w-conn");
      return;
    case "conditions":
      return e.api.mutate(e.def, NAME, (obj) => {
        const status = (obj.status ?? {}) as {
          conditions?: Array<{ type: string; observedGeneration?: number }>;
        };
        if (o.drop === "generation") (obj.metadata as { generation: number }).generation += 1;
        else status.conditions = (status.conditions ?? []).filter((c) => c.type !== o.drop);
        obj.status = status;
      });
    case "delete":
      await e.delete(NAME);
      return;
  }
}

/** The batch's verdict and what a full reconcile of the same object then does. */
async function compare(e: Engine) {
  const listed = e.get(NAME) as ManagedResource | undefined;
  if (!listed) return undefined;
  const writesBefore = e.api.writes().length;
  const [verdict] = await e.reconciler.checkMany([listed], {
    connectionSecret: (ns, name) => e.api.secret(ns, name) as never,
  });
  const batchWrites = e.api.writes().length - writesBefore;
  const mutationsBefore = e.cloud.calls.create + e.cloud.calls.update + e.cloud.calls.delete;
  const eventsBefore = e.events.length;
  const result = await e.reconcile(NAME);
  const quiet =
    e.api.writes().length === writesBefore &&
    e.cloud.calls.create + e.cloud.calls.update + e.cloud.calls.delete === mutationsBefore &&
    e.events.length === eventsBefore &&
    result.requeueAfterMs === undefined;
  return { verdict, batchWrites, quiet, result };
}

describe("one decision: the batched check agrees with the full reconcile", () => {
  for (const variant of [
    { name: "list-capable kind", opts: { observeManyMaxItems: 10 } },
    { name: "one observe per resource", opts: {} },
    {
      name: "provider-chosen names",
      opts: {
        observeManyMaxItems: 10,
        kind: { kind: "Gadget", externalName: "providerChosen", ownershipLookup: true },
      },
    },
  ] as const) {
    it(`${variant.name}: in sync ⇔ the full reconcile writes, mutates, records and requeues nothing`, async () => {
      let inSyncSeen = 0;
      let outOfSyncSeen = 0;
      let loopsStopped = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.option(fc.constantFrom<Record<string, string>>({ url: "a" }, { url: "a", password: "p" }), {
            nil: undefined,
          }),
          fc.array(op, { minLength: 0, maxLength: 14 }),
          async (withSecret, details, ops) => {
            const e = engine({
              ...(variant.opts as Parameters<typeof engine>[0]),
              reconciler: { updateLoopLimit: 2 },
            });
            e.cloud.details = details && { ...details };
            e.apply(
              NAME,
              { size: 1 },
              withSecret
                ? { spec: { writeConnectionSecretToRef: { name: "w-conn", namespace: "apps" } } }
                : {},
            );
            // Most histories start from a resource that became Ready.
            await e.settle(NAME);
            e.advance(61_000);
            await e.settle(NAME);
            for (const o of ops) await play(e, o);
            const seen = await compare(e);
            if (!seen) return;
            expect(seen.batchWrites).toBe(0);
            if (e.reasons(NAME).includes(Reason.updateLoop)) loopsStopped++;
            if (seen.verdict?.inSync) inSyncSeen++;
            else outOfSyncSeen++;
            expect({
              inSync: seen.verdict?.inSync,
              why: seen.verdict && "why" in seen.verdict ? seen.verdict.why : undefined,
              fullReconcileQuiet: seen.quiet,
              outcome: seen.result.outcome,
            }).toMatchObject({ inSync: seen.quiet });
          },
        ),
        { numRuns: 300, seed: 20261126 },
      );
      // The property means something only if both sides were reached.
      expect(inSyncSeen).toBeGreaterThan(10);
      expect(outOfSyncSeen).toBeGreaterThan(10);
      expect(loopsStopped).toBeGreaterThan(0);
    });
  }
});
