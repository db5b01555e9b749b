// References of the generated Google Cloud kinds beyond the protos' top level: Compute's, from Config
// Connector's service mappings (compute-references.json.gz), mapped onto the generated Compute kinds' API
// fields with every unmapped one reported; and nested ones (a resource_reference, or a KCC reference,
// inside a message or a list of messages) with `…Ref` / `…Selector` in the same nested position, resolved
// element-wise by the engine's own resolver.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadApiNames, loadRefs } from "../../../infra/gcp/facts.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { startGoogleGenericFake } from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf, modelOf, referenceValueOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec, GoogleRef } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { observedOf } from "../../../shared/providers/awscc/model.ts";
import {
  ReferenceNotReadyError,
  referencesResolved,
  resolveReferences,
} from "../../../shared/reconciler/references.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { shapeAt } from "../../support/zod-shape.ts";

type Json = Record<string, unknown>;
const all: Array<{ spec: GoogleKindSpec; ref: GoogleRef }> = [];
const specOf = (type: string, kind: string) => {
  const e = loadGoogleCatalog().kinds.find((k) => k.typeName === type && k.kind === kind);
  if (!e) throw new Error(`${type} ${kind} not generated`);
  return loadGoogleSpec(e);
};

beforeAll(() => {
  generateGcp();
  for (const e of loadGoogleCatalog().kinds) {
    const spec = loadGoogleSpec(e);
    for (const ref of spec.google.refs ?? []) all.push({ spec, ref });
  }
}, 120_000);

