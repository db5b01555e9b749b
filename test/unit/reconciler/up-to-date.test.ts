// The UpToDate condition (crossplane-runtime's reasons: ObserveMatched, UpdateRequested, UpdateRestricted,
// UpdateFailed) and the update-loop detector: a field the cloud changes back right after every update is
// updated a bounded number of times, then left alone with UpToDate=False naming it. Engine table rows on the
// in-memory API server and the fake cloud.
import { describe, expect, it } from "vitest";
import type { FieldBehaviour } from "../../../shared/api/managed.ts";
import { DEFAULT_UPDATE_LOOP_LIMIT, Reason } from "../../../shared/reconciler/reconciler.ts";
import { type Engine, type EngineOptions, engine } from "../../support/engine.ts";

interface Row {
  name: string;
  opts?: EngineOptions;
  run(e: Engine): Promise<void>;
}

const GRACE_MS = 30_000;

/** Creates `name`, past the creation grace period, until it is Ready. */
async function ready(e: Engine, name: string, forProvider: Record<string, unknown>, extra = {}) {
  e.apply(name, forProvider, extra);
  for (const _ of [1, 2]) {
    await e.settle(name);
    e.advance(GRACE_MS * 2);
  }
  expect(e.condition(name, "Ready")?.status).toBe("True");
}

/** Another writer that sets size to `size` now and right after every update. */
function fightOverSize(e: Engine, size: number) {
  const set = (r: { spec: Record<string, unknown> }) => {
    r.spec.size = size;
  };
  e.cloud.afterUpdate = set;
  e.cloud.edit(cloudRes(e).id, set);
}

const cloudRes = (e: Engine) => {
  const r = [...e.cloud.resources.values()][0];
  if (!r) throw new Error("nothing in the cloud");
  return r;
};

const setSpec = (e: Engine, name: string, change: (fp: Record<string, unknown>) => void) =>
  e.api.mutate(e.def, name, (o) => {
    change((o.spec as { forProvider: Record<string, unknown> }).forProvider);
    (o.metadata as { generation: number }).generation += 1;
  });

const inSync = async (e: Engine, name: string) => {
  const listed = e.get(name);
  if (!listed) throw new Error(`${name} is missing`);
  return (await e.reconciler.checkMany([listed], { connectionSecret: () => undefined }))[0];
};

