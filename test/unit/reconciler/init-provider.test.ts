// spec.initProvider, as Crossplane has it: fields set on create only, then left to others. The engine table
// on the in-memory API server and the fake cloud.
import { describe, expect, it } from "vitest";
import { initProviderSchema, managedCrd } from "../../../shared/api/crd.ts";
import { type Engine, engine } from "../../support/engine.ts";

const GRACE_MS = 30_000;

async function readyWith(
  e: Engine,
  forProvider: Record<string, unknown>,
  initProvider: Record<string, unknown>,
) {
  e.apply("w", forProvider, { spec: { initProvider } });
  await e.settle("w");
  e.advance(GRACE_MS * 2);
  await e.settle("w");
  expect(e.condition("w", "Ready")?.status).toBe("True");
}

const cloudSpec = (e: Engine) => [...e.cloud.resources.values()][0]?.spec;

describe("spec.initProvider", () => {
  it("is sent with the create, under forProvider: forProvider wins where both set a field", async () => {
    const e = engine();
    await readyWith(e, { size: 2 }, { size: 9, color: "red", tags: { team: "a" } });
    expect(cloudSpec(e)).toMatchObject({ size: 2, color: "red" });
    expect([...e.cloud.resources.values()][0]?.tags).toMatchObject({ team: "a" });
    expect(e.cloud.calls.create).toBe(1);
  });

  it("is left to others after create: a change in the cloud is no drift and never late-initialized into forProvider", async () => {
    const e = engine();
    await readyWith(e, { size: 2 }, { color: "red" });
    const [r] = [...e.cloud.resources.values()];
    e.cloud.edit(r?.id ?? "", (c) => {
      c.spec.color = "green"; // an autoscaler or a console changed it
    });
    const before = e.api.writes().length;
    const res = await e.reconcile("w");
    expect(res.outcome).toBe("in-sync");
    expect(e.cloud.calls.update).toBe(0);
    expect(e.api.writes().length).toBe(before);
    const listed = e.get("w");
    if (!listed) throw new Error("w is missing");
    expect((listed.spec.forProvider as { color?: string }).color).toBeUndefined();
    expect(await e.reconciler.checkMany([listed], { connectionSecret: () => undefined })).toEqual([
      { inSync: true },
    ]);
  });

  it("a field forProvider sets is compared as always, whatever initProvider says", async () => {
    const e = engine();
    await readyWith(e, { size: 2 }, { size: 9 });
    const [r] = [...e.cloud.resources.values()];
    e.cloud.edit(r?.id ?? "", (c) => {
      c.spec.size = 3;
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudSpec(e)?.size).toBe(2);
  });

  it("what a create would send must be valid as a whole: a bad initProvider field is named in Synced, and nothing is created", async () => {
    const e = engine();
    e.apply("w", {}, { spec: { initProvider: { size: 500 } } });
    expect((await e.reconcile("w")).outcome).toBe("error");
    expect(e.condition("w", "Synced")?.message).toContain(
      "invalid spec: spec.initProvider (merged with spec.forProvider).size",
    );
    expect(e.cloud.calls.create).toBe(0);
  });

  it("is in the CRD beside forProvider, with nothing required and no defaults", () => {
    const e = engine();
    const crd = managedCrd(e.def) as unknown as {
      spec: {
        versions: Array<{
          schema: {
            openAPIV3Schema: {
              properties: { spec: { properties: Record<string, Record<string, unknown>> } };
            };
          };
        }>;
      };
    };
    const spec = crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties ?? {};
    expect(spec.initProvider?.type).toBe("object");
    expect(JSON.stringify(spec.initProvider)).not.toMatch(/"required"|"default"/);
    expect(Object.keys(spec.initProvider?.properties as object)).toEqual(
      Object.keys(spec.forProvider?.properties as object),
    );
    expect(JSON.stringify(spec.forProvider)).toContain('"default"');
    expect(
      initProviderSchema({
        type: "object",
        required: ["a"],
        properties: { a: { type: "string", default: "x" } },
      }),
    ).toMatchObject({
      type: "object",
      properties: { a: { type: "string" } },
    });
  });
});
