// The census of Google Cloud resource types: the extractor takes a resource or lists it with why (never drops
// one silently), the generator makes a kind of every resource in the facts or lists it with why, the pinned
// facts carry the census, and docs/gcp-census.md is what infra/gcp/census.ts writes from them. A create of
// options (no resource message in its request: IAM's CreateServiceAccountKey) is taken; its kind's spec is
// the request's fields, all immutable, and the resource Google answers is atProvider, its private key data the
// connection Secret's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CENSUS_FILE, censusMarkdown, NOT_TAKEN_WHY } from "../../../infra/gcp/census.ts";
import { loadFacts } from "../../../infra/gcp/facts.ts";
import { extract } from "../../../infra/gcp/refresh-apis.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { managedCrd } from "../../../shared/api/crd.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";

const root = mkdtempSync(join(tmpdir(), "census-protos-"));
/** Create (the whole request the body), Get and Delete of `R` under a project. */
const crud = (r: string, plural: string) =>
  ["Create", "Get", "Delete"]
    .map((verb) => {
      const [method, path, req] =
        verb === "Create"
          ? ["post", `{parent=projects/*}/${plural}" body: "*`, `Create${r}Request`]
          : [verb.toLowerCase(), `{name=projects/*/${plural}/*}`, "NameRequest"];
      return `  rpc ${verb}${r}(${req}) returns (${r}) { option (google.api.http) = { ${method}: "/v1/${path}" }; }`;
    })
    .join("\n");
