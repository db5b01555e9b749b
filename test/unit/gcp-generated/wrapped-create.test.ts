// A create whose whole request is the body (`body: "*"`, the resource one field of it beside its id: IAM
// Admin's CreateServiceAccount `{accountId, serviceAccount}`) and its wrapped patch (`{serviceAccount,
// updateMask}`): taken by the extractor only in that exact shape, and generated as a kind whose id is an
// immutable spec field and whose external name is the name Google answers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extract } from "../../../infra/gcp/refresh-apis.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";

const root = mkdtempSync(join(tmpdir(), "wrapped-protos-"));
const proto = (extraCreateField: string) => `syntax = "proto3";
package google.demo.v1;
import "google/protobuf/field_mask.proto";
service Demo {
  option (google.api.default_host) = "demo.googleapis.com";
  rpc CreateWidget(CreateWidgetRequest) returns (Widget) {
    option (google.api.http) = { post: "/v1/{name=projects/*}/widgets" body: "*" };
  }
  rpc GetWidget(GetWidgetRequest) returns (Widget) {
    option (google.api.http) = { get: "/v1/{name=projects/*/widgets/*}" };
  }
  rpc UpdateWidget(Widget) returns (Widget) {
    option (google.api.http) = { put: "/v1/{name=projects/*/widgets/*}" body: "*" };
  }
  rpc PatchWidget(PatchWidgetRequest) returns (Widget) {
    option (google.api.http) = { patch: "/v1/{widget.name=projects/*/widgets/*}" body: "*" };
  }
  rpc DeleteWidget(GetWidgetRequest) returns (Widget) {
    option (google.api.http) = { delete: "/v1/{name=projects/*/widgets/*}" };
  }
}
message Widget {
  option (google.api.resource) = { type: "demo.googleapis.com/Widget" pattern: "projects/{project}/widgets/{widget}" };
  string name = 1;
  string colour = 2;
}
message CreateWidgetRequest {
  string name = 1;
  // Required. The id of the widget. Unique in its project.
  string widget_id = 2;
  Widget widget = 3;
  ${extraCreateField}
}
message GetWidgetRequest { string name = 1; }
message PatchWidgetRequest { Widget widget = 1; google.protobuf.FieldMask update_mask = 2; }
`;
const write = (dir: string, extra: string) => {
  mkdirSync(join(root, dir, "google/demo/v1"), { recursive: true });
  writeFileSync(join(root, dir, "google/demo/v1/demo.proto"), proto(extra));
  return join(root, dir);
};

beforeAll(() => {
  generateGcp();
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a create whose whole request is the body", () => {
  it("is extracted with the resource's field, its id and the PATCH with a mask preferred to a PUT", () => {
    const { resources, failed } = extract(write("plain", ""));
    expect(failed).toEqual([]);
    expect(resources).toHaveLength(1);
    expect(resources[0]).toMatchObject({
      type: "demo.googleapis.com/Widget",
      create: {
        m: "post",
        body: "*",
        idParam: "widget_id",
        wrap: "widget",
        idDoc: "The id of the widget.",
      },
      update: { m: "patch", mask: "update_mask", wrap: "widget" },
    });
  });

  it("is not taken when the request carries a second resource message beside the resource", () => {
    const { resources, notTaken } = extract(write("extra", "Widget template = 4;"));
    expect(resources).toEqual([]);
    expect(notTaken.map((x) => x.why)).toEqual(["fields-beside-resource"]);
  });

  it("is taken beside a request control (validate_only), which is never a create field", () => {
    const { resources } = extract(write("control", "bool validate_only = 4;"));
    expect(resources).toHaveLength(1);
    expect(resources[0]?.create).toMatchObject({ wrap: "widget", idParam: "widget_id" });
    expect(resources[0]?.create?.fields).toBeUndefined();
  });

  it("makes IAM's ServiceAccount: accountId an immutable required spec field, Google's name the external name", () => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === "iam.googleapis.com/ServiceAccount");
    expect(e).toMatchObject({ group: "iamadmin.googleapis", kind: "ServiceAccount" });
    const s = loadGoogleSpec(e as never);
    expect(s.externalName).toBe("providerChosen");
    expect(s.google.createId).toBe("accountId");
    expect(s.properties.accountId).toMatchObject({ req: true });
    expect(s.createOnly).toEqual(["accountId"]);
    // Never write-only: the engine compares it (with the id the provider recorded) so a change is refused.
    expect(s.writeOnly).not.toContain("accountId");
    // Server state in atProvider: the email, the unique id, the (deprecated) etag.
    expect(Object.keys(s.attributes)).toEqual(
      expect.arrayContaining(["name", "email", "uniqueId", "oauth2ClientId", "disabled", "etag"]),
    );
    expect(Object.keys(s.properties).sort()).toEqual(["accountId", "description", "displayName"]);
    expect(s.permissions).toEqual({
      create: ["iam.serviceAccounts.create"],
      read: ["iam.serviceAccounts.get"],
      update: ["iam.serviceAccounts.update"],
      delete: ["iam.serviceAccounts.delete"],
      list: ["iam.serviceAccounts.list"],
    });
    expect(s.google.unconfirmedPermissions).toBeUndefined();
    expect(googleKindOf(s).immutable).toContain("accountId");
  });
});

describe("a resource's etag (AIP-154: computed by the server)", () => {
  it("is atProvider, never forProvider, on every resource-oriented kind", () => {
    const inSpec = loadGoogleCatalog()
      .kinds.filter((k) => k.family === "resource")
      .map((k) => loadGoogleSpec(k))
      .filter((s) => s.properties.etag)
      .map((s) => s.typeName);
    expect(inSpec).toEqual([]);
  });
});
