// Creates, gets, updates and deletes the extractor recognises by what they are — their HTTP binding and their
// input and output types — whatever their names (Cloud Logging's GetBucket answering a LogBucket), the
// variable get and delete bind the name to (`{metric_name=…}`), a caller-chosen short `name` inside the
// resource (LogMetric), and a create that is a PUT on the resource's full name (Pub/Sub's Topic and Snapshot).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extract } from "../../../infra/gcp/refresh-apis.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { startGoogleGenericFake } from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { connectGoogle } from "../../support/gcp-generated.ts";

const root = mkdtempSync(join(tmpdir(), "special-protos-"));
const PROTO = `syntax = "proto3";
package google.demo.v1;
import "google/protobuf/field_mask.proto";
service Config {
  option (google.api.default_host) = "demo.googleapis.com";
  // Methods named after the collection, not the message (Logging's GetBucket answers a LogBucket).
  rpc CreateBucket(CreateBucketRequest) returns (LogBucket) { option (google.api.http) = { post: "/v2/{parent=*/*/locations/*}/buckets" body: "bucket" }; }
  // A custom method beside the standard create (Logging's CreateBucketAsync): the kind is made with the other.
  rpc CreateBucketAsync(CreateBucketRequest) returns (LogBucket) { option (google.api.http) = { post: "/v2/{parent=*/*/locations/*}/buckets:createAsync" body: "bucket" }; }
  rpc GetBucket(NameRequest) returns (LogBucket) { option (google.api.http) = { get: "/v2/{name=*/*/locations/*/buckets/*}" }; }
  rpc UpdateBucket(UpdateBucketRequest) returns (LogBucket) { option (google.api.http) = { patch: "/v2/{name=*/*/locations/*/buckets/*}" body: "bucket" }; }
  rpc DeleteBucket(NameRequest) returns (Empty) { option (google.api.http) = { delete: "/v2/{name=*/*/locations/*/buckets/*}" }; }
  // Get, update and delete bound to another variable than name; the caller names it in its own name field.
  rpc CreateLogMeter(CreateMeterRequest) returns (LogMeter) { option (google.api.http) = { post: "/v2/{parent=projects/*}/meters" body: "meter" }; }
  rpc GetLogMeter(MeterNameRequest) returns (LogMeter) { option (google.api.http) = { get: "/v2/{meter_name=projects/*/meters/*}" }; }
  rpc UpdateLogMeter(UpdateMeterRequest) returns (LogMeter) { option (google.api.http) = { put: "/v2/{meter_name=projects/*/meters/*}" body: "meter" }; }
  rpc DeleteLogMeter(MeterNameRequest) returns (Empty) { option (google.api.http) = { delete: "/v2/{meter_name=projects/*/meters/*}" }; }
  // Two GETs answering the resource by name: which one observes it is not the protos' to say here.
  rpc CreateDial(CreateDialRequest) returns (Dial) { option (google.api.http) = { post: "/v2/{parent=projects/*}/dials" body: "dial" }; }
  rpc ReadDial(NameRequest) returns (Dial) { option (google.api.http) = { get: "/v2/{name=projects/*/dials/*}" }; }
  rpc FetchDial(DialNameRequest) returns (Dial) { option (google.api.http) = { get: "/v2/{dial_name=projects/*/dials/*}" }; }
  rpc DeleteDial(NameRequest) returns (Empty) { option (google.api.http) = { delete: "/v2/{name=projects/*/dials/*}" }; }
  // Only a list: nothing observes one by its name (Resource Manager's TagBinding).
  rpc CreateClip(CreateClipRequest) returns (Clip) { option (google.api.http) = { post: "/v2/clips" body: "clip" }; }
  rpc ListClips(NameRequest) returns (ListClipsResponse) { option (google.api.http) = { get: "/v2/clips" }; }
  rpc DeleteClip(NameRequest) returns (Empty) { option (google.api.http) = { delete: "/v2/{name=clips/**}" }; }
}
service Publisher {
  option (google.api.default_host) = "demo.googleapis.com";
  // A PUT on the full name whose request is the resource (Pub/Sub's CreateTopic).
  rpc CreateTopic(Topic) returns (Topic) { option (google.api.http) = { put: "/v1/{name=projects/*/topics/*}" body: "*" }; }
  rpc GetTopic(TopicRequest) returns (Topic) { option (google.api.http) = { get: "/v1/{topic=projects/*/topics/*}" }; }
  rpc UpdateTopic(UpdateTopicRequest) returns (Topic) { option (google.api.http) = { patch: "/v1/{topic.name=projects/*/topics/*}" body: "*" }; }
  rpc DeleteTopic(TopicRequest) returns (Empty) { option (google.api.http) = { delete: "/v1/{topic=projects/*/topics/*}" }; }
  // A PUT on the full name whose request holds some of the resource's fields and inputs beside them
  // (Pub/Sub's CreateSnapshot: {subscription, labels, tags}).
  rpc CreateSnapshot(CreateSnapshotRequest) returns (Snapshot) { option (google.api.http) = { put: "/v1/{name=projects/*/snapshots/*}" body: "*" }; }
  rpc GetSnapshot(SnapshotRequest) returns (Snapshot) { option (google.api.http) = { get: "/v1/{snapshot=projects/*/snapshots/*}" }; }
  rpc UpdateSnapshot(UpdateSnapshotRequest) returns (Snapshot) { option (google.api.http) = { patch: "/v1/{snapshot.name=projects/*/snapshots/*}" body: "*" }; }
  rpc DeleteSnapshot(SnapshotRequest) returns (Empty) { option (google.api.http) = { delete: "/v1/{snapshot=projects/*/snapshots/*}" }; }
  // A PUT to a collection, not a name: not taken.
  rpc CreateLever(Lever) returns (Lever) { option (google.api.http) = { put: "/v1/{parent=projects/*}/levers" body: "*" }; }
  rpc GetLever(NameRequest) returns (Lever) { option (google.api.http) = { get: "/v1/{name=projects/*/levers/*}" }; }
  rpc DeleteLever(NameRequest) returns (Empty) { option (google.api.http) = { delete: "/v1/{name=projects/*/levers/*}" }; }
}
message LogBucket {
  option (google.api.resource) = { type: "demo.googleapis.com/LogBucket" pattern: "projects/{project}/locations/{location}/buckets/{bucket}" pattern: "folders/{folder}/locations/{location}/buckets/{bucket}" };
  string name = 1 [(google.api.field_behavior) = OUTPUT_ONLY];
  int32 retention_days = 2;
}
message LogMeter {
  option (google.api.resource) = { type: "demo.googleapis.com/LogMeter" pattern: "projects/{project}/meters/{meter}" };
  // Required. The client-assigned meter identifier.
  string name = 1 [(google.api.field_behavior) = REQUIRED];
  string filter = 2 [(google.api.field_behavior) = REQUIRED];
}
message Dial {
  option (google.api.resource) = { type: "demo.googleapis.com/Dial" pattern: "projects/{project}/dials/{dial}" };
  string name = 1;
}
message Clip {
  option (google.api.resource) = { type: "demo.googleapis.com/Clip" pattern: "clips/{clip}" };
  string name = 1;
}
message Topic {
  option (google.api.resource) = { type: "demo.googleapis.com/Topic" pattern: "projects/{project}/topics/{topic}" };
  string name = 1 [(google.api.field_behavior) = REQUIRED];
  map<string, string> labels = 2;
}
message Snapshot {
  option (google.api.resource) = { type: "demo.googleapis.com/Snapshot" pattern: "projects/{project}/snapshots/{snapshot}" };
  string name = 1;
  string topic = 2;
  map<string, string> labels = 4;
}
message Lever {
  option (google.api.resource) = { type: "demo.googleapis.com/Lever" pattern: "projects/{project}/levers/{lever}" };
  string name = 1;
}
message Empty {}
message NameRequest { string name = 1; }
message DialNameRequest { string dial_name = 1; }
message MeterNameRequest { string meter_name = 1; }
message TopicRequest { string topic = 1; }
message SnapshotRequest { string snapshot = 1; }
message CreateBucketRequest { string parent = 1; string bucket_id = 2; LogBucket bucket = 3; }
message UpdateBucketRequest { string name = 1; LogBucket bucket = 2; google.protobuf.FieldMask update_mask = 4; }
message CreateMeterRequest { string parent = 1; LogMeter meter = 2; }
message UpdateMeterRequest { string meter_name = 1; LogMeter meter = 2; }
message CreateDialRequest { string parent = 1; string dial_id = 2; Dial dial = 3; }
message CreateClipRequest { Clip clip = 1; }
message ListClipsResponse { repeated Clip clips = 1; }
message UpdateTopicRequest { Topic topic = 1; google.protobuf.FieldMask update_mask = 2; }
message CreateSnapshotRequest {
  string name = 1 [(google.api.field_behavior) = REQUIRED];
  string subscription = 2 [(google.api.field_behavior) = REQUIRED];
  map<string, string> labels = 3;
  map<string, string> tags = 4 [(google.api.field_behavior) = INPUT_ONLY, (google.api.field_behavior) = IMMUTABLE];
}
message UpdateSnapshotRequest { Snapshot snapshot = 1; google.protobuf.FieldMask update_mask = 2; }
`;