const PROTO = `syntax = "proto3";
package google.demo.v1;
service Demo {
  option (google.api.default_host) = "demo.googleapis.com";
  // Taken: the body is the resource.
  rpc CreateWidget(CreateWidgetRequest) returns (Widget) { option (google.api.http) = { post: "/v1/{parent=projects/*}/widgets" body: "widget" }; }
  rpc GetWidget(NameRequest) returns (Widget) { option (google.api.http) = { get: "/v1/{name=projects/*/widgets/*}" }; }
  rpc DeleteWidget(NameRequest) returns (Widget) { option (google.api.http) = { delete: "/v1/{name=projects/*/widgets/*}" }; }
  // Taken: a create of options under its parent's name (CreateServiceAccountKey's shape).
  rpc CreateKey(CreateKeyRequest) returns (Key) { option (google.api.http) = { post: "/v1/{name=projects/*/widgets/*}/keys" body: "*" }; }
  rpc GetKey(NameRequest) returns (Key) { option (google.api.http) = { get: "/v1/{name=projects/*/widgets/*/keys/*}" }; }
  rpc DeleteKey(NameRequest) returns (Key) { option (google.api.http) = { delete: "/v1/{name=projects/*/widgets/*/keys/*}" }; }
  // Taken: fields beside the resource that are create-time inputs (Bigtable's CreateTable: initial_splits), and
  // request controls (validate_only) that are never spec fields.
${crud("Tablet", "tablets")}
  // Taken: the resource beside only a request control (Cloud Tasks' response_view).
${crud("Ticket", "tickets")}
  // Not taken: a second resource message beside the resource.
  rpc CreateGadget(CreateGadgetRequest) returns (Gadget) { option (google.api.http) = { post: "/v1/{parent=projects/*}/gadgets" body: "*" }; }
  rpc GetGadget(NameRequest) returns (Gadget) { option (google.api.http) = { get: "/v1/{name=projects/*/gadgets/*}" }; }
  rpc DeleteGadget(NameRequest) returns (Gadget) { option (google.api.http) = { delete: "/v1/{name=projects/*/gadgets/*}" }; }
  // Taken without a delete (Cloud KMS's KeyRing): its kind releases, never deletes.
  rpc CreateSprocket(CreateSprocketRequest) returns (Sprocket) { option (google.api.http) = { post: "/v1/{parent=projects/*}/sprockets" body: "sprocket" }; }
  rpc GetSprocket(NameRequest) returns (Sprocket) { option (google.api.http) = { get: "/v1/{name=projects/*/sprockets/*}" }; }
  // Not taken: no get.
  rpc CreateCog(CreateCogRequest) returns (Cog) { option (google.api.http) = { post: "/v1/{parent=projects/*}/cogs" body: "cog" }; }
  rpc DeleteCog(NameRequest) returns (Cog) { option (google.api.http) = { delete: "/v1/{name=projects/*/cogs/*}" }; }
  // Not taken: a PUT create that is not on the resource's name (a PUT on the name is taken:
  // special-methods.test.ts).
  rpc CreateLever(Lever) returns (Lever) { option (google.api.http) = { put: "/v1/{parent=projects/*}/levers" body: "*" }; }
  rpc GetLever(NameRequest) returns (Lever) { option (google.api.http) = { get: "/v1/{name=projects/*/levers/*}" }; }
  // Not taken: options that are not plain (a list of messages).
  rpc CreateBatch(CreateBatchRequest) returns (Batch) { option (google.api.http) = { post: "/v1/{parent=projects/*}/batches" body: "*" }; }
  rpc GetBatch(NameRequest) returns (Batch) { option (google.api.http) = { get: "/v1/{name=projects/*/batches/*}" }; }
  rpc DeleteBatch(NameRequest) returns (Batch) { option (google.api.http) = { delete: "/v1/{name=projects/*/batches/*}" }; }
  // Taken without a create: a singleton the API answers, made by Google with its parent.
  rpc GetSettings(NameRequest) returns (Settings) { option (google.api.http) = { get: "/v1/{name=projects/*/settings}" }; }
  // Not a resource at all (data points): not in the census.
  rpc CreatePoints(CreatePointsRequest) returns (Empty) { option (google.api.http) = { post: "/v1/{name=projects/*}/points" body: "*" }; }
}
message Widget { option (google.api.resource) = { type: "demo.googleapis.com/Widget" pattern: "projects/{project}/widgets/{widget}" }; string name = 1; }
message Key { option (google.api.resource) = { type: "demo.googleapis.com/Key" pattern: "projects/{project}/widgets/{widget}/keys/{key}" }; string name = 1; string key_algorithm = 2; bytes private_key_data = 3; }
message Tablet { option (google.api.resource) = { type: "demo.googleapis.com/Tablet" pattern: "projects/{project}/tablets/{tablet}" }; string name = 1; }
message Ticket { option (google.api.resource) = { type: "demo.googleapis.com/Ticket" pattern: "projects/{project}/tickets/{ticket}" }; string name = 1; }
message Gadget { option (google.api.resource) = { type: "demo.googleapis.com/Gadget" pattern: "projects/{project}/gadgets/{gadget}" }; string name = 1; }
message Sprocket { option (google.api.resource) = { type: "demo.googleapis.com/Sprocket" pattern: "projects/{project}/sprockets/{sprocket}" }; string name = 1; }
message Cog { option (google.api.resource) = { type: "demo.googleapis.com/Cog" pattern: "projects/{project}/cogs/{cog}" }; string name = 1; }
message Lever { option (google.api.resource) = { type: "demo.googleapis.com/Lever" pattern: "projects/{project}/levers/{lever}" }; string name = 1; }
message Batch { option (google.api.resource) = { type: "demo.googleapis.com/Batch" pattern: "projects/{project}/batches/{batch}" }; string name = 1; }
message Settings { option (google.api.resource) = { type: "demo.googleapis.com/Settings" pattern: "projects/{project}/settings" }; string name = 1; }
message Point { int64 value = 1; }
message Empty {}
message NameRequest { string name = 1; }
message CreateWidgetRequest { string parent = 1; string widget_id = 2; Widget widget = 3; }
message CreateKeyRequest { string name = 1; string key_algorithm = 2; string request_id = 3; }
message CreateGadgetRequest { string parent = 1; string gadget_id = 2; Gadget gadget = 3; bool validate_only = 4; Widget template = 5; }
message Split { bytes key = 1; }
message CreateTabletRequest { string parent = 1; string tablet_id = 2; Tablet tablet = 3; repeated Split initial_splits = 4; bool validate_only = 5; }
enum View { VIEW_UNSPECIFIED = 0; BASIC = 1; FULL = 2; }
message CreateTicketRequest { string parent = 1; Ticket ticket = 2; View response_view = 3; }
message CreateSprocketRequest { string parent = 1; Sprocket sprocket = 2; }
message CreateCogRequest { string parent = 1; Cog cog = 2; }
message CreateBatchRequest { string parent = 1; repeated Point points = 2; }
message CreatePointsRequest { string name = 1; repeated Point points = 2; }
`;