describe("Compute references from Config Connector's service mappings", () => {
  it("records where they come from, and the data's README names the same origin", () => {
    const { origin } = loadRefs();
    expect(loadGoogleCatalog().refsSource).toEqual(origin);
    const readme = readFileSync(join(import.meta.dirname, "../../../infra/gcp/README.md"), "utf8");
    expect(readme).toContain(origin.commit);
    expect(readme).toContain("npm run refresh:gcp-refs");
  });

  it("maps them onto the Compute kinds' own fields, each to a served kind, and reports every one it cannot map", () => {
    const catalog = loadGoogleCatalog();
    const served = new Map(catalog.kinds.map((k) => [`${k.group}/${k.kind}`, k]));
    const kcc = all.filter((x) => x.ref.source === "kcc");
    // Measured on the pinned data: 111 Compute reference fields in 33 kinds, 44 of them nested.
    expect(kcc.length).toBeGreaterThan(80);
    expect(new Set(kcc.map((x) => x.spec.kind)).size).toBeGreaterThan(28);
    expect(kcc.filter((x) => x.ref.at).length).toBeGreaterThan(25);
    for (const { spec, ref } of kcc) {
      expect(spec.google.family).toBe("compute");
      // A hand-written kind (the GCS Bucket) serves a type no generated kind does: not in the catalog.
      if (ref.from === "externalName") continue;
      expect(served.get(`${ref.group}/${ref.kind}`)?.typeName, `${spec.kind}.${ref.field}`).toBe(ref.type);
    }
    // Every KCC reference is either mapped or listed with its reason: none dropped.
    const bundle = loadRefs();
    const total = bundle.resources.reduce((n, r) => n + r.refs.reduce((m, x) => m + x.targets.length, 0), 0);
    const unmapped = catalog.unmappedRefs ?? [];
    expect(kcc.length + unmapped.length).toBe(total);
    for (const u of unmapped) expect(u.why, JSON.stringify(u)).toMatch(/\S{3,}/);
    expect(unmapped).toContainEqual(
      expect.objectContaining({
        resource: "google_compute_instance",
        tfField: "boot_disk.source",
        why: "the API's Instance has no field for boot_disk",
      }),
    );
  });

  it("lands a Terraform field whose name is not the API's on the API's field, as Magic Modules' api_name says", () => {
    const names = loadApiNames();
    expect(loadGoogleCatalog().apiNamesSource).toEqual(names.origin);
    const readme = readFileSync(join(import.meta.dirname, "../../../infra/gcp/README.md"), "utf8");
    expect(readme).toContain(names.origin.commit);
    expect(names.resources.google_compute_disk?.image).toBe("sourceImage");
    const pick = (kind: string, field: string) =>
      specOf(`compute.googleapis.com/${kind}`, kind).google.refs?.find((r) => r.field === field && !r.at);
    expect(pick("Disk", "sourceImage")).toMatchObject({ kind: "Image", source: "kcc" });
    expect(pick("Disk", "sourceSnapshot")).toMatchObject({ kind: "Snapshot", source: "kcc" });
    expect(pick("ForwardingRule", "IPAddress")).toMatchObject({ source: "kcc" });
    expect(pick("TargetSslProxy", "service")).toMatchObject({ kind: "BackendService", source: "kcc" });
    const unmapped = loadGoogleCatalog().unmappedRefs ?? [];
    expect(unmapped.filter((u) => u.resource === "google_compute_disk" && u.tfField === "image")).toEqual([]);
  });

  it("gives Subnetwork, Firewall and Instance network references that take the Network's self link", () => {
    const pick = (kind: string, field: string, at?: string) =>
      specOf(`compute.googleapis.com/${kind}`, kind).google.refs?.find(
        (r) => r.field === field && r.at === at,
      );
    for (const kind of ["Subnetwork", "Firewall", "Route", "Router"])
      expect(pick(kind, "network"), kind).toMatchObject({ kind: "Network", from: "selfLink", source: "kcc" });
    expect(pick("Instance", "network", "networkInterfaces")).toMatchObject({
      kind: "Network",
      from: "selfLink",
    });
    expect(pick("Instance", "subnetwork", "networkInterfaces")).toMatchObject({ kind: "Subnetwork" });
    expect(pick("Address", "subnetwork")).toMatchObject({ kind: "Subnetwork" });
  });

  it("gives the 9 Compute service-account fields a reference to the generated IAM ServiceAccount, filled with its email", () => {
    const sa = all.filter(
      (x) => x.ref.source === "kcc" && x.ref.type === "iam.googleapis.com/ServiceAccount",
    );
    expect(sa.map((x) => `${x.spec.kind}.${x.ref.at ? `${x.ref.at}.` : ""}${x.ref.field}`).sort()).toEqual([
      "Disk.diskEncryptionKey.kmsKeyServiceAccount",
      "Disk.sourceImageEncryptionKey.kmsKeyServiceAccount",
      "Disk.sourceSnapshotEncryptionKey.kmsKeyServiceAccount",
      "Firewall.sourceServiceAccounts",
      "Firewall.targetServiceAccounts",
      "Image.imageEncryptionKey.kmsKeyServiceAccount",
      "Instance.serviceAccounts.email",
      "Snapshot.snapshotEncryptionKey.kmsKeyServiceAccount",
      "Snapshot.sourceDiskEncryptionKey.kmsKeyServiceAccount",
    ]);
    for (const { ref } of sa)
      expect(ref).toMatchObject({ group: "iamadmin.googleapis", kind: "ServiceAccount", from: "email" });
    const firewall = sa.find((x) => x.ref.field === "targetServiceAccounts")?.ref;
    expect(firewall).toMatchObject({ list: true });
  });

  it("points BackendBucket's bucketName at the hand-written GCS Bucket kind, filled with its external name", () => {
    const ref = specOf("compute.googleapis.com/BackendBucket", "BackendBucket").google.refs?.find(
      (r) => r.field === "bucketName",
    );
    expect(ref).toMatchObject({
      type: "storage.googleapis.com/Bucket",
      group: "storage.gcp",
      kind: "Bucket",
      plural: "buckets",
      from: "externalName",
      source: "kcc",
    });
    const bucket = {
      apiVersion: "storage.gcp.driftless.dev/v1alpha1",
      kind: "Bucket",
      metadata: { name: "b", annotations: { [Annotations.externalName]: "my-bucket-1" } },
      spec: { forProvider: {} },
    } as unknown as ManagedResource;
    expect(referenceValueOf(ref as GoogleRef, bucket)).toBe("my-bucket-1");
    expect((loadGoogleCatalog().unmappedRefs ?? []).filter((u) => u.target === "StorageBucket")).toEqual([]);
  });

  it("fills the kms_key_self_link references on kmsKeyName (5 unmapped before) with the generated CryptoKey's full name", () => {
    const kms = all.filter(
      (x) => x.ref.source === "kcc" && x.ref.type === "cloudkms.googleapis.com/CryptoKey",
    );
    expect(kms.map((x) => `${x.spec.kind}.${x.ref.at}.${x.ref.field}`).sort()).toEqual([
      "Disk.diskEncryptionKey.kmsKeyName",
      "Disk.sourceImageEncryptionKey.kmsKeyName",
      "Disk.sourceSnapshotEncryptionKey.kmsKeyName",
      "Image.imageEncryptionKey.kmsKeyName",
      // RegionDisk's two were mapped before (Config Connector gives them a valueTemplate of the key's name).
      "RegionDisk.diskEncryptionKey.kmsKeyName",
      "RegionDisk.sourceSnapshotEncryptionKey.kmsKeyName",
      "Snapshot.snapshotEncryptionKey.kmsKeyName",
    ]);
    // No `from`: the target's full name (projects/…/cryptoKeys/k), what Compute's kmsKeyName takes.
    for (const { ref } of kms) expect(ref.from).toBeUndefined();
    expect((loadGoogleCatalog().unmappedRefs ?? []).filter((u) => u.target === "KMSCryptoKey")).toEqual([]);
  });
});