afterAll(() => rmSync(root, { recursive: true, force: true }));

const extracted = () => {
  mkdirSync(join(root, "google/demo/v1"), { recursive: true });
  writeFileSync(join(root, "google/demo/v1/demo.proto"), PROTO);
  return extract(root);
};

describe("methods recognised by their HTTP binding and types, whatever their names", () => {
  it("takes each resource once, and lists the rest with why", () => {
    const { resources, notTaken, failed } = extracted();
    expect(failed).toEqual([]);
    expect(resources.map((r) => r.type).sort()).toEqual([
      "demo.googleapis.com/LogBucket",
      "demo.googleapis.com/LogMeter",
      "demo.googleapis.com/Snapshot",
      "demo.googleapis.com/Topic",
    ]);
    expect(notTaken.map((x) => [x.type, x.method, x.why]).sort()).toEqual([
      ["demo.googleapis.com/Clip", "CreateClip", "no-get"],
      ["demo.googleapis.com/Dial", "CreateDial", "no-get"],
      ["demo.googleapis.com/Lever", "CreateLever", "create-not-post"],
      ["demo.googleapis.com/LogBucket", "CreateBucketAsync", "second-create"],
    ]);
    const dial = notTaken.find((x) => x.method === "CreateDial");
    expect(dial?.detail).toMatch(/ReadDial, FetchDial/);
  });

  it("a get, update and delete named after the collection (GetBucket answering a LogBucket)", () => {
    const bucket = extracted().resources.find((r) => r.type === "demo.googleapis.com/LogBucket");
    expect(bucket?.get).toEqual({ m: "get", p: "/v2/{name=*/*/locations/*/buckets/*}" });
    expect(bucket?.update).toMatchObject({ m: "patch", mask: "update_mask" });
    expect(bucket?.delete).toEqual({ m: "delete", p: "/v2/{name=*/*/locations/*/buckets/*}" });
    expect(bucket?.create).toMatchObject({ m: "post", idParam: "bucket_id" });
    expect(bucket?.create?.p).not.toMatch(/:createAsync/);
    expect(bucket?.nameField).toBeUndefined();
  });

  it("get and delete bound to metric_name; the caller names it in the resource's own name field", () => {
    const meter = extracted().resources.find((r) => r.type === "demo.googleapis.com/LogMeter");
    expect(meter?.nameField).toBe("meter_name");
    expect(meter?.create).toMatchObject({ m: "post", body: "meter", namedBy: "field" });
    expect(meter?.create?.idParam).toBeUndefined();
    expect(meter?.update).toMatchObject({ m: "put", p: "/v2/{meter_name=projects/*/meters/*}" });
  });

  it("a PUT on the full name whose request is the resource (CreateTopic)", () => {
    const topic = extracted().resources.find((r) => r.type === "demo.googleapis.com/Topic");
    expect(topic?.create).toMatchObject({ m: "put", p: "/v1/{name=projects/*/topics/*}", namedBy: "path" });
    expect(topic?.create?.request).toBeUndefined();
    expect(topic?.nameField).toBe("topic");
    expect(topic?.update).toMatchObject({ m: "patch", wrap: "topic", mask: "update_mask" });
    expect(topic?.pattern).toBe("projects/{project}/topics/{topic}");
  });

  it("a PUT on the full name whose request carries the resource's labels beside create-time inputs (CreateSnapshot)", () => {
    const snap = extracted().resources.find((r) => r.type === "demo.googleapis.com/Snapshot");
    expect(snap?.create).toMatchObject({
      m: "put",
      namedBy: "path",
      request: "google.demo.v1.CreateSnapshotRequest",
      fields: ["subscription", "tags"],
      resourceFields: ["labels"],
    });
    expect(snap?.nameField).toBe("snapshot");
    expect(snap?.update).toMatchObject({ m: "patch", wrap: "snapshot" });
  });
});