beforeAll(() => {
  generateGcp();
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the extractor's census", () => {
  it("takes a resource or lists it with why: never drops one silently", () => {
    mkdirSync(join(root, "google/demo/v1"), { recursive: true });
    writeFileSync(join(root, "google/demo/v1/demo.proto"), PROTO);
    const { resources, notTaken, failed } = extract(root);
    expect(failed).toEqual([]);
    expect(resources.map((r) => r.type).sort()).toEqual([
      "demo.googleapis.com/Key",
      "demo.googleapis.com/Settings",
      "demo.googleapis.com/Sprocket",
      "demo.googleapis.com/Tablet",
      "demo.googleapis.com/Ticket",
      "demo.googleapis.com/Widget",
    ]);
    expect(Object.fromEntries(notTaken.map((x) => [x.type, x.why]))).toEqual({
      "demo.googleapis.com/Gadget": "fields-beside-resource",
      "demo.googleapis.com/Cog": "no-get",
      "demo.googleapis.com/Lever": "create-not-post",
      "demo.googleapis.com/Batch": "no-resource-message",
    });
    expect(notTaken.every((x) => x.detail.length > 0)).toBe(true);
    // No DeleteSprocket: taken with its get and without a delete, never with one made up.
    const sprocket = resources.find((r) => r.type === "demo.googleapis.com/Sprocket");
    expect(sprocket?.delete).toBeUndefined();
    expect(sprocket?.get).toMatchObject({ m: "get", p: "/v1/{name=projects/*/sprockets/*}" });
    // No CreateSettings: taken with its get only, never a create made up.
    const settings = resources.find((r) => r.type === "demo.googleapis.com/Settings");
    expect(settings?.create).toBeUndefined();
    expect(settings?.get).toMatchObject({ m: "get", p: "/v1/{name=projects/*/settings}" });
    // The create of options: its request's fields but the path variable and the idempotency key.
    const key = resources.find((r) => r.type === "demo.googleapis.com/Key");
    expect(key?.create).toMatchObject({
      body: "*",
      request: "google.demo.v1.CreateKeyRequest",
      fields: ["keyAlgorithm"],
    });
    expect(key?.create?.idParam).toBeUndefined();
    expect(key?.pattern).toBe("projects/{project}/widgets/{widget}/keys/{key}");
    // Fields beside the resource: the create-time inputs are the create's fields, the request control is not.
    const tablet = resources.find((r) => r.type === "demo.googleapis.com/Tablet");
    expect(tablet?.create).toMatchObject({
      body: "*",
      wrap: "tablet",
      idParam: "tablet_id",
      request: "google.demo.v1.CreateTabletRequest",
      fields: ["initialSplits"],
    });
    const ticket = resources.find((r) => r.type === "demo.googleapis.com/Ticket");
    expect(ticket?.create).toMatchObject({ body: "*", wrap: "ticket" });
    expect(ticket?.create?.fields).toBeUndefined();
  });

  it("is in the pinned facts: every resource met is taken or listed, each with a known reason", () => {
    const facts = loadFacts();
    const not = facts.notTaken ?? [];
    expect(not.length).toBeGreaterThan(0);
    const reasons = new Set(Object.keys(NOT_TAKEN_WHY));
    expect(not.filter((x) => !reasons.has(x.why) || !x.detail)).toEqual([]);
    // Measured on the pinned commit: 731 taken, 483 not (docs/gcp-census.md; 723 and 491 before methods were recognised by binding, 719 and 495 before creates with fields beside the resource were taken).
    expect(facts.resources.length + not.length).toBeGreaterThan(1100);
    // A create and a get without a delete is taken (81 were `no-delete` before 2026-11-28): none is left.
    expect(not.filter((x) => x.why === "no-delete")).toEqual([]);
    expect(facts.resources.filter((r) => !r.delete).map((r) => r.type)).toEqual(
      expect.arrayContaining(["cloudkms.googleapis.com/KeyRing", "compute.googleapis.com/Commitment"]),
    );
    // IAM's service account key, once absent without a word, is taken.
    expect(facts.resources.map((r) => r.type)).toContain("iam.googleapis.com/Key");
    // Creates with fields beside the resource are taken (Bigtable's clusters, initial_splits).
    expect(facts.resources.map((r) => r.type)).toEqual(
      expect.arrayContaining(["bigtableadmin.googleapis.com/Instance", "bigtableadmin.googleapis.com/Table"]),
    );
    expect(
      not.filter(
        (x) => x.type.startsWith("bigtableadmin.googleapis.com/") && x.why === "fields-beside-resource",
      ),
    ).toEqual([]);
  });
});

