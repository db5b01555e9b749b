// Two generated kinds whose create request holds the resource beside other fields, on a real kube-apiserver
// against the generic fake: Spanner's InstanceConfig (`CreateInstanceConfig {parent, instance_config_id,
// instance_config, validate_only}`, a long-running create) and Cloud Tasks' Task (`CreateTask {parent, task,
// response_view}`). The id beside the resource is a spec field sent only in the create and recorded
// (googleapis.driftless.dev/created-with-id); the request controls (`validate_only`, `response_view`) are no
// spec fields and are never sent. A change of what only the create takes is refused with nothing sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import {
  CREATED_ID_ANNOTATION,
  CREATED_WITH_ANNOTATION,
} from "../../../shared/providers/gcp/generic/client.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, refusedWithNothingSent, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("gcpin");
const [CONFIG, TASK] = ["spanner.googleapis.com/InstanceConfig", "cloudtasks.googleapis.com/Task"];
const bed = googleGenTestbed(kube, PC, [CONFIG, TASK]);
const [config, task] = [bed.def(CONFIG), bed.def(TASK)];

// Operations take one look to finish: the create is followed by a later reconcile, as with Google.
beforeAll(() => bed.start({ opPolls: 1 }), 120_000);
afterAll(() => bed.close());

const settled = async (def: typeof config, name: string) => {
  for (const _ of [1, 2]) await settle(bed.reconciler, keyOf(def, name));
  return getMr<Json>(kube, def, name);
};

/** A managed resource of `def` with this forProvider and no connection Secret. */
const make = (def: typeof config, name: string, forProvider: Json) =>
  kube.create(def, managedObject(def, name, PC, { forProvider, connectionSecret: false }));

/** POSTs to one API since `before` (the fake's stats then). */
const posts = (before: Record<string, number>, api: string) =>
  requestsSince(bed.fake, before, new RegExp(`^POST ${api} `)).reduce(
    (n, [k, now]) => n + now - (before[k] ?? 0),
    0,
  );

/** The forProvider fields a kind's CRD takes (the request controls must not be among them). */
const specFields = (def: typeof config) => Object.keys(def.forProvider.shape ?? {});

describe("create-time inputs beside the resource: Spanner InstanceConfig and Cloud Tasks Task", () => {
  it("InstanceConfig: created with its id beside it (long-running), Ready, the id recorded; a changed id refused with nothing sent; delete", {
    timeout: 180_000,
  }, async () => {
    expect(specFields(config)).toContain("instanceConfigId");
    expect(specFields(config)).not.toContain("validateOnly");
    const project = gcpProject();
    const name = uniqueName("spcfg");
    const id = `custom-${Date.now().toString(36)}`;
    const before = bed.fake.stats();
    await make(config, name, {
      instanceConfigId: id,
      displayName: "driftless test",
      baseConfig: `projects/${project}/instanceConfigs/regional-us-central1`,
      labels: { team: "a" },
    });
    const mr = await settled(config, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    const full = `projects/${project}/instanceConfigs/${id}`;
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(full);
    // The id went beside the config, recorded as sent (Google never answers it); nothing else beside it.
    expect(mr?.metadata.annotations?.[CREATED_ID_ANNOTATION]).toBe(id);
    expect(JSON.parse(mr?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toBeNull();
    expect(bed.fake.resource(full)).toMatchObject({ name: full, displayName: "driftless test" });
    expect(bed.fake.resource(full)).not.toHaveProperty("instanceConfigId");
    // One create (a POST), followed through its operation; no second one.
    expect(posts(before, "spanner")).toBe(1);

    // An in-place change still goes out (the update with its mask); then a changed id is refused.
    await kube.patch(config, name, { spec: { forProvider: { displayName: "renamed" } } });
    await settled(config, name);
    await settled(config, name);
    expect(bed.fake.resource(full)).toMatchObject({ displayName: "renamed" });
    await refusedWithNothingSent(
      kube,
      bed,
      config,
      name,
      { instanceConfigId: `${id}-2` },
      "instanceConfigId",
    );
    expect(bed.fake.resource(`projects/${project}/instanceConfigs/${id}-2`)).toBeUndefined();
    await kube.patch(config, name, { spec: { forProvider: { instanceConfigId: id } } });
    const back = await settled(config, name);
    expect(conditionOf(back, "Synced"), JSON.stringify(back?.status)).toMatchObject({ status: "True" });

    await kube.delete(config, name);
    await settled(config, name);
    expect(await getMr(kube, config, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });

  it("Task: created beside no control (response_view is none of its spec), Ready under its queue; a change refused with nothing sent (no update method); delete", {
    timeout: 180_000,
  }, async () => {
    expect(specFields(task)).not.toContain("responseView");
    const queue = `projects/${gcpProject()}/locations/us-central1/queues/${uniqueName("q")}`;
    const name = uniqueName("task");
    const httpRequest = { url: "https://example.com/hook", httpMethod: "POST" };
    const before = bed.fake.stats();
    await make(task, name, { parent: queue, httpRequest, dispatchDeadline: "30s" });
    const mr = await settled(task, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    // Google names the task: its full name under the queue is the external name.
    const full = String(mr?.metadata.annotations?.[Annotations.externalName]);
    expect(full).toMatch(new RegExp(`^${queue}/tasks/[^/]+$`));
    expect(bed.fake.resource(full)).toMatchObject({ httpRequest, dispatchDeadline: "30s" });
    expect(posts(before, "cloudtasks")).toBe(1);
    // Every field is the create's: a change is refused, no second task.
    await refusedWithNothingSent(
      kube,
      bed,
      task,
      name,
      { httpRequest: { ...httpRequest, url: "https://example.com/other" } },
      "httpRequest",
    );
    expect(bed.fake.resource(full)).toMatchObject({ httpRequest });
    expect(posts(before, "cloudtasks")).toBe(1);
    await kube.patch(task, name, { spec: { forProvider: { httpRequest } } });
    expect(conditionOf(await settled(task, name), "Synced")).toMatchObject({ status: "True" });

    await kube.delete(task, name);
    await settled(task, name);
    expect(await getMr(kube, task, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });
});