describe("the Compute fake, on reference fields", () => {
  it("accepts a full URL and a partial one, refuses anything else with Compute's message, and refuses networkRef", async () => {
    const fake = await startGoogleGenericFake({ opPolls: 0 });
    try {
      const insert = (body: Json) =>
        fetch(`${fake.url}/compute/compute/v1/projects/p/global/firewalls`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const full = "https://www.googleapis.com/compute/v1/projects/p/global/networks/n";
      for (const [name, network] of [
        ["fw-full", full],
        ["fw-partial", "projects/p/global/networks/n"],
        ["fw-short", "global/networks/n"],
      ])
        expect((await insert({ name, network })).status, network).toBe(200);
      const bad = await insert({ name: "fw-bad", network: "n" });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toContain(
        "Invalid value for field 'resource.network': 'n'. The URL is malformed.",
      );
      const ref = await insert({ name: "fw-ref", network: full, networkRef: { name: "n" } });
      expect(ref.status).toBe(400);
      expect(((await ref.json()) as { error: { message: string } }).error.message).toContain(
        'Unknown name "networkRef"',
      );
    } finally {
      await fake.close();
    }
  });
});

describe("nested references", () => {
  it("are made for resource_reference annotations below the top level, beside their field, within the CRD's depth", () => {
    const proto = all.filter((x) => x.ref.at && x.ref.source !== "kcc");
    // Measured on the pinned facts: 348 nested references from the protos, in 128 kinds.
    expect(proto.length).toBeGreaterThan(300);
    const problems: string[] = [];
    for (const { spec, ref } of all.filter((x) => x.ref.at)) {
      const shape = shapeAt(googleKindOf(spec).forProvider, ref.at);
      const base = ref.list ? ref.field.replace(/s$/, "") : ref.field;
      for (const f of [ref.field, ref.list ? `${base}Refs` : `${base}Ref`, `${base}Selector`])
        if (!shape?.[f]) problems.push(`${spec.kind} ${ref.at}.${f}`);
    }
    expect(problems.slice(0, 10)).toEqual([]);
  });

  describe("resolution", () => {
    const instance = specOf("compute.googleapis.com/Instance", "Instance");
    const network = googleKindOf(specOf("compute.googleapis.com/Network", "Network"));
    const def = googleKindOf(instance);
    const link = (n: string) => `https://www.googleapis.com/compute/v1/projects/p/global/networks/${n}`;
    const target = (name: string, ready: boolean, labels: Json = {}) =>
      ({
        apiVersion: network.apiVersion,
        kind: network.kind,
        metadata: { name, labels, annotations: { [Annotations.externalName]: name } },
        spec: { forProvider: {} },
        status: {
          atProvider: { selfLink: link(name) },
          conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
        },
      }) as unknown as ManagedResource;
    const mr = (forProvider: Json) =>
      ({
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name: "vm" },
        spec: { forProvider },
      }) as unknown as ManagedResource;
    const setup = () => {
      const api = new MemoryApiServer();
      for (const t of [target("a", true), target("b", true, { team: "blue" }), target("c", false)])
        api.seed(network, t as never);
      return api.kube();
    };

    it("fills each list item's field from its own reference or selector, and leaves a set field alone", async () => {
      const kube = setup();
      const vm = mr({
        zone: "us-central1-a",
        networkInterfaces: [
          { networkRef: { name: "a" } },
          { networkSelector: { matchLabels: { team: "blue" } } },
          { network: "global/networks/given" },
        ],
      });
      expect(referencesResolved(def, vm)).toBe(false);
      const fp = (await resolveReferences(kube, def, vm)) as Json;
      expect(fp.networkInterfaces).toEqual([
        { networkRef: { name: "a" }, network: link("a") },
        { networkSelector: { matchLabels: { team: "blue" } }, networkRef: { name: "b" }, network: link("b") },
        { network: "global/networks/given" },
      ]);
      expect(referencesResolved(def, mr(fp))).toBe(true);
      expect(await resolveReferences(kube, def, mr(fp))).toBeUndefined();
    });

    it("waits, naming the list item, for a target that is missing or not Ready", async () => {
      const kube = setup();
      for (const [name, why] of [
        ["c", 'referenced Network "c" is not Ready (networkInterfaces[1].networkRef)'],
        ["nope", 'referenced Network "nope" does not exist (networkInterfaces[1].networkRef)'],
      ] as const) {
        const vm = mr({ networkInterfaces: [{ networkRef: { name: "a" } }, { networkRef: { name } }] });
        const err = await resolveReferences(kube, def, vm).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ReferenceNotReadyError);
        expect((err as Error).message).toContain(why);
      }
    });

    it("keeps a list item's reference fields out of drift: the observation carries them as the spec has them", () => {
      const want = {
        networkInterfaces: [{ networkRef: { name: "a" }, network: link("a") }],
      };
      const cloud = { name: "vm", networkInterfaces: [{ network: link("a"), name: "nic0" }] };
      const seen = observedOf(modelOf(instance), cloud, "", want) as Json;
      expect((seen.networkInterfaces as Json[])[0]).toMatchObject(want.networkInterfaces[0] as Json);
      expect(def.references.find((r) => r.at === "networkInterfaces" && r.field === "network")).toBeTruthy();
    });
  });
});