describe("the generator's census", () => {
  it("makes a kind of every resource in the facts or lists it as skipped with why", () => {
    const facts = loadFacts();
    const catalog = loadGoogleCatalog();
    const count = (xs: string[]) => {
      const m = new Map<string, number>();
      for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
      return [...m].sort((a, b) => a[0].localeCompare(b[0]));
    };
    expect(catalog.skipped.filter((s) => !s.why)).toEqual([]);
    expect(
      count([...catalog.kinds.map((k) => k.typeName), ...catalog.skipped.map((s) => s.typeName)]),
    ).toEqual(count(facts.resources.map((r) => r.type)));
  });

  it("keeps a published group when its host's next package enters the facts (Spanner's instance admin)", () => {
    const groups = Object.fromEntries(
      loadGoogleCatalog()
        .kinds.filter((k) => k.typeName.startsWith("spanner.googleapis.com/"))
        .map((k) => [k.kind, k.group]),
    );
    expect(groups).toMatchObject({ Backup: "spanner.googleapis", BackupSchedule: "spanner.googleapis" });
    expect(groups.Instance).toBe("spanneradmininstance.googleapis");
  });

  it("docs/gcp-census.md is what infra/gcp/census.ts writes (npm run gen:docs)", () => {
    expect(readFileSync(CENSUS_FILE, "utf8")).toBe(censusMarkdown(loadFacts(), loadGoogleCatalog()));
  });
});

describe("a create of options: IAM's ServiceAccountKey", () => {
  const spec = () => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === "iam.googleapis.com/Key");
    expect(e).toMatchObject({ group: "iamadmin.googleapis", kind: "ServiceAccountKey" });
    return loadGoogleSpec(e as never);
  };

  it("its spec is the request's options, all immutable; the key Google answers is atProvider, its private key data the Secret's", () => {
    const s = spec();
    expect(Object.keys(s.properties).sort()).toEqual(["keyAlgorithm", "privateKeyType"]);
    expect(s.createOnly.sort()).toEqual(["keyAlgorithm", "privateKeyType"]);
    expect(s.google.createFields).toEqual(["privateKeyType", "keyAlgorithm"]);
    expect(s.externalName).toBe("providerChosen");
    expect(s.attributes.privateKeyData).toMatchObject({ secret: true });
    expect(s.secrets).toEqual([]);
    expect(s.google.parent).toMatchObject({ template: "projects/*/serviceAccounts/*", explicit: true });
    expect(s.google.refs?.find((r) => r.field === "parent")).toMatchObject({ kind: "ServiceAccount" });
    expect(s.google.update).toBeUndefined();
    expect(s.permissions).toEqual({
      create: ["iam.serviceAccountKeys.create"],
      // Its parent's project (projects/<id> or <number>) is resolved to compare the two forms as one home.
      read: ["iam.serviceAccountKeys.get", "resourcemanager.projects.get"],
      delete: ["iam.serviceAccountKeys.delete"],
      list: ["iam.serviceAccountKeys.list"],
    });
    const def = googleKindOf(s);
    expect(def.immutable).toEqual(expect.arrayContaining(["keyAlgorithm", "privateKeyType"]));
    // The CRD: no private key data field in forProvider or atProvider.
    expect(JSON.stringify(managedCrd(def))).not.toMatch(/"privateKeyData":\{/);
  });
});

describe("fields beside the resource: Bigtable's Instance and Table", () => {
  const spec = (type: string) => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type);
    expect(e).toBeDefined();
    return loadGoogleSpec(e as never);
  };

  it("an Instance's clusters are a spec field beside the instance's, sent only in the create and immutable", () => {
    const s = spec("bigtableadmin.googleapis.com/Instance");
    expect(s.google.create?.wrap).toBe("instance");
    expect(s.google.createId).toBe("instanceId");
    expect(s.google.createFields).toEqual(["clusters"]);
    expect(s.properties.clusters).toBeDefined();
    expect(s.properties.displayName).toBeDefined();
    expect(s.createOnly).toEqual(expect.arrayContaining(["clusters", "instanceId"]));
    expect(s.google.update).toBeDefined();
  });

  it("a Table's initialSplits are a spec field, immutable", () => {
    const s = spec("bigtableadmin.googleapis.com/Table");
    expect(s.google.createFields).toEqual(["initialSplits"]);
    expect(s.createOnly).toEqual(expect.arrayContaining(["initialSplits", "tableId"]));
  });

  it("a request control is never a spec field (Spanner's validate_only, Cloud Tasks' response_view)", () => {
    for (const [type, control] of [
      ["spanner.googleapis.com/InstanceConfig", "validateOnly"],
      ["cloudtasks.googleapis.com/Task", "responseView"],
    ] as const) {
      const s = spec(type);
      expect(s.properties[control]).toBeUndefined();
      expect(s.google.createFields ?? []).not.toContain(control);
    }
  });
});

