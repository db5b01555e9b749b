// A resource's home (account and region here; subscription, project, location on the other clouds) is
// recorded at create or import and never followed: the engine table on the in-memory API server and a fake
// cloud that keeps resources per account and region, as the clouds do, so following a changed home would
// show as a second resource.
import { describe, expect, it } from "vitest";
import { providerConfigType } from "../../../shared/api/managed.ts";
import { Annotations, MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { Reason } from "../../../shared/reconciler/reconciler.ts";
import { type Engine, engine } from "../../support/engine.ts";
import { DEFAULT_ACCOUNT } from "../../support/fake-cloud.ts";

const GRACE_MS = 30_000;
const pcType = providerConfigType("aws");

async function ready(e: Engine, name: string) {
  e.apply(name, { size: 1 });
  await e.settle(name);
  e.advance(GRACE_MS * 2);
  await e.settle(name);
  expect(e.condition(name, "Ready")?.status).toBe("True");
}

const setForProvider = (e: Engine, name: string, field: string, value: unknown) =>
  e.api.mutate(e.def, name, (o) => {
    (o.spec as { forProvider: Record<string, unknown> }).forProvider[field] = value;
    (o.metadata as { generation: number }).generation += 1;
  });

const providerConfig = (e: Engine, name: string, account: string) =>
  e.api.seed(pcType, {
    apiVersion: `${pcType.group}/${pcType.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec: { region: "eu-west-1", account },
  });

const home = (e: Engine, name: string) =>
  JSON.parse(e.get(name)?.metadata.annotations?.[Annotations.home] ?? "null");
const mutations = (e: Engine) => e.cloud.calls.create + e.cloud.calls.update + e.cloud.calls.delete;

interface Row {
  name: string;
  run(e: Engine): Promise<void>;
}

const rows: Row[] = [
  {
    name: "a create records its home (account and region) with the create-pending write",
    async run(e) {
      e.apply("w", { size: 1 });
      await e.settle("w");
      expect(home(e, "w")).toEqual({ account: DEFAULT_ACCOUNT, region: "eu-west-1" });
      const pending = e.api
        .writes()
        .find((w) => w.method === "PATCH" && JSON.stringify(w.body).includes(Annotations.createPending));
      expect(JSON.stringify(pending?.body)).toContain(Annotations.home);
    },
  },
  {
    name: "a changed region is refused, never followed: no read, create or delete there, and set back it is in sync",
    async run(e) {
      await ready(e, "w");
      const observes = e.cloud.calls.observe;
      setForProvider(e, "w", "region", "us-east-1");
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("error");
      expect(e.cloud.calls.observe).toBe(observes);
      expect(e.cloud.calls.create).toBe(1);
      expect(e.cloud.resources.size).toBe(1);
      const synced = e.condition("w", "Synced");
      expect(synced?.status).toBe("False");
      expect(synced?.message).toContain('region "eu-west-1"');
      expect(synced?.message).toContain('region "us-east-1"');
      expect(synced?.message).toContain("orphan");
      expect(e.events.filter((ev) => ev.type === "Warning").map((ev) => ev.reason)).toContain(
        Reason.homeChanged,
      );
      setForProvider(e, "w", "region", "eu-west-1");
      await e.settle("w");
      expect(e.condition("w", "Synced")?.status).toBe("True");
      expect(e.condition("w", "Ready")?.status).toBe("True");
      expect(e.cloud.resources.size).toBe(1);
    },
  },
  {
    name: "a providerConfigRef switched to a ProviderConfig of another account is refused",
    async run(e) {
      await ready(e, "w");
      providerConfig(e, "other", "222222222222");
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as Record<string, unknown>).providerConfigRef = { name: "other" };
      });
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.message).toContain(`account "${DEFAULT_ACCOUNT}"`);
      expect(e.condition("w", "Synced")?.message).toContain('account "222222222222"');
      expect(mutations(e)).toBe(1);
    },
  },
  {
    name: "a providerConfigRef switched to a ProviderConfig of the same account is followed",
    async run(e) {
      await ready(e, "w");
      providerConfig(e, "same", DEFAULT_ACCOUNT);
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as Record<string, unknown>).providerConfigRef = { name: "same" };
      });
      const res = await e.reconcile("w");
      expect(res.outcome).toBe("in-sync");
      expect(e.condition("w", "Synced")?.status).toBe("True");
    },
  },
  {
    name: "a ProviderConfig whose credentials now reach another account is refused",
    async run(e) {
      await ready(e, "w");
      e.api.mutate(pcType, "default", (o) => {
        (o.spec as Record<string, unknown>).account = "333333333333";
      });
      e.reconciler.invalidateProviderConfigs();
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.message).toContain('account "333333333333"');
      expect(mutations(e)).toBe(1);
    },
  },
  {
    name: "deleting with a changed home deletes nothing there and keeps the finalizer; orphaning lets it go",
    async run(e) {
      await ready(e, "w");
      setForProvider(e, "w", "region", "us-east-1");
      await e.delete("w");
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.cloud.calls.delete).toBe(0);
      expect(e.hasFinalizer("w")).toBe(true);
      expect(e.condition("w", "Synced")?.message).toContain("nothing was deleted");
      e.api.mutate(e.def, "w", (o) => {
        (o.spec as Record<string, unknown>).deletionPolicy = "Orphan";
      });
      expect((await e.reconcile("w")).outcome).toBe("orphaned");
      expect(e.get("w")).toBeUndefined();
      expect(e.cloud.resources.size).toBe(1);
      expect(e.cloud.calls.delete).toBe(0);
    },
  },
  {
    name: "an import records its home in the finalizer's write, and then writes nothing",
    async run(e) {
      e.cloud.put({ id: "w", name: "w", spec: { region: "eu-west-1", size: 1 }, tags: {} });
      e.apply("w", { size: 1 }, { annotations: { [Annotations.externalName]: "w" } });
      await e.settle("w");
      expect(home(e, "w")).toEqual({ account: DEFAULT_ACCOUNT, region: "eu-west-1" });
      const finalizerWrite = e.api
        .writes()
        .find((w) => w.method === "PATCH" && JSON.stringify(w.body).includes(MANAGED_FINALIZER));
      expect(JSON.stringify(finalizerWrite?.body)).toContain(Annotations.home);
      const before = e.api.writes().length;
      e.advance(GRACE_MS * 2);
      await e.reconcile("w");
      expect(e.api.writes().length).toBe(before);
    },
  },
  {
    name: "a resource from before homes were recorded gets its home once, then writes nothing",
    async run(e) {
      await ready(e, "w");
      e.api.mutate(e.def, "w", (o) => {
        delete (o.metadata as { annotations: Record<string, string> }).annotations[Annotations.home];
      });
      const before = e.api.writes().length;
      expect((await e.reconcile("w")).outcome).toBe("in-sync");
      expect(e.api.writes().length).toBe(before + 1);
      expect(home(e, "w")).toEqual({ account: DEFAULT_ACCOUNT, region: "eu-west-1" });
      await e.reconcile("w");
      expect(e.api.writes().length).toBe(before + 1);
    },
  },
  {
    name: "a create that failed pins nothing: the region may be corrected and the resource made there",
    async run(e) {
      e.cloud.failNext("create", () => new Error("InvalidParameterValue: region not enabled"));
      e.apply("w", { size: 1 });
      expect((await e.reconcile("w")).outcome).toBe("error");
      setForProvider(e, "w", "region", "us-east-1");
      await e.settle("w");
      e.advance(GRACE_MS * 2);
      await e.settle("w");
      expect(e.condition("w", "Ready")?.status).toBe("True");
      expect([...e.cloud.resources.values()].map((r) => r.home?.region)).toEqual(["us-east-1"]);
      expect(home(e, "w")).toEqual({ account: DEFAULT_ACCOUNT, region: "us-east-1" });
    },
  },
  {
    name: "an interrupted create pins its home: a changed region never creates a second resource",
    async run(e) {
      e.apply("w", { size: 1 });
      const inFlight = await e.createInFlight("w", "after");
      setForProvider(e, "w", "region", "us-east-1");
      e.advance(120_000);
      expect((await e.reconcile("w", e.newReconciler())).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.message).toContain('region "us-east-1"');
      inFlight.release();
      await inFlight.result;
      expect(e.cloud.calls.create).toBe(1);
      expect(e.cloud.resources.size).toBe(1);
    },
  },
  {
    name: "the batched check never settles a changed home, and never reads there",
    async run(e) {
      await ready(e, "w");
      setForProvider(e, "w", "region", "us-east-1");
      const listed = e.get("w");
      if (!listed) throw new Error("w is missing");
      const observes = e.cloud.calls.observe + e.cloud.calls.observeMany;
      expect(await e.reconciler.checkMany([listed], { connectionSecret: () => undefined })).toEqual([
        { inSync: false, why: Reason.homeChanged },
      ]);
      expect(e.cloud.calls.observe + e.cloud.calls.observeMany).toBe(observes);
    },
  },
  {
    name: "an unreadable home record is a changed home, never none",
    async run(e) {
      await ready(e, "w");
      e.api.mutate(e.def, "w", (o) => {
        (o.metadata as { annotations: Record<string, string> }).annotations[Annotations.home] = "not json";
      });
      expect((await e.reconcile("w")).outcome).toBe("error");
      expect(e.condition("w", "Synced")?.message).toContain(Annotations.home);
      expect(mutations(e)).toBe(1);
    },
  },
];

describe("a resource's home never moves silently", () => {
  it.each(rows)("$name", async (row) => row.run(engine({ reconciler: { providerConfigTtlMs: 0 } })));
});