const rows: Row[] = [
  {
    name: "in sync: UpToDate=True ObserveMatched, and an in-sync reconcile then writes nothing",
    async run(e) {
      await ready(e, "w", { size: 1 });
      expect(e.condition("w", "UpToDate")).toMatchObject({ status: "True", reason: "ObserveMatched" });
      const writes = e.api.writes().length;
      expect((await e.reconcile("w")).outcome).toBe("in-sync");
      expect(e.api.writes().length).toBe(writes);
      expect(await inSync(e, "w")).toEqual({ inSync: true });
    },
  },
  {
    name: "drift with Update allowed: UpToDate=False UpdateRequested naming the field, then ObserveMatched once the cloud shows it",
    async run(e) {
      await ready(e, "w", { size: 2 });
      e.cloud.edit(cloudRes(e).id, (r) => {
        r.spec.size = 3;
      });
      expect((await e.reconcile("w")).outcome).toBe("updated");
      const requested = e.condition("w", "UpToDate");
      expect(requested).toMatchObject({ status: "False", reason: "UpdateRequested" });
      expect(requested?.message).toContain("size");
      await e.reconcile("w");
      expect(e.condition("w", "UpToDate")).toMatchObject({ status: "True", reason: "ObserveMatched" });
    },
  },
  {
    name: "drift without the Update policy: no update, UpToDate=False UpdateRestricted naming the field, Synced=True",
    async run(e) {
      await ready(e, "w", { size: 2 }, { spec: { managementPolicies: ["Observe", "Create", "Delete"] } });
      e.cloud.edit(cloudRes(e).id, (r) => {
        r.spec.size = 3;
      });
      expect((await e.reconcile("w")).outcome).toBe("in-sync");
      expect(e.cloud.calls.update).toBe(0);
      const c = e.condition("w", "UpToDate");
      expect(c).toMatchObject({ status: "False", reason: "UpdateRestricted" });
      expect(c?.message).toContain("size");
      expect(e.condition("w", "Synced")?.status).toBe("True");
      const writes = e.api.writes().length;
      await e.reconcile("w");
      expect(e.api.writes().length).toBe(writes);
    },
  },
  {
    name: "an update the cloud refuses: UpToDate=False UpdateFailed with the error, Synced=False",
    async run(e) {
      await ready(e, "w", { size: 2 });
      e.cloud.edit(cloudRes(e).id, (r) => {
        r.spec.size = 3;
      });
      e.cloud.failNext("update", () => new Error("quota exceeded"));
      expect((await e.reconcile("w")).outcome).toBe("error");
      const c = e.condition("w", "UpToDate");
      expect(c).toMatchObject({ status: "False", reason: "UpdateFailed" });
      expect(c?.message).toContain("quota exceeded");
      expect(e.condition("w", "Synced")?.status).toBe("False");
    },
  },
  {
    name: "an immutable field drifted: UpToDate=False UpdateFailed, no update",
    async run(e) {
      await ready(e, "w", { size: 2 });
      e.cloud.edit(cloudRes(e).id, (r) => {
        r.spec.region = "us-east-1";
      });
      await e.reconcile("w");
      expect(e.cloud.calls.update).toBe(0);
      expect(e.condition("w", "UpToDate")).toMatchObject({ status: "False", reason: "UpdateFailed" });
    },
  },
  {
    name: "update loop: a field changed back right after each update is updated N times, then left alone with UpToDate=False naming it and both values, one Warning event",
    async run(e) {
      await ready(e, "w", { size: 2 });
      fightOverSize(e, 5); // an autoscaler that owns the field
      for (let i = 0; i < DEFAULT_UPDATE_LOOP_LIMIT + 3; i++) {
        await e.reconcile("w");
        e.advance(5_000);
      }
      expect(e.cloud.calls.update).toBe(DEFAULT_UPDATE_LOOP_LIMIT);
      const c = e.condition("w", "UpToDate");
      expect(c).toMatchObject({ status: "False", reason: "UpdateFailed" });
      expect(c?.message).toContain("size (spec: 2, cloud: 5)");
      expect(e.condition("w", "Synced")).toMatchObject({ status: "False" });
      expect(e.events.filter((ev) => ev.reason === Reason.updateLoop)).toHaveLength(1);
      expect(e.events.find((ev) => ev.reason === Reason.updateLoop)?.type).toBe("Warning");
      // Stopped: later reconciles call nothing, write nothing, and wait for the poll interval (backed off).
      const writes = e.api.writes().length;
      const res = await e.reconcile("w");
      expect(res.requeueAfterMs).toBeUndefined();
      expect(res.pollAfterMs).toBeGreaterThan(0);
      expect(e.api.writes().length).toBe(writes);
      expect(e.cloud.calls.update).toBe(DEFAULT_UPDATE_LOOP_LIMIT);
      expect(await inSync(e, "w")).toEqual({ inSync: true });
    },
  },
  {
    name: "update loop: a new spec (generation) resumes updates",
    async run(e) {
      await ready(e, "w", { size: 2 });
      fightOverSize(e, 5);
      for (let i = 0; i < DEFAULT_UPDATE_LOOP_LIMIT + 2; i++) await e.reconcile("w");
      expect(e.cloud.calls.update).toBe(DEFAULT_UPDATE_LOOP_LIMIT);
      e.cloud.afterUpdate = undefined;
      setSpec(e, "w", (fp) => {
        fp.size = 4;
      });
      expect((await e.reconcile("w")).outcome).toBe("updated");
      await e.reconcile("w");
      expect(cloudRes(e).spec.size).toBe(4);
      expect(e.condition("w", "UpToDate")).toMatchObject({ status: "True", reason: "ObserveMatched" });
      expect(e.condition("w", "Synced")?.status).toBe("True");
    },
  },
  {
    name: "no loop: drift that comes back after the cloud was seen in sync is updated every time",
    async run(e) {
      await ready(e, "w", { size: 2 });
      for (let i = 0; i < DEFAULT_UPDATE_LOOP_LIMIT + 2; i++) {
        e.cloud.edit(cloudRes(e).id, (r) => {
          r.spec.size = 7;
        });
        expect((await e.reconcile("w")).outcome).toBe("updated");
        expect((await e.reconcile("w")).outcome).toBe("in-sync");
      }
      expect(e.cloud.calls.update).toBe(DEFAULT_UPDATE_LOOP_LIMIT + 2);
      expect(e.reasons("w")).not.toContain(Reason.updateLoop);
    },
  },
  {
    name: "update loop on a sensitive field: its values never reach the condition or the event",
    opts: {
      kind: {
        fields: {
          password: { writeOnly: true },
          color: { sensitive: true } as FieldBehaviour,
        },
      },
    },
    async run(e) {
      await ready(e, "w", { size: 2, color: "s3cr3t-value" });
      e.cloud.afterUpdate = (r) => {
        r.spec.color = "0ther-value";
      };
      e.cloud.edit(cloudRes(e).id, (r) => {
        r.spec.color = "0ther-value";
      });
      for (let i = 0; i < DEFAULT_UPDATE_LOOP_LIMIT + 2; i++) await e.reconcile("w");
      const c = e.condition("w", "UpToDate");
      expect(c?.message).toContain("color (spec: (redacted), cloud: (redacted))");
      const text = JSON.stringify([e.get("w")?.status, e.events, e.logs]);
      expect(text).not.toContain("s3cr3t-value");
      expect(text).not.toContain("0ther-value");
    },
  },
  {
    name: "a limit set on the engine: updateLoopLimit 1 stops after one update",
    opts: { reconciler: { updateLoopLimit: 1 } },
    async run(e) {
      await ready(e, "w", { size: 2 });
      fightOverSize(e, 5);
      for (let i = 0; i < 4; i++) await e.reconcile("w");
      expect(e.cloud.calls.update).toBe(1);
      expect(e.reasons("w")).toContain(Reason.updateLoop);
    },
  },
];