describe("kinds Google publishes no delete for: Cloud KMS's KeyRing", () => {
  const spec = (type: string) => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type);
    expect(e).toBeDefined();
    return loadGoogleSpec(e as never);
  };

  it("a KeyRing is a kind without a delete: deletionPolicy Orphan only, refused otherwise with Google's reason", () => {
    const s = spec("cloudkms.googleapis.com/KeyRing");
    expect(s.google.delete).toBeUndefined();
    expect(s.permissions.delete).toBeUndefined();
    const def = googleKindOf(s);
    expect(def.lacks?.Delete).toContain("Google publishes no delete for KeyRing");
    expect(def.lacks?.Create).toBeUndefined();
    const crd = JSON.stringify(managedCrd(def));
    // The cluster-scoped shape's deletionPolicy: Orphan alone, the default, with a rule that says why.
    expect(crd).toContain('"deletionPolicy":{"default":"Orphan"');
    expect(crd).toContain('"enum":["Orphan"]');
    expect(crd).toContain(`"rule":"self == 'Orphan'"`);
    expect(
      def.spec.safeParse({ forProvider: { location: "global" }, deletionPolicy: "Delete" }).success,
    ).toBe(false);
    expect(def.spec.parse({ forProvider: { location: "global" } }).deletionPolicy).toBe("Orphan");
  });

  it("a CryptoKey names its KeyRing by parentRef (the one generated kind whose pattern is its parent)", () => {
    const refs = spec("cloudkms.googleapis.com/CryptoKey").google.refs ?? [];
    expect(refs.find((r) => r.field === "parent")).toMatchObject({
      kind: "KeyRing",
      group: "cloudkms.googleapis",
    });
  });

  it("every resource taken without a delete is a kind that lacks Delete, or left out with why", () => {
    const catalog = loadGoogleCatalog();
    const noDelete = loadFacts().resources.filter((r) => !r.delete);
    expect(noDelete.length).toBeGreaterThanOrEqual(80);
    for (const r of noDelete) {
      const e = catalog.kinds.find((k) => k.typeName === r.type && k.file.includes(r.kind));
      if (!e) {
        expect(catalog.skipped.find((x) => x.typeName === r.type)?.why).toBeTruthy();
        continue;
      }
      expect(googleKindOf(loadGoogleSpec(e)).lacks?.Delete).toMatch(/^Google publishes no delete for /);
    }
  });
});

