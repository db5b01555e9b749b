// The engine table of the external-key index label (api/cloud-events.ts): the label a cloud event's one
// label-selected LIST finds a managed resource by. Written where the engine records or knows the external
// name, with a write it makes anyway where it can; never written again while it is right.
import { describe, expect, it } from "vitest";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { type Engine, type EngineOptions, engine } from "../../support/engine.ts";
import type { ParsedRequest } from "../../support/memory-apiserver.ts";

interface Row {
  name: string;
  kind?: EngineOptions["kind"];
  run(e: Engine): Promise<void>;
}

const GRACE_MS = 30_000;

const labelOf = (e: Engine, name: string) => e.get(name)?.metadata.labels?.[EXTERNAL_KEY_LABEL];
const expected = (e: Engine, externalName: string) => externalKeyOf(e.def, externalName);
const labelWrites = (e: Engine) =>
  e.api
    .writes()
    .filter(
      (r: ParsedRequest) =>
        r.method === "PATCH" && !r.subresource && JSON.stringify(r.body).includes(EXTERNAL_KEY_LABEL),
    );
const metadataPatches = (e: Engine) => e.api.writes().filter((r) => r.method === "PATCH" && !r.subresource);

const rows: Row[] = [
  {
    name: "create (external name from metadata.name): the label rides on the external-name write, once",
    async run(e) {
      e.apply("w1", { size: 1 });
      await e.settle("w1");
      expect(labelOf(e, "w1")).toBe(expected(e, "w1"));
      expect(labelWrites(e)).toHaveLength(1);
      // It travelled with the annotation it derives from: no write of its own.
      expect(JSON.stringify(labelWrites(e)[0]?.body)).toContain(Annotations.externalName);
    },
  },
  {
    name: "create of a provider-chosen id: the label rides on the write that records the id",
    kind: { externalName: "providerChosen", ownershipLookup: true },
    async run(e) {
      e.apply("w2", { size: 1 });
      await e.settle("w2");
      const id = e.get("w2")?.metadata.annotations?.[Annotations.externalName];
      expect(id).toBeTruthy();
      expect(labelOf(e, "w2")).toBe(expected(e, id ?? ""));
      expect(labelWrites(e)).toHaveLength(1);
      expect(JSON.stringify(labelWrites(e)[0]?.body)).toContain(Annotations.createSucceeded);
    },
  },
  {
    name: "adoption of an existing resource (import, Observe only): the label rides on the finalizer write",
    async run(e) {
      e.cloud.put({ name: "existing-q", spec: { size: 3 }, tags: {} });
      e.apply(
        "w3",
        { size: 3 },
        {
          annotations: { [Annotations.externalName]: "existing-q" },
          spec: { managementPolicies: ["Observe"] },
        },
      );
      await e.settle("w3");
      expect(e.cloud.calls.create).toBe(0);
      expect(labelOf(e, "w3")).toBe(expected(e, "existing-q"));
      const writes = labelWrites(e);
      expect(writes).toHaveLength(1);
      expect(JSON.stringify(writes[0]?.body)).toContain(MANAGED_FINALIZER);
    },
  },
  {
    name: "a provider-chosen id found by its ownership tag: the label rides on the write that records it",
    kind: { externalName: "providerChosen", ownershipLookup: true },
    async run(e) {
      const mr = e.apply("w4", { size: 1 }, { finalizers: [MANAGED_FINALIZER] });
      const found = e.cloud.put({
        name: "w4",
        spec: { size: 1 },
        tags: { "driftless.dev/owner": mr.metadata.uid ?? "" },
      });
      await e.settle("w4");
      expect(e.cloud.calls.create).toBe(0);
      expect(labelOf(e, "w4")).toBe(expected(e, found.id));
      expect(labelWrites(e)).toHaveLength(1);
    },
  },
  {
    name: "a legacy object (finalizer, annotation, Ready, no label) gets it on its next reconcile, alone",
    async run(e) {
      e.apply("w5", { size: 1 });
      await e.settle("w5");
      e.advance(GRACE_MS * 2);
      // As it was before the label existed.
      e.api.mutate(e.def, "w5", (o) => {
        delete (o.metadata as { labels?: unknown }).labels;
      });
      const before = metadataPatches(e).length;
      const res = await e.reconcile("w5");
      expect(res.outcome).toBe("in-sync");
      expect(labelOf(e, "w5")).toBe(expected(e, "w5"));
      expect(metadataPatches(e).length).toBe(before + 1);
    },
  },
  {
    name: "a wrong label (the external name was changed by hand) is replaced",
    async run(e) {
      e.cloud.put({ name: "other-name", spec: { size: 1 }, tags: {} });
      e.apply("w6", { size: 1 }, { labels: { [EXTERNAL_KEY_LABEL]: expected(e, "w6") } });
      await e.settle("w6");
      e.advance(GRACE_MS * 2);
      e.api.mutate(e.def, "w6", (o) => {
        (o.metadata as { annotations: Record<string, string> }).annotations[Annotations.externalName] =
          "other-name";
      });
      await e.reconcile("w6");
      expect(labelOf(e, "w6")).toBe(expected(e, "other-name"));
    },
  },
  {
    name: "not rewritten when right: an in-sync reconcile makes zero writes",
    async run(e) {
      e.apply("w7", { size: 1 });
      await e.settle("w7");
      e.advance(GRACE_MS * 2);
      await e.reconcile("w7");
      const writes = e.api.writes().length;
      const res = await e.reconcile("w7");
      expect(res.outcome).toBe("in-sync");
      expect(e.api.writes().length).toBe(writes);
      expect(labelWrites(e)).toHaveLength(1);
    },
  },
  {
    name: "a resource being deleted gets no label write",
    async run(e) {
      e.apply("w8", { size: 1 });
      await e.settle("w8");
      e.api.mutate(e.def, "w8", (o) => {
        delete (o.metadata as { labels?: unknown }).labels;
      });
      await e.delete("w8");
      const before = labelWrites(e).length;
      await e.settle("w8");
      expect(labelWrites(e).length).toBe(before);
    },
  },
];

describe("external-key index label", () => {
  for (const row of rows) {
    it(row.name, async () => {
      await row.run(engine(row.kind ? { kind: row.kind } : {}));
    });
  }

  it("the batched check sends an object without the label to the full reconcile, which writes it", async () => {
    const e = engine({ observeManyMaxItems: 10 });
    e.apply("b1", { size: 1 });
    await e.settle("b1");
    e.advance(GRACE_MS * 2);
    await e.reconcile("b1");
    const labelled = e.get("b1");
    if (!labelled) throw new Error("b1 is missing");
    expect(await e.reconciler.checkMany([labelled], { connectionSecret: () => undefined })).toEqual([
      { inSync: true },
    ]);
    e.api.mutate(e.def, "b1", (o) => {
      delete (o.metadata as { labels?: unknown }).labels;
    });
    const legacy = e.get("b1");
    if (!legacy) throw new Error("b1 is missing");
    expect(await e.reconciler.checkMany([legacy], { connectionSecret: () => undefined })).toEqual([
      { inSync: false, why: "index label to write" },
    ]);
  });
});
