// A create that names its resource inside a statement (Spanner's CreateDatabase: `{parent, create_statement:
// "CREATE DATABASE `id`", extra_statements, encryption_config, database_dialect, proto_descriptors}`, body `*`,
// no resource message, answering the Database): taken by the extractor only in that shape, and generated as a
// kind named by the caller's id whose create-time inputs are immutable spec fields recorded at create.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { extract } from "../../../infra/gcp/refresh-apis.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { createStatementOf } from "../../../shared/providers/gcp/generic/client.ts";
import { demoProtos } from "../../support/demo-protos.ts";

const protos = demoProtos("statement-protos-");
const proto = (statementComment: string) => `syntax = "proto3";
package google.demo.v1;
service Demo {
  option (google.api.default_host) = "demo.googleapis.com";
  rpc CreateDatabase(CreateDatabaseRequest) returns (Database) {
    option (google.api.http) = { post: "/v1/{parent=projects/*}/databases" body: "*" };
  }
  rpc GetDatabase(GetDatabaseRequest) returns (Database) {
    option (google.api.http) = { get: "/v1/{name=projects/*/databases/*}" };
  }
  rpc DropDatabase(DropDatabaseRequest) returns (Database) {
    option (google.api.http) = { delete: "/v1/{database=projects/*/databases/*}" };
  }
}
message Database {
  option (google.api.resource) = { type: "demo.googleapis.com/Database" pattern: "projects/{project}/databases/{database}" };
  string name = 1;
  bool enable_drop_protection = 2;
}
message Options { string key = 1; }
message CreateDatabaseRequest {
  string parent = 1;
  // ${statementComment}
  string create_statement = 2 [(google.api.field_behavior) = REQUIRED];
  repeated string extra_statements = 3;
  Options options = 4;
}
message GetDatabaseRequest { string name = 1; }
message DropDatabaseRequest { string database = 1; }
`;
const write = (dir: string, comment: string) => protos(dir, proto(comment));

beforeAll(() => {
  generateGcp();
}, 60_000);

