// Crossplane's default external tags (crossplane-kind, crossplane-name, crossplane-providerconfig, and for the
// namespaced shape crossplane-providerconfig-kind and crossplane-namespace): sent with every create, kept
// through updates, never in the spec and never drift. Engine table rows on the in-memory API server and the
// fake cloud, plus the format per cloud.
import { describe, expect, it } from "vitest";
import { asLabelValue, externalTagsOf, tagFieldOf } from "../../../shared/api/external-tags.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Engine, engine } from "../../support/engine.ts";
import { widgetKind } from "../../support/fake-cloud.ts";

const GRACE_MS = 30_000;

async function created(e: Engine, forProvider: Record<string, unknown>) {
  e.apply("w", forProvider);
  for (const _ of [1, 2]) {
    await e.settle("w");
    e.advance(GRACE_MS * 2);
  }
  expect(e.condition("w", "Ready")?.status).toBe("True");
}

const cloudTags = (e: Engine) => [...e.cloud.resources.values()][0]?.tags ?? {};
const defaults = {
  "crossplane-kind": "widget.widgets.fake.driftless.dev",
  "crossplane-name": "w",
  "crossplane-providerconfig": "default",
};

describe("default external tags", () => {
  it("a create carries them beside the user's tags; the spec never gets them; nothing is drift afterwards", async () => {
    const e = engine();
    await created(e, { size: 1, tags: { team: "a" } });
    expect(cloudTags(e)).toMatchObject({ ...defaults, team: "a" });
    expect(e.get("w")?.spec.forProvider).toEqual({ region: "eu-west-1", size: 1, tags: { team: "a" } });
    expect(e.cloud.calls.update).toBe(0);
    const writes = e.api.writes().length;
    expect((await e.reconcile("w")).outcome).toBe("in-sync");
    expect(e.api.writes().length).toBe(writes);
    const listed = e.get("w");
    if (!listed) throw new Error("w is missing");
    expect(await e.reconciler.checkMany([listed], { connectionSecret: () => undefined })).toEqual([
      { inSync: true },
    ]);
  });

  it("a resource whose spec sets no tags still gets them on create, and they are never late-initialized", async () => {
    const e = engine();
    await created(e, { size: 1 });
    expect(cloudTags(e)).toMatchObject(defaults);
    expect(e.get("w")?.spec.forProvider).not.toHaveProperty("tags");
    expect(e.cloud.calls.update).toBe(0);
  });

  it("an update of the user's tags keeps them in the cloud", async () => {
    const e = engine();
    await created(e, { size: 1, tags: { team: "a" } });
    e.api.mutate(e.def, "w", (o) => {
      (o.spec as { forProvider: { tags: Record<string, string> } }).forProvider.tags = { team: "b" };
      (o.metadata as { generation: number }).generation += 1;
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudTags(e)).toMatchObject({ ...defaults, team: "b" });
    expect((await e.reconcile("w")).outcome).toBe("in-sync");
  });

  it("a default tag removed or changed in the console is not drift; a user tag changed is", async () => {
    const e = engine();
    await created(e, { size: 1, tags: { team: "a" } });
    const id = [...e.cloud.resources.keys()][0] ?? "";
    e.cloud.edit(id, (r) => {
      delete r.tags["crossplane-name"];
      r.tags["crossplane-kind"] = "something else";
    });
    expect((await e.reconcile("w")).outcome).toBe("in-sync");
    e.cloud.edit(id, (r) => {
      r.tags.team = "z";
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudTags(e)).toMatchObject({ ...defaults, team: "a" });
  });

  it("a user's own value for a default key wins, and is compared like any tag", async () => {
    const e = engine();
    await created(e, { size: 1, tags: { "crossplane-name": "mine" } });
    expect(cloudTags(e)["crossplane-name"]).toBe("mine");
    const id = [...e.cloud.resources.keys()][0] ?? "";
    e.cloud.edit(id, (r) => {
      r.tags["crossplane-name"] = "w";
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudTags(e)["crossplane-name"]).toBe("mine");
  });

  it("the namespaced shape adds crossplane-namespace and crossplane-providerconfig-kind", () => {
    const def = namespacedVariantOf(widgetKind());
    const tags = externalTagsOf(def, {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: { name: "w", namespace: "team-a" },
      spec: { forProvider: {}, providerConfigRef: { kind: "ProviderConfig", name: "pc" } },
    } as never);
    expect(tags).toEqual({
      "crossplane-kind": "widget.widgets.fake.m.driftless.dev",
      "crossplane-name": "w",
      "crossplane-providerconfig": "pc",
      "crossplane-providerconfig-kind": "ProviderConfig",
      "crossplane-namespace": "team-a",
    });
  });

  it("the tag field is found in the schema: tags (AWS, Azure) or labels (Google, values made valid labels)", async () => {
    const { Topic } = await import("../../../shared/api/gcp/pubsub.ts");
    const { Queue } = await import("../../../shared/api/aws/sqs.ts");
    expect(tagFieldOf(Queue)).toBe("tags");
    expect(tagFieldOf(Topic)).toBe("labels");
    expect(
      externalTagsOf(Topic, { metadata: { name: "T" }, spec: { forProvider: {} } } as never),
    ).toMatchObject({
      "crossplane-kind": "topic_pubsub_gcp_driftless_dev",
    });
    expect(asLabelValue("A.b/C".repeat(20))).toMatch(/^[a-z0-9_-]{1,63}$/);
  });
});