describe("kinds Google publishes no create for", () => {
  const spec = (type: string) => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type);
    expect(e).toBeDefined();
    return loadGoogleSpec(e as never);
  };

  it("KMS AutokeyConfig (Get, Update): adopt and manage its folder's singleton; Create and * refused", () => {
    const s = spec("cloudkms.googleapis.com/AutokeyConfig");
    expect(s.google.create).toBeUndefined();
    expect(s.google.singleton).toBe(true);
    expect(s.google.parent).toMatchObject({ template: "folders/*", explicit: true });
    expect(s.permissions.create).toBeUndefined();
    const def = googleKindOf(s);
    expect(def.lacks?.Create).toContain("Google publishes no create for AutokeyConfig");
    expect(def.lacks?.Update).toBeUndefined();
    expect(def.lacks?.Delete).toContain("Google publishes no delete for AutokeyConfig");
    const spec0 = def.spec.parse({ forProvider: { parent: "folders/1" } });
    expect(spec0.managementPolicies).toEqual(["Observe", "Update", "LateInitialize"]);
    expect(spec0.deletionPolicy).toBe("Orphan");
    for (const bad of [["*"], ["Observe", "Create"]])
      expect(
        def.spec.safeParse({ forProvider: { parent: "folders/1" }, managementPolicies: bad }).success,
      ).toBe(false);
    expect(JSON.stringify(managedCrd(def))).toContain(`"rule":"self.all(a, a != 'Create' && a != '*')"`);
  });

  it("KMS RetiredResource (Get only): observe-only, Observe alone in the schema", () => {
    const def = googleKindOf(spec("cloudkms.googleapis.com/RetiredResource"));
    expect(def.lacks?.Update).toContain("driftless only observes it");
    expect(def.spec.parse({ forProvider: { location: "global" } }).managementPolicies).toEqual(["Observe"]);
    expect(
      def.spec.safeParse({ forProvider: { location: "global" }, managementPolicies: ["Observe", "Update"] })
        .success,
    ).toBe(false);
  });

  it("every resource taken without a create is a kind that lacks Create, or left out with why", () => {
    const catalog = loadGoogleCatalog();
    const made = loadFacts().resources.filter((r) => !r.create);
    expect(made.length).toBeGreaterThan(250);
    for (const r of made) {
      const e = catalog.kinds.find((k) => k.typeName === r.type && k.file.includes(r.kind));
      if (!e) {
        expect(catalog.skipped.find((x) => x.typeName === r.type)?.why).toBeTruthy();
        continue;
      }
      const def = googleKindOf(loadGoogleSpec(e));
      expect(def.lacks?.Create).toMatch(/^Google publishes no create for /);
      expect(Boolean(def.lacks?.Update)).toBe(!r.update);
    }
  });
});

/** Compute services without an Insert: collections Google fills itself, and others (operations, singletons). */
const COMPUTE_PROTO = `syntax = "proto3";
package google.cloud.compute.v1;
service MachineTypes {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc AggregatedList(AggregatedListMachineTypesRequest) returns (MachineTypeAggregatedList) { option (google.api.http) = { get: "/compute/v1/projects/{project}/aggregated/machineTypes" }; }
  rpc Get(GetMachineTypeRequest) returns (MachineType) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones/{zone}/machineTypes/{machine_type}" }; }
  rpc List(ListMachineTypesRequest) returns (MachineTypeList) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones/{zone}/machineTypes" }; }
}
service Zones {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc Get(GetZoneRequest) returns (Zone) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones/{zone}" }; }
  rpc List(ListZonesRequest) returns (ZoneList) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones" }; }
}
service ZoneOperations {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc Get(GetZoneOperationRequest) returns (Operation) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones/{zone}/operations/{operation}" }; }
  rpc Delete(GetZoneOperationRequest) returns (Empty) { option (google.api.http) = { delete: "/compute/v1/projects/{project}/zones/{zone}/operations/{operation}" }; }
}
service Projects {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc Get(GetProjectRequest) returns (Project) { option (google.api.http) = { get: "/compute/v1/projects/{project}" }; }
}
service SnapshotSettingsService {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc Get(GetProjectRequest) returns (SnapshotSettings) { option (google.api.http) = { get: "/compute/v1/projects/{project}/global/snapshotSettings" }; }
}
service ReservationBlocks {
  option (google.api.default_host) = "compute.googleapis.com";
  rpc Get(GetReservationBlockRequest) returns (ReservationBlocksGetResponse) { option (google.api.http) = { get: "/compute/v1/projects/{project}/zones/{zone}/reservations/{reservation}/reservationBlocks/{reservation_block}" }; }
}
message MachineType {
  // [Output Only] Name of the resource.
  optional string name = 1;
  // [Output Only] The number of virtual CPUs that are available to the instance.
  optional int32 guest_cpus = 2;
  // [Output Only] Server-defined URL for the resource.
  optional string self_link = 3;
}
message MachineTypeList { repeated MachineType items = 1; }
message MachineTypeAggregatedList { map<string, MachineTypeList> items = 1; }
message Zone {
  // [Output Only] Name of the resource.
  optional string name = 1;
}
message ZoneList { repeated Zone items = 1; }
message Operation { optional string name = 1; }
message Project { optional string name = 1; }
message SnapshotSettings { optional string storage_location = 1; }
message ReservationBlocksGetResponse { optional Zone resource = 1; }
message Empty {}
message GetMachineTypeRequest { string project = 1; string zone = 2; string machine_type = 3; }
message AggregatedListMachineTypesRequest { string project = 1; }
message ListMachineTypesRequest { string project = 1; string zone = 2; }
message GetZoneRequest { string project = 1; string zone = 2; }
message ListZonesRequest { string project = 1; }
message GetZoneOperationRequest { string project = 1; string zone = 2; string operation = 3; }
message GetProjectRequest { string project = 1; }
message GetReservationBlockRequest { string project = 1; string zone = 2; string reservation = 3; string reservation_block = 4; }
`;