describe("a create whose request names the resource in a create statement", () => {
  it("is extracted with the statement field, every other request field a create-time input, and a delete bound to its own variable", () => {
    const { resources, notTaken, failed } = extract(
      write("plain", "Required. A `CREATE DATABASE` statement, which specifies the ID of the new database."),
    );
    expect(failed).toEqual([]);
    expect(notTaken).toEqual([]);
    expect(resources).toHaveLength(1);
    expect(resources[0]).toMatchObject({
      type: "demo.googleapis.com/Database",
      create: {
        m: "post",
        body: "*",
        statement: "createStatement",
        request: "google.demo.v1.CreateDatabaseRequest",
        fields: ["extraStatements", "options"],
      },
      delete: { m: "delete", p: "/v1/{database=projects/*/databases/*}" },
    });
    expect(resources[0]?.create?.idParam).toBeUndefined();
  });

  it("takes the statements appended after create (UpdateDatabaseDdl: PATCH on the name's `/ddl`, REQUIRED repeated `statements`, `operation_id`) and its GET twin; not without an operation id", () => {
    const ddl = (opId: string) =>
      proto("Required. A `CREATE DATABASE` statement, which specifies the ID of the new database.")
        .replace(
          "package google.demo.v1;",
          'package google.demo.v1;\nimport "google/longrunning/operations.proto";',
        )
        .replace(
          "service Demo {",
          `service Demo {
  rpc UpdateDatabaseDdl(UpdateDatabaseDdlRequest) returns (google.longrunning.Operation) {
    option (google.api.http) = { patch: "/v1/{database=projects/*/databases/*}/ddl" body: "*" };
    option (google.longrunning.operation_info) = { response_type: "google.protobuf.Empty" metadata_type: "Options" };
  }
  rpc GetDatabaseDdl(GetDatabaseDdlRequest) returns (GetDatabaseDdlResponse) {
    option (google.api.http) = { get: "/v1/{database=projects/*/databases/*}/ddl" };
  }`,
        )
        .concat(`message UpdateDatabaseDdlRequest {
  string database = 1;
  repeated string statements = 2 [(google.api.field_behavior) = REQUIRED];
  ${opId}
}
message GetDatabaseDdlRequest { string database = 1; }
message GetDatabaseDdlResponse { repeated string statements = 1; }
`);
    // google.longrunning.Operation, as google/longrunning/operations.proto declares it (its fields aside).
    const withLro = (root: string) => {
      mkdirSync(join(root, "google/longrunning"), { recursive: true });
      writeFileSync(
        join(root, "google/longrunning/operations.proto"),
        'syntax = "proto3";\npackage google.longrunning;\nmessage Operation { string name = 1; bool done = 3; }\n',
      );
      return root;
    };
    const taken = extract(withLro(protos("ddl", ddl("string operation_id = 3;")))).resources[0];
    expect(taken?.appendStatements).toEqual({
      m: "patch",
      p: "/v1/{database=projects/*/databases/*}/ddl",
      body: "*",
      lro: "longrunning",
      rpc: "UpdateDatabaseDdl",
      field: "extraStatements",
      read: { m: "get", p: "/v1/{database=projects/*/databases/*}/ddl" },
    });
    const noId = extract(withLro(protos("ddl-no-id", ddl("")))).resources[0];
    expect(noId?.create?.statement).toBe("createStatement");
    expect(noId?.appendStatements).toBeUndefined();
  });

  it("is not taken when the statement's comment does not say it specifies the id", () => {
    const { resources, notTaken } = extract(write("unnamed", "Required. A statement run first."));
    expect(resources).toEqual([]);
    expect(notTaken.map((x) => x.why)).toEqual(["no-resource-message"]);
  });

  it("makes Spanner's Database: named by the caller's id, its create's inputs immutable spec fields, drop protection updatable", () => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === "spanner.googleapis.com/Database");
    expect(e).toBeDefined();
    const s = loadGoogleSpec(e as never);
    expect(s.externalName).toBe("fromAnnotation");
    expect(s.google.create).toMatchObject({ statement: "createStatement", lro: "longrunning" });
    expect(s.google.createFields).toEqual([
      "extraStatements",
      "encryptionConfig",
      "databaseDialect",
      "protoDescriptors",
    ]);
    expect(Object.keys(s.properties)).toEqual(
      expect.arrayContaining(["enableDropProtection", "extraStatements", "databaseDialect"]),
    );
    expect(s.properties.createStatement).toBeUndefined();
    expect(s.createOnly).toEqual(
      expect.arrayContaining(["extraStatements", "encryptionConfig", "databaseDialect", "protoDescriptors"]),
    );
    expect(s.createOnly).not.toContain("enableDropProtection");
    expect(s.google.update).toMatchObject({ m: "patch", mask: "update_mask" });
    // DDL appended after create: UpdateDatabaseDdl, its own IAM permission beside the update's.
    expect(s.google.appendStatements).toMatchObject({
      m: "patch",
      p: "/v1/{database=projects/*/instances/*/databases/*}/ddl",
      rpc: "UpdateDatabaseDdl",
      field: "extraStatements",
      read: { m: "get" },
    });
    expect(s.permissions.update).toContain("spanner.databases.updateDdl");
  });
});

describe("the create statement (CreateDatabaseRequest.create_statement)", () => {
  it("quotes the id as each dialect does", () => {
    expect(createStatementOf("orders", undefined)).toBe("CREATE DATABASE `orders`");
    expect(createStatementOf("orders-1", "GOOGLE_STANDARD_SQL")).toBe("CREATE DATABASE `orders-1`");
    expect(createStatementOf("orders-1", "POSTGRESQL")).toBe('CREATE DATABASE "orders-1"');
  });
});
