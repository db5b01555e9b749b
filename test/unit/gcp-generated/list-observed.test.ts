// A resource Google lets a caller create and delete but read only through a list of its parent's collection
// (Resource Manager's TagBinding: CreateTagBinding `POST /v3/tagBindings`, ListTagBindings `GET /v3/tagBindings
// ?parent=…`, no GetTagBinding): taken as list-observed, the list's binding, answer field and paging recorded.
// A create with no get and no such list (BigQuery Storage's ReadSession) stays in the census as no-get.
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadFacts } from "../../../infra/gcp/facts.ts";
import { extract } from "../../../infra/gcp/refresh-apis.ts";
import type { GoogleGenericFake } from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { LIST_PAGE_SIZE } from "../../../shared/providers/gcp/generic/client.ts";
import { demoProtos } from "../../support/demo-protos.ts";
import { connectGoogle, withGoogleFake } from "../../support/gcp-generated.ts";

const protos = demoProtos("list-observed-protos-");
const proto = (list: string) => `syntax = "proto3";
package google.demo.v1;
service Demo {
  option (google.api.default_host) = "demo.googleapis.com";
  rpc CreateKey(CreateKeyRequest) returns (Key) {
    option (google.api.http) = { post: "/v1/{parent=projects/*/locations/*}/keys" body: "key" };
  }
  rpc DeleteKey(DeleteKeyRequest) returns (Empty) {
    option (google.api.http) = { delete: "/v1/{name=projects/*/locations/*/keys/*}" };
  }
  ${list}
}
message Empty {}
message Key {
  option (google.api.resource) = { type: "demo.googleapis.com/Key" pattern: "projects/{project}/locations/{location}/keys/{key}" };
  string name = 1;
  string public_key = 2;
}
message CreateKeyRequest { string parent = 1; Key key = 2; string key_id = 3; }
message DeleteKeyRequest { string name = 1; }
message ListKeysRequest { string parent = 1; int32 page_size = 2; string page_token = 3; }
message ListKeysResponse { repeated Key keys = 1; string next_page_token = 2; }
message SearchKeysResponse { repeated Key keys = 1; }
`;

const LIST = `rpc ListKeys(ListKeysRequest) returns (ListKeysResponse) {
    option (google.api.http) = { get: "/v1/{parent=projects/*/locations/*}/keys" };
  }`;

describe("a create with no get, answered by a list of its parent's collection", () => {
  it("is taken as list-observed: no get, the list's binding, its answer's field and page-token paging", () => {
    const { resources, notTaken, failed } = extract(protos("listed", proto(LIST)));
    expect(failed).toEqual([]);
    expect(notTaken).toEqual([]);
    expect(resources).toHaveLength(1);
    const [key] = resources;
    expect(key).toMatchObject({
      type: "demo.googleapis.com/Key",
      create: { m: "post", p: "/v1/{parent=projects/*/locations/*}/keys", idParam: "key_id" },
      delete: { m: "delete", p: "/v1/{name=projects/*/locations/*/keys/*}" },
      list: { m: "get", p: "/v1/{parent=projects/*/locations/*}/keys" },
      listObserved: { method: "ListKeys", field: "keys", paging: "pageToken" },
    });
    expect(key?.get).toBeUndefined();
  });

  it("stays no-get where the list is on another path, has no page token, or there is none", () => {
    const cases = {
      none: "",
      elsewhere: LIST.replace("}/keys", "}/keys:search"),
      unpaged: LIST.replace("ListKeysResponse", "SearchKeysResponse"),
    };
    for (const [dir, list] of Object.entries(cases)) {
      const { resources, notTaken } = extract(protos(dir, proto(list)));
      expect(resources, dir).toEqual([]);
      expect(notTaken, dir).toMatchObject([{ type: "demo.googleapis.com/Key", why: "no-get" }]);
    }
  });
});