describe("the kinds generated from them (pinned facts)", () => {
  const spec = (type: string) => {
    generateGcp();
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type);
    expect(e, type).toBeDefined();
    return loadGoogleSpec(e as never);
  };

  it("LogMetric: its id is its own name (the external name), read by metric_name", () => {
    const s = spec("logging.googleapis.com/LogMetric");
    expect(s).toMatchObject({ externalName: "fromAnnotation", identifierField: "name" });
    expect(s.properties.name).toBeDefined();
    expect(s.google).toMatchObject({
      nameField: "metric_name",
      create: { m: "post", namedBy: "field" },
      update: { m: "put", p: "/v2/{metric_name=projects/*/metrics/*}" },
      collection: "metrics",
      parent: { template: "projects/*", explicit: false },
    });
  });

  it("LogBucket: made with CreateBucket (not CreateBucketAsync), updated and deleted by name", () => {
    const s = spec("logging.googleapis.com/LogBucket");
    expect(s.google.create).toMatchObject({
      p: "/v2/{parent=*/*/locations/*}/buckets",
      idParam: "bucket_id",
    });
    expect(s.google.update).toMatchObject({ m: "patch", mask: "update_mask" });
    expect(s.attributes.name).toBeDefined();
  });

  it("Pub/Sub Snapshot: its spec is the create request's fields; the topic Google's; subscription and tags immutable", () => {
    const s = spec("pubsub.googleapis.com/Snapshot");
    expect(Object.keys(s.properties).sort()).toEqual(["labels", "subscription", "tags"]);
    expect(Object.keys(s.attributes).sort()).toEqual(["expireTime", "name", "topic"]);
    expect(s.createOnly.sort()).toEqual(["subscription", "tags"]);
    expect(s.google).toMatchObject({
      create: { m: "put", namedBy: "path" },
      createFields: ["subscription", "tags"],
      nameField: "snapshot",
      collection: "snapshots",
      update: { wrap: "snapshot" },
    });
    expect(s.externalName).toBe("fromAnnotation");
  });
});