describe("Compute's get-only collections (Zones, MachineTypes): taken as observe-only kinds", () => {
  it("the extractor takes a collection with a Get of its name and no Insert; lists the rest with why", () => {
    const croot = mkdtempSync(join(tmpdir(), "census-compute-"));
    try {
      mkdirSync(join(croot, "google/cloud/compute/v1"), { recursive: true });
      writeFileSync(join(croot, "google/cloud/compute/v1/compute.proto"), COMPUTE_PROTO);
      const { resources, notTaken, failed } = extract(croot);
      expect(failed).toEqual([]);
      const byKind = Object.fromEntries(resources.map((r) => [r.kind, r]));
      expect(Object.keys(byKind).sort()).toEqual(["MachineType", "Zone"]);
      expect(byKind.MachineType).toMatchObject({
        family: "compute",
        type: "compute.googleapis.com/MachineType",
        get: { m: "get", p: "/compute/v1/projects/{project}/zones/{zone}/machineTypes/{machine_type}" },
        list: { m: "get", p: "/compute/v1/projects/{project}/zones/{zone}/machineTypes" },
        aggregated: { m: "get", p: "/compute/v1/projects/{project}/aggregated/machineTypes" },
      });
      // Nothing made up: no create, update or delete where Google publishes none.
      for (const r of resources) {
        expect(r.create).toBeUndefined();
        expect(r.update).toBeUndefined();
        expect(r.delete).toBeUndefined();
      }
      expect(byKind.Zone?.get?.p).toBe("/compute/v1/projects/{project}/zones/{zone}");
      // An operation (the progress of other calls), a get of the project itself, a singleton, a wrapper answer.
      expect(notTaken.map((x) => [x.service, x.why]).sort()).toEqual([
        ["Projects", "no-create"],
        ["ReservationBlocks", "no-create"],
        ["SnapshotSettingsService", "no-create"],
        ["ZoneOperations", "no-create"],
      ]);
      expect(notTaken.every((x) => x.detail.length > 0)).toBe(true);
    } finally {
      rmSync(croot, { recursive: true, force: true });
    }
  });

  it("the generated MachineType and Zone: home from the get's path, Observe only, atProvider the resource", () => {
    const e = (type: string) => loadGoogleCatalog().kinds.find((k) => k.typeName === type);
    const mt = loadGoogleSpec(e("compute.googleapis.com/MachineType") as never);
    expect(mt.google).toMatchObject({ family: "compute", service: "MachineTypes" });
    expect(mt.google.parent.home).toEqual(["zone"]);
    expect(mt.google.create).toBeUndefined();
    expect(mt.externalName).toBe("fromAnnotation");
    expect(mt.attributes.guestCpus).toBeDefined();
    expect(mt.permissions).toEqual({
      read: ["compute.machineTypes.get"],
      list: ["compute.machineTypes.list"],
    });
    const def = googleKindOf(mt);
    expect(def.lacks).toMatchObject({
      Create: expect.stringContaining("Google publishes no create for MachineType"),
      Update: expect.stringContaining("driftless only observes it"),
      Delete: expect.stringContaining("Google publishes no delete for MachineType"),
    });
    const spec0 = def.spec.parse({ forProvider: { zone: "us-central1-a" } });
    expect(spec0.managementPolicies).toEqual(["Observe"]);
    expect(spec0.deletionPolicy).toBe("Orphan");
    for (const bad of [["*"], ["Observe", "Create"]])
      expect(
        def.spec.safeParse({ forProvider: { zone: "us-central1-a" }, managementPolicies: bad }).success,
      ).toBe(false);
    const zone = loadGoogleSpec(e("compute.googleapis.com/Zone") as never);
    expect(zone.google.parent.home).toEqual([]);
    expect(googleKindOf(zone).spec.parse({ forProvider: {} }).managementPolicies).toEqual(["Observe"]);
  });
});