describe("on Google's protos (the committed bundle, extracted from googleapis at its pinned commit)", () => {
  const facts = loadFacts();
  it("takes TagBinding as list-observed: ListTagBindings on the create's own path, the parent in the query", () => {
    const tb = facts.resources.find((r) => r.type === "cloudresourcemanager.googleapis.com/TagBinding");
    expect(tb).toMatchObject({
      create: { m: "post", p: "/v3/tagBindings", body: "tag_binding", lro: "longrunning" },
      delete: { m: "delete", p: "/v3/{name=tagBindings/**}" },
      list: { m: "get", p: "/v3/tagBindings" },
      listObserved: { method: "ListTagBindings", field: "tagBindings", paging: "pageToken" },
    });
    expect(tb?.get).toBeUndefined();
    expect(facts.notTaken?.some((x) => x.type === tb?.type)).toBe(false);
  });

  it("keeps ReadSession, Challenge and Assessment (no list) and MonitoredProject (no paged list) not taken, no-get", () => {
    for (const type of [
      "bigquerystorage.googleapis.com/ReadSession",
      "confidentialcomputing.googleapis.com/Challenge",
      "recaptchaenterprise.googleapis.com/Assessment",
      "monitoring.googleapis.com/MonitoredProject",
    ]) {
      expect(
        facts.resources.some((r) => r.type === type),
        type,
      ).toBe(false);
      expect(
        facts.notTaken?.find((x) => x.type === type),
        type,
      ).toMatchObject({ why: "no-get" });
    }
  });

  // The protos themselves where a copy of the pinned commit is written out (RULES: /tmp/googleapis-f8291d2).
  const pinned = "/tmp/googleapis-f8291d2";
  it.skipIf(!existsSync(`${pinned}/google/cloud/resourcemanager/v3`))(
    "extracts the same from the protos: TagBinding and TagHold list-observed, ReadSession no-get",
    () => {
      const rm = extract(pinned, "google/cloud/resourcemanager");
      const types = rm.resources.filter((r) => r.listObserved).map((r) => r.type);
      expect(types).toEqual(
        expect.arrayContaining([
          "cloudresourcemanager.googleapis.com/TagBinding",
          "cloudresourcemanager.googleapis.com/TagHold",
        ]),
      );
      const bq = extract(pinned, "google/cloud/bigquery/storage");
      expect(bq.resources).toEqual([]);
      expect(bq.notTaken.find((x) => x.type === "bigquerystorage.googleapis.com/ReadSession")).toMatchObject({
        why: "no-get",
      });
    },
  );
});

let fake: GoogleGenericFake;
withGoogleFake({ opPolls: 0 }, (f) => {
  fake = f;
});

describe("the generic provider on a list-observed kind (Bare Metal Solution's SshKey)", () => {
  const SSH = "baremetalsolution.googleapis.com/SshKey";
  const spec = () => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === SSH);
    if (!e) throw new Error(`${SSH} is not generated`);
    return loadGoogleSpec(e);
  };
  const mr = (location: string) =>
    ({
      metadata: { name: "k", uid: "u", annotations: {} },
      spec: { forProvider: { location, publicKey: "ssh-ed25519 AAAA k@test" } },
    }) as unknown as ManagedResource<Record<string, unknown>, Record<string, unknown>>;
  const gets = () => Object.entries(fake.stats()).filter(([k]) => /^GET baremetalsolution k\d+$/.test(k));

  it("has no get and reads by its list: found on the second page, a deleted one gone, never a GET of a name", async () => {
    expect(spec().google.get).toBeUndefined();
    const client = await connectGoogle(spec(), fake.url);
    // One more than a page, so the last made is only on the second page.
    const ids = Array.from({ length: LIST_PAGE_SIZE + 1 }, (_, i) => `k${i}`);
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(ids.slice(i, i + 50).map((id) => client.create(mr("us-east1"), id)));
    fake.reset();
    const last = await client.observe(mr("us-east1"), ids.at(-1));
    expect(last).toMatchObject({
      resourceExists: true,
      atProvider: { name: expect.stringMatching(/\/sshKeys\/k500$/) },
    });
    // Two pages of the location's list (the fake keys a list by its parent's last segment), nothing else.
    expect(fake.stats()).toEqual({ "GET baremetalsolution us-east1": 2 });

    await client.delete(mr("us-east1"), "k1");
    fake.reset();
    const many = await client.observeMany?.([
      { mr: mr("us-east1"), externalName: "k0" },
      { mr: mr("us-east1"), externalName: "k1" },
      { mr: mr("us-east1"), externalName: "k500" },
    ]);
    expect(many?.map((o) => (o instanceof Error ? o.message : o.resourceExists))).toEqual([
      true,
      false,
      true,
    ]);
    // The location's list once (500 left: one page): the one it does not show is gone, not listed again.
    expect(fake.stats()).toEqual({ "GET baremetalsolution us-east1": 1 });
    // Elsewhere (another location) it is not listed: gone, not another location's key of the same id.
    expect(await client.observe(mr("europe-west1"), "k0")).toMatchObject({ resourceExists: false });
    expect(gets()).toEqual([]);
  });
});