describe("a LogMetric's short names in its list (Google answers `errors`, not the full name)", () => {
  it("the batched drift check finds each in one list call, and import lists them by id", async () => {
    generateGcp();
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === "logging.googleapis.com/LogMetric");
    const fake = await startGoogleGenericFake({ opPolls: 0 });
    try {
      const client = await connectGoogle(loadGoogleSpec(e as never), fake.url, "lm");
      const mr = (name: string) =>
        ({
          metadata: { name, uid: name, annotations: {} },
          spec: { forProvider: { filter: "severity>=ERROR" } },
        }) as unknown as ManagedResource;
      await client.create(mr("a"), "a");
      await client.create(mr("b"), "b");
      expect(fake.resource("projects/lm/metrics/a")).toMatchObject({ name: "a" });
      const before = fake.stats();
      const seen = await client.observeMany?.([
        { mr: mr("a"), externalName: "a" },
        { mr: mr("b"), externalName: "b" },
      ]);
      expect(seen?.map((o) => (o instanceof Error ? o.message : o.resourceExists))).toEqual([true, true]);
      const calls = Object.entries(fake.stats()).reduce((n, [k, v]) => n + v - (before[k] ?? 0), 0);
      expect(calls).toBe(1);
      const listed = await client.list?.();
      expect(listed?.map((x) => x.externalName).sort()).toEqual(["a", "b"]);
    } finally {
      await fake.close();
    }
  });
});