describe("UpToDate and the update-loop detector", () => {
  for (const row of rows) {
    it(row.name, async () => {
      await row.run(engine(row.opts));
    });
  }
});

describe("change log: one structured record per external create, update and delete", () => {
  const changeLogs = (e: Engine) =>
    e.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "external change");

  it("records the object, the verb, the trigger and each changed field before → after", async () => {
    const e = engine();
    await ready(e, "w", { size: 2 });
    e.cloud.edit(cloudRes(e).id, (r) => {
      r.spec.size = 3;
    });
    await e.reconcile("w");
    setSpec(e, "w", (fp) => {
      fp.size = 4;
    });
    await e.reconcile("w");
    await e.delete("w");
    await e.settle("w");
    const logs = changeLogs(e);
    expect(logs.map((l) => [l.verb, l.trigger])).toEqual([
      ["create", "not found in the cloud"],
      ["update", "cloud drift"],
      ["update", "spec change"],
      ["delete", "managed resource deleted"],
    ]);
    expect(logs[1]).toMatchObject({
      object: { apiVersion: e.def.apiVersion, kind: "Widget", name: "w" },
      externalName: "w",
      changes: [{ field: "size", before: 3, after: 2 }],
    });
    expect(logs[2]).toMatchObject({ changes: [{ field: "size", before: 2, after: 4 }] });
  });

  it("never logs a sensitive field's values", async () => {
    const e = engine({
      kind: { fields: { password: { writeOnly: true }, color: { sensitive: true } as FieldBehaviour } },
    });
    await ready(e, "w", { size: 2, color: "s3cr3t-value" });
    e.cloud.edit(cloudRes(e).id, (r) => {
      r.spec.color = "0ther-value";
    });
    await e.reconcile("w");
    const update = changeLogs(e).find((l) => l.verb === "update");
    expect(update?.changes).toEqual([{ field: "color", before: "(redacted)", after: "(redacted)" }]);
    expect(e.logs.join("\n")).not.toContain("s3cr3t-value");
    expect(e.logs.join("\n")).not.toContain("0ther-value");
  });
});
