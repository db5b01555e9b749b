// The parsers (documented samples) and the resolution of events to keys: which kinds are candidates,
// what is dropped before any LIST, and that one label-selected LIST per candidate kind finds the resource.
import { describe, expect, it } from "vitest";
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { parseAuditLogData } from "../../../shared/cloud-events/audit-log.ts";
import { type CloudTrailEvent, parseEventBridgeBody } from "../../../shared/cloud-events/cloudtrail.ts";
import { CloudEventResolver } from "../../../shared/cloud-events/resolve.ts";
import { SHAPE_MARKS, SHAPE_MARKS_REF, shapeKeyOf } from "../../../shared/reconciler/shape-marks.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { clusterWith, fixture, kindOf, marksUnreachable } from "./support.ts";

const queue = kindOf("Queue", "sqs.aws");
const vpc = kindOf("VPC", "ec2.aws");
const subnet = kindOf("Subnet", "ec2.aws");
const sg = kindOf("SecurityGroup", "ec2.aws");
const topic = kindOf("Topic", "pubsub.gcp");
const subscription = kindOf("Subscription", "pubsub.gcp");
const vnet = kindOf("VirtualNetwork", "network.azure");
const azSubnet = kindOf("Subnet", "network.azure");
const allAws = [queue, vpc, subnet, sg, kindOf("Bucket", "s3.aws"), kindOf("DBInstance", "rds.aws")];

function cloudTrail(name: string, replace: Record<string, string> = {}): CloudTrailEvent {
  const parsed = parseEventBridgeBody(fixture(name, replace));
  if (parsed.kind !== "event") throw new Error(`fixture ${name} does not parse: ${JSON.stringify(parsed)}`);
  return parsed.event;
}

describe("parseEventBridgeBody", () => {
  it("reads the documented CloudTrail samples", () => {
    const e = cloudTrail("aws-sqs-set-queue-attributes.json");
    expect(e.source).toBe("aws.sqs");
    expect(e.detail.eventName).toBe("SetQueueAttributes");
    expect(e.detail.requestParameters?.queueUrl).toContain("/orders-queue");
    expect(cloudTrail("aws-ec2-modify-vpc-attribute.json").detail.eventName).toBe("ModifyVpcAttribute");
    expect(cloudTrail("aws-ec2-create-tags.json").detail.eventName).toBe("CreateTags");
  });

  it("says not-eventbridge for driftless messages and non-JSON, malformed for a broken event", () => {
    expect(parseEventBridgeBody('{"v":1,"apiVersion":"a/v1","kind":"K","name":"n"}').kind).toBe(
      "not-eventbridge",
    );
    expect(parseEventBridgeBody("not json").kind).toBe("not-eventbridge");
    const broken = JSON.parse(fixture("aws-sqs-set-queue-attributes.json"));
    delete broken.detail.eventName;
    const parsed = parseEventBridgeBody(JSON.stringify(broken));
    expect(parsed).toMatchObject({ kind: "malformed", id: broken.id });
    if (parsed.kind === "malformed") expect(parsed.error).toContain("detail.eventName");
    const otherType = {
      ...JSON.parse(fixture("aws-sqs-set-queue-attributes.json")),
      "detail-type": "EC2 Instance State-change Notification",
    };
    expect(parseEventBridgeBody(JSON.stringify(otherType)).kind).toBe("malformed");
  });

  it("never quotes the body in its error", () => {
    const broken = JSON.parse(fixture("aws-sqs-set-queue-attributes.json"));
    broken.detail.eventSource = 42;
    const parsed = parseEventBridgeBody(JSON.stringify(broken));
    expect(parsed.kind).toBe("malformed");
    expect(JSON.stringify(parsed)).not.toContain("orders-queue");
  });
});

describe("parseAuditLogData", () => {
  it("reads the documented Admin Activity samples", () => {
    const t = parseAuditLogData(Buffer.from(fixture("gcp-pubsub-update-topic.json")));
    expect(t).toMatchObject({
      kind: "entry",
      entry: { protoPayload: { methodName: "google.pubsub.v1.Publisher.UpdateTopic" } },
    });
    const s = parseAuditLogData(Buffer.from(fixture("gcp-pubsub-update-subscription.json")));
    expect(s).toMatchObject({
      kind: "entry",
      entry: { protoPayload: { resourceName: "projects/demo-project/subscriptions/orders-worker" } },
    });
  });

  it("says not-audit-log for other data and malformed for a broken entry", () => {
    expect(parseAuditLogData(Buffer.from('{"v":1}')).kind).toBe("not-audit-log");
    const broken = JSON.parse(fixture("gcp-pubsub-update-topic.json"));
    delete broken.protoPayload.methodName;
    expect(parseAuditLogData(Buffer.from(JSON.stringify(broken)))).toMatchObject({
      kind: "malformed",
      id: broken.insertId,
    });
  });
});

