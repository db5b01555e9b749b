// Crossplane's default external tags (crossplane-kind, crossplane-name, crossplane-providerconfig, and for the
// namespaced shape crossplane-namespace): added to the desired tags on create, the user's value winning on a
// clash, kept by updates of a spec's own tags, never written into the spec, never drift. Engine rows on the
// in-memory API server and the fake cloud; the keys and formats per kind as data.
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { asLabelValue, defaultTagsOf } from "../../../shared/api/external-tags.ts";
import { Topic } from "../../../shared/api/gcp/pubsub.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import { type ManagedResource, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { type Engine, type EngineOptions, engine } from "../../support/engine.ts";
import { widgetKind } from "../../support/fake-cloud.ts";

const GRACE_MS = 30_000;
const tagged: EngineOptions = { kind: { tagging: { field: "tags", format: "tags" } } };

async function created(e: Engine, forProvider: Record<string, unknown>) {
  e.apply("w", forProvider);
  for (const _ of [1, 2]) {
    await e.settle("w");
    e.advance(GRACE_MS * 2);
  }
  expect(e.condition("w", "Ready")?.status).toBe("True");
}

/** The cloud's tags without the fake's ownership tag (the uid, for provider-chosen names). */
const cloudTags = (e: Engine) => {
  const { "driftless.dev/owner": _owner, ...tags } = [...e.cloud.resources.values()][0]?.tags ?? {};
  return tags;
};
const defaults = {
  "crossplane-kind": "widget.widgets.fake.driftless.dev",
  "crossplane-name": "w",
  "crossplane-providerconfig": "default",
};
const mr = (over: Partial<ManagedResource["metadata"]>, spec: Record<string, unknown> = {}) =>
  ({ metadata: { name: "w", ...over }, spec: { forProvider: {}, ...spec } }) as ManagedResource;

describe("default external tags", () => {
  it("a create carries them beside the user's tags; the spec never gets them; nothing is drift afterwards", async () => {
    const e = engine(tagged);
    await created(e, { size: 1, tags: { team: "a" } });
    expect(cloudTags(e)).toEqual({ ...defaults, team: "a" });
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

  it("a resource whose spec sets no tags gets them on create, and they are never late-initialized", async () => {
    const e = engine(tagged);
    await created(e, { size: 1 });
    expect(cloudTags(e)).toEqual(defaults);
    expect(e.get("w")?.spec.forProvider).not.toHaveProperty("tags");
    expect(e.cloud.calls.update).toBe(0);
  });

  it("an update of the user's tags keeps them in the cloud", async () => {
    const e = engine(tagged);
    await created(e, { size: 1, tags: { team: "a" } });
    e.api.mutate(e.def, "w", (o) => {
      (o.spec as { forProvider: { tags: Record<string, string> } }).forProvider.tags = { team: "b" };
      (o.metadata as { generation: number }).generation += 1;
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudTags(e)).toEqual({ ...defaults, team: "b" });
    expect((await e.reconcile("w")).outcome).toBe("in-sync");
  });

  it("a default tag removed or changed in the console is not drift; a user tag changed is, and the update restores both", async () => {
    const e = engine(tagged);
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
    expect(cloudTags(e)).toEqual({ ...defaults, team: "a" });
  });

  it("a user's own value for a default key wins, and is compared like any tag", async () => {
    const e = engine(tagged);
    await created(e, { size: 1, tags: { "crossplane-name": "mine" } });
    expect(cloudTags(e)["crossplane-name"]).toBe("mine");
    const id = [...e.cloud.resources.keys()][0] ?? "";
    e.cloud.edit(id, (r) => {
      r.tags["crossplane-name"] = "w";
    });
    expect((await e.reconcile("w")).outcome).toBe("updated");
    expect(cloudTags(e)["crossplane-name"]).toBe("mine");
  });

  it("turned off (--skip-default-tags): a create sends the user's tags alone", async () => {
    const e = engine({ ...tagged, reconciler: { defaultTags: false } });
    await created(e, { size: 1, tags: { team: "a" } });
    expect(cloudTags(e)).toEqual({ team: "a" });
  });

  it("a kind that is not taggable gets none", async () => {
    const e = engine();
    await created(e, { size: 1, tags: { team: "a" } });
    expect(cloudTags(e)).toEqual({ team: "a" });
  });

  it("the namespaced shape adds crossplane-namespace", () => {
    const def = namespacedVariantOf(widgetKind({ tagging: { field: "tags", format: "tags" } }));
    const tags = defaultTagsOf(
      def,
      mr({ namespace: "team-a" }, { providerConfigRef: { kind: "ProviderConfig", name: "pc" } }),
    );
    expect(tags).toEqual({
      "crossplane-kind": "widget.widgets.fake.m.driftless.dev",
      "crossplane-name": "w",
      "crossplane-providerconfig": "pc",
      "crossplane-namespace": "team-a",
    });
  });

  it("where tags live is the kind's data: tags (AWS, Azure) or labels (Google, values made valid labels)", () => {
    expect(Queue.tagging).toEqual({ field: "tags", format: "tags" });
    expect(Topic.tagging).toEqual({ field: "labels", format: "labels" });
    expect(defaultTagsOf(Topic, mr({ name: "My.Topic" }))).toEqual({
      "crossplane-kind": "topic.pubsub.gcp.driftless.dev".replaceAll(".", "_"),
      "crossplane-name": "my_topic",
      "crossplane-providerconfig": "default",
    });
    expect(asLabelValue("A.b/C".repeat(20))).toMatch(/^[a-z0-9_-]{63}$/);
  });

  it("generated kinds are taggable where the cloud's schema says so (awscc tagging, ARM tags, Google labels)", () => {
    const one = <E extends { kind: string; group: string }>(kinds: E[], kind: string, group: string) => {
      const e = kinds.find((k) => k.kind === kind && k.group.startsWith(group));
      if (!e) throw new Error(`${kind}.${group} is not generated`);
      return e;
    };
    const aws = loadAwsccCatalog().kinds;
    expect(awsccKindOf(loadAwsccSpec(one(aws, "Queue", "sqs."))).tagging).toEqual({
      field: "tags",
      format: "tags",
    });
    // AWS::IAM::ManagedPolicy: the registry says tagging.taggable false.
    expect(awsccKindOf(loadAwsccSpec(one(aws, "ManagedPolicy", "iam."))).tagging).toBeUndefined();
    const azure = loadAzureCatalog().kinds;
    const org = azureGenKindOf(loadAzureSpec(one(azure, "Organization", "arizeai-observabilityeval.")));
    expect(org.tagging).toEqual({ field: "tags", format: "tags" });
    const google = loadGoogleCatalog().kinds;
    const auth = googleKindOf(loadGoogleSpec(one(google, "AuthProvider", "agentidentity.")));
    expect(auth.tagging).toEqual({ field: "labels", format: "labels" });
  });
});