describe("CloudEventResolver", () => {
  it("SetQueueAttributes: one LIST of the Queue kind finds the queue by its external name", async () => {
    const { api, kube } = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
    const r = new CloudEventResolver({ kube, kinds: allAws });
    const res = await r.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"));
    expect(res.keys).toEqual([{ apiVersion: queue.definition.apiVersion, kind: "Queue", name: "orders" }]);
    expect(res.lists).toBe(1);
    expect(api.requests.filter((q) => q.method === "GET")).toHaveLength(1);
  });

  it("both shapes of Queue: one LIST per event once a container has found one (the shape that answered first)", async () => {
    const nsQueue = kindOf("Queue", "sqs.aws.m");
    const both = [queue, nsQueue];
    // A namespaced queue, with the mark the engine writes before its first label (shape-marks.ts): its
    // shape in use; the cluster-scoped shape has no mark yet.
    const api = new MemoryApiServer();
    const def = nsQueue.definition;
    api.seed(def, {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: {
        name: "orders",
        namespace: "shop",
        annotations: { [Annotations.externalName]: "orders-queue" },
        labels: { [EXTERNAL_KEY_LABEL]: externalKeyOf(def, "orders-queue") },
      },
      spec: { forProvider: {} },
    });
    const marks = (data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: SHAPE_MARKS_REF.name, namespace: SHAPE_MARKS_REF.namespace },
      data,
    });
    api.seed(SHAPE_MARKS, marks({ [shapeKeyOf(def)]: "in-use" }));
    const r = new CloudEventResolver({ kube: api.kube(), kinds: both });
    // Still 2 for this container's first event, for another reason than before: the cluster-scoped shape
    // is checked once (any labelled object? none: recorded unused) instead of asked for this queue.
    const first = await r.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"));
    expect(first.keys).toEqual([
      { apiVersion: def.apiVersion, kind: "Queue", name: "orders", namespace: "shop" },
    ]);
    expect(first.lists).toBe(2);
    for (let i = 0; i < 3; i++) {
      const next = await r.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"));
      expect(next.keys).toHaveLength(1);
      expect(next.lists).toBe(1);
    }
    // Lower than before: another container's first event costs 1 (the cluster-scoped shape is recorded
    // unused), and so does an event about a queue driftless does not manage.
    const other = new CloudEventResolver({ kube: api.kube(), kinds: both });
    expect((await other.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"))).lists).toBe(1);
    const unmanaged = await other.cloudTrail(
      cloudTrail("aws-sqs-set-queue-attributes.json", { "orders-queue": "someone-elses" }),
    );
    expect(unmanaged).toMatchObject({ keys: [], lists: 1, dropped: "unknown-resource" });
    // A cluster-scoped queue with both shapes declared (its shape marked in use): found by the first LIST.
    const cluster = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
    cluster.api.seed(
      SHAPE_MARKS,
      marks({ [shapeKeyOf(queue.definition)]: "in-use", [shapeKeyOf(def)]: "unused" }),
    );
    const res = await new CloudEventResolver({ kube: cluster.kube, kinds: both }).cloudTrail(
      cloudTrail("aws-sqs-set-queue-attributes.json"),
    );
    expect(res.keys.map((k) => `${k.kind}/${k.name}`)).toEqual(["Queue/orders"]);
    expect(res.lists).toBe(1);
  });

  it("ModifyVpcAttribute finds the VPC by its provider-chosen id", async () => {
    const { kube } = clusterWith([{ kind: vpc, name: "net", externalName: "vpc-0a1b2c3d4e5f60718" }]);
    const res = await new CloudEventResolver({ kube, kinds: allAws }).cloudTrail(
      cloudTrail("aws-ec2-modify-vpc-attribute.json"),
    );
    expect(res.keys.map((k) => `${k.kind}/${k.name}`)).toEqual(["VPC/net"]);
  });

  it("CreateTags lists only the kind whose id prefix it names (the subnet), not VPC or SecurityGroup", async () => {
    const { kube } = clusterWith([{ kind: subnet, name: "app", externalName: "subnet-0f9e8d7c6b5a43210" }]);
    const res = await new CloudEventResolver({ kube, kinds: allAws }).cloudTrail(
      cloudTrail("aws-ec2-create-tags.json"),
    );
    expect(res.keys.map((k) => `${k.kind}/${k.name}`)).toEqual(["Subnet/app"]);
    expect(res.lists).toBe(1);
  });

  it("drops a call of a configured own principal before any LIST", async () => {
    const { api, kube } = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
    const r = new CloudEventResolver({
      kube,
      kinds: allAws,
      ownPrincipals: ["arn:aws:iam::111122223333:role/PlatformAdmin"],
    });
    // The sample's caller is the PlatformAdmin role: configured as our own here.
    expect(await r.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"))).toEqual({
      keys: [],
      lists: 0,
      dropped: "own-write",
    });
    expect(api.requests).toHaveLength(0);
  });

  it("attack: a User-Agent saying driftless does not hide another principal's change", async () => {
    const { kube } = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
    const r = new CloudEventResolver({
      kube,
      kinds: allAws,
      ownPrincipals: ["arn:aws:iam::111122223333:role/driftless-prod-reconcile"],
    });
    // AWS_SDK_UA_APP_ID=driftless, or any tool's --user-agent: the caller is still PlatformAdmin.
    const disguised = cloudTrail("aws-sqs-set-queue-attributes.json", {
      "aws-cli/2.17.4": "aws-sdk-js/3.700.0 app/driftless",
    });
    const res = await r.cloudTrail(disguised);
    expect(res.dropped).toBeUndefined();
    expect(res.keys.map((k) => k.name)).toEqual(["orders"]);
  });

  it("drops a failed call and a call no kind declares before any LIST", async () => {
    const { api, kube } = clusterWith([]);
    const r = new CloudEventResolver({ kube, kinds: allAws });
    const failed = JSON.parse(fixture("aws-sqs-set-queue-attributes.json"));
    failed.detail.errorCode = "AccessDenied";
    const parsedFailed = parseEventBridgeBody(JSON.stringify(failed));
    if (parsedFailed.kind !== "event") throw new Error("does not parse");
    expect(await r.cloudTrail(parsedFailed.event)).toMatchObject({ dropped: "failed-call", lists: 0 });
    const purge = cloudTrail("aws-sqs-set-queue-attributes.json", { SetQueueAttributes: "PurgeQueue" });
    expect(await r.cloudTrail(purge)).toMatchObject({ dropped: "no-kind", lists: 0 });
    expect(api.requests).toHaveLength(0);
  });

  it("an unknown resource costs exactly its LIST and is dropped", async () => {
    const { api, kube } = clusterWith([{ kind: queue, name: "orders", externalName: "orders-queue" }]);
    const r = new CloudEventResolver({ kube, kinds: allAws });
    const res = await r.cloudTrail(
      cloudTrail("aws-sqs-set-queue-attributes.json", { "orders-queue": "someone-elses" }),
    );
    expect(res).toEqual({ keys: [], lists: 1, dropped: "unknown-resource" });
    expect(api.requests).toHaveLength(1);
  });

  it("a resource without the label (not reconciled since) is not found: the poll covers it", async () => {
    const { kube } = clusterWith([
      { kind: queue, name: "orders", externalName: "orders-queue", labelled: false },
    ]);
    const res = await new CloudEventResolver({ kube, kinds: allAws }).cloudTrail(
      cloudTrail("aws-sqs-set-queue-attributes.json"),
    );
    expect(res.dropped).toBe("unknown-resource");
  });

  it("two resources naming the same external name are both found (a collision costs a reconcile)", async () => {
    const { kube } = clusterWith([
      { kind: queue, name: "orders-eu", externalName: "orders-queue" },
      { kind: queue, name: "orders-us", externalName: "Orders-Queue" },
    ]);
    const res = await new CloudEventResolver({ kube, kinds: allAws }).cloudTrail(
      cloudTrail("aws-sqs-set-queue-attributes.json"),
    );
    expect(res.keys.map((k) => k.name).sort()).toEqual(["orders-eu", "orders-us"]);
  });

  it("Pub/Sub UpdateTopic and UpdateSubscription find their kinds; our own user agent is dropped", async () => {
    const { kube } = clusterWith([
      { kind: topic, name: "events", externalName: "orders-events" },
      { kind: subscription, name: "worker", externalName: "orders-worker" },
    ]);
    const r = new CloudEventResolver({ kube, kinds: [topic, subscription] });
    const entry = (name: string, replace: Record<string, string> = {}) => {
      const p = parseAuditLogData(Buffer.from(fixture(name, replace)));
      if (p.kind !== "entry") throw new Error("does not parse");
      return p.entry;
    };
    expect(
      (await r.auditLog(entry("gcp-pubsub-update-topic.json"))).keys.map((k) => `${k.kind}/${k.name}`),
    ).toEqual(["Topic/events"]);
    expect(
      (await r.auditLog(entry("gcp-pubsub-update-subscription.json"))).keys.map((k) => `${k.kind}/${k.name}`),
    ).toEqual(["Subscription/worker"]);
    // attack: a caller-supplied User-Agent saying driftless is not who called.
    const disguised = entry("gcp-pubsub-update-topic.json", {
      "google-cloud-sdk gcloud/501.0.0": "driftless grpc-node-js/1.12.0",
    });
    expect((await r.auditLog(disguised)).keys.map((k) => k.name)).toEqual(["events"]);
  });

  it("Audit Logs: the functions' service account is dropped before any LIST", async () => {
    const { api, kube } = clusterWith([{ kind: topic, name: "events", externalName: "orders-events" }]);
    const p = parseAuditLogData(Buffer.from(fixture("gcp-pubsub-update-topic.json")));
    if (p.kind !== "entry") throw new Error("does not parse");
    const caller = p.entry.protoPayload.authenticationInfo?.principalEmail;
    if (!caller) throw new Error("the sample names no caller");
    const r = new CloudEventResolver({ kube, kinds: [topic], ownPrincipals: [caller.toUpperCase()] });
    expect(await r.auditLog(p.entry)).toMatchObject({ dropped: "own-write", lists: 0 });
    expect(api.requests).toHaveLength(0);
  });

  it("Event Grid: a subnet write is the Subnet kind's, not its network's; own principals are dropped", async () => {
    const { kube } = clusterWith([
      { kind: vnet, name: "net", externalName: "vnet-orders" },
      { kind: azSubnet, name: "app", externalName: "snet-app" },
    ]);
    const base =
      "/subscriptions/s/resourceGroups/rg-orders/providers/Microsoft.Network/virtualNetworks/vnet-orders";
    const r = new CloudEventResolver({
      kube,
      kinds: [vnet, azSubnet],
      ownPrincipals: ["11111111-2222-3333-4444-555555555555"],
    });
    const sub = await r.armResource(
      {
        operationName: "Microsoft.Network/virtualNetworks/subnets/write",
        resourceUri: `${base}/subnets/snet-app`,
      },
      {},
    );
    expect(sub.keys.map((k) => `${k.kind}/${k.name}`)).toEqual(["Subnet/app"]);
    const net = await r.armResource(
      { operationName: "MICROSOFT.NETWORK/VIRTUALNETWORKS/WRITE", resourceUri: base.toUpperCase() },
      {},
    );
    expect(net.keys.map((k) => `${k.kind}/${k.name}`)).toEqual(["VirtualNetwork/net"]);
    const own = await r.armResource(
      { operationName: "Microsoft.Network/virtualNetworks/write", resourceUri: base },
      { claims: { appid: "11111111-2222-3333-4444-555555555555" } },
    );
    expect(own).toMatchObject({ dropped: "own-write", lists: 0 });
  });

  it("a failing LIST throws (the queue redelivers the event)", async () => {
    const r = new CloudEventResolver({
      kube: { list: async () => Promise.reject(new Error("connection refused")), ...marksUnreachable },
      kinds: allAws,
    });
    await expect(r.cloudTrail(cloudTrail("aws-sqs-set-queue-attributes.json"))).rejects.toThrow(
      "connection refused",
    );
  });
});

describe("every kind's declaration", () => {
  it("names only mutating calls and finds the external name in the call it declares", () => {
    const mutating =
      /^(Create|Delete|Set|Modify|Tag|Untag|Put|Add|Remove|Authorize|Revoke|Update|Start|Stop)/;
    for (const k of [...allAws, topic, subscription]) {
      const aws = k.cloudEvents?.aws;
      for (const name of aws?.eventNames ?? [])
        expect(name, `${k.definition.kind} ${name}`).toMatch(mutating);
      for (const m of k.cloudEvents?.gcp?.methodNames ?? [])
        expect(m.split(".").at(-1), `${k.definition.kind} ${m}`).toMatch(
          /^(Create|Update|Delete|Modify|create|update|delete)/,
        );
    }
  });
});
