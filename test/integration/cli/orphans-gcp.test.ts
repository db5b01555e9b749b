// `driftless orphans` for Google on the Compute and Cloud Asset fakes and the real kube-apiserver: global
// addresses created through driftless carry Crossplane's default labels; the one whose managed resource is
// deleted with deletionPolicy Orphan stays in the project, and Cloud Asset Inventory's searchAllResources
// finds it by labels.crossplane-providerconfig. Listed (exit code 1): the orphan; not listed: what is still
// managed. Nothing is deleted. In the first suite the Cloud Asset fake indexes what this suite's Compute fake
// holds (the fakes run in this process) and pages one result at a time; the last one uses the local stack's
// Cloud Asset fake, which indexes every Google fake of the stack.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startCloudAssetFake } from "../../../infra/local/fakes/gcp-cloudasset-fake.ts";
import type { FakeHttpServer } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GcpPrivateNetworkingFakes,
  startGcpPrivateNetworkingFakes,
} from "../../../infra/local/fakes/gcp-private-networking-fakes.ts";
import { GlobalAddress } from "../../../shared/api/gcp/compute.ts";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import type { OrphanReport } from "../../../shared/ops/orphans.ts";
import { ensureCrds, ensureNamespace } from "../../support/aws.ts";
import { managedObject } from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, fakeStorage, gcpProject } from "../../support/gcp.ts";
import { getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const PC = uniqueName("pc-orphans-gcp");
const NET = uniqueName("orphans-net");
let fakes: GcpPrivateNetworkingFakes;
let assets: FakeHttpServer;

const address = (name: string) =>
  ({
    apiVersion: GlobalAddress.apiVersion,
    kind: GlobalAddress.kind,
    metadata: { name },
    spec: {
      providerConfigRef: { name: PC },
      deletionPolicy: "Orphan",
      forProvider: { network: `projects/${gcpProject()}/global/networks/${NET}`, prefixLength: 24 },
    },
  }) as unknown as KubeObject;
const assetName = (name: string) =>
  `//compute.googleapis.com/projects/${gcpProject()}/global/addresses/${name}`;

/** A GCP ProviderConfig on the fakes whose Cloud Asset endpoint is `cloudAsset`. */
async function createPc(name: string, cloudAsset: string) {
  const t = providerConfigs.gcp.type;
  await kube.create(t, {
    apiVersion: `${t.group}/${t.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    // The fakes take no credentials, and driftless sends none to a host that is not Google's.
    spec: {
      projectID: gcpProject(),
      credentials: { source: "InjectedIdentity" },
      endpoint: { ...fakes.endpoint, cloudAsset },
    },
  });
}

beforeAll(async () => {
  fakes = await startGcpPrivateNetworkingFakes();
  assets = await startCloudAssetFake([fakes.compute], { maxPageSize: 1 });
  await ensureCrds();
  await ensureNamespace(kube, "driftless-system");
  await kube.delete(providerConfigs.gcp.type, PC);
  await createPc(PC, assets.url);
  fakes.compute.seedNetwork(gcpProject(), NET);
});

afterAll(async () => {
  await kube.delete(providerConfigs.gcp.type, PC);
  await assets?.close();
  await fakes?.close();
});

describe("driftless orphans (Google)", () => {
  it("lists the resources whose managed resource is gone (orphan policy), not those still managed; exit 1", async () => {
    const kept = uniqueName("addr-managed");
    const gone = uniqueName("addr-orphaned");
    const r = newReconciler(kube);
    for (const n of [kept, gone]) {
      await kube.create(GlobalAddress, address(n));
      await settle(r, keyOf(GlobalAddress, n));
      expect(fakes.compute.address(gcpProject(), n)?.labels).toMatchObject({
        "crossplane-providerconfig": PC,
        "crossplane-name": n,
      });
    }

    // Before: everything labelled for the ProviderConfig is managed.
    const before = await cli(["orphans", "--provider-config", PC, "-o", "json"]);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({
      cloud: "gcp",
      providerConfig: PC,
      searched: 2,
      orphans: [],
    });

    // The managed resource goes with deletionPolicy Orphan: the address stays in the project.
    await kube.delete(GlobalAddress, gone);
    await settle(r, keyOf(GlobalAddress, gone));
    expect(await getMr(kube, GlobalAddress, gone)).toBeUndefined();
    expect(fakes.compute.address(gcpProject(), gone)).toBeDefined();

    assets.reset();
    const res = await cli(["orphans", "--provider-config", PC, "-o", "yaml"]);
    expect(res.code, res.stderr).toBe(1);
    // Two results, one per page: two searches (the second with the first's pageToken).
    expect(assets.stats()).toEqual({ "GET searchAllResources": 2 });
    const report = parse(res.stdout) as OrphanReport;
    expect(report).toMatchObject({ cloud: "gcp", providerConfig: PC, searched: 2, foreign: 0 });
    expect(report.orphans).toHaveLength(1);
    expect(report.orphans[0]).toMatchObject({
      id: assetName(gone),
      type: "compute.googleapis.com/GlobalAddress",
      location: "global",
      managedResource: `GlobalAddress ${gone}`,
      adopt: `driftless import --provider-config ${PC} --kinds compute.globaladdress -o <dir>`,
      tags: { "crossplane-providerconfig": PC, "crossplane-name": gone },
    });

    const text = await cli(["orphans", "--provider-config", PC]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(assetName(gone));
    expect(text.stdout).toContain(`1 orphan(s) among 2 resource(s) tagged for gcp ProviderConfig "${PC}"`);

    // Never deletes anything.
    expect(fakes.compute.address(gcpProject(), gone)).toBeDefined();
    expect(fakes.compute.address(gcpProject(), kept)).toBeDefined();
  }, 600_000);

  it("a spec.endpoint.cloudAsset no rule allows is refused before any request, naming the field", async () => {
    const pc = uniqueName("pc-orphans-gcp-bad");
    await createPc(pc, "http://169.254.169.254/computeMetadata");
    assets.reset();
    const res = await cli(["orphans", "--provider-config", pc]);
    await kube.delete(providerConfigs.gcp.type, pc);
    // No answer (exit 2, never 1, which says orphans were found), with no report on standard output.
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain("spec.endpoint.cloudAsset");
    expect(assets.stats()).toEqual({});
  }, 120_000);

  it("a search the cloud fails exits 2 (no answer), never 1 (orphans found) or 0 (none)", async () => {
    const pc = uniqueName("pc-orphans-gcp-down");
    // A Cloud Asset endpoint that was there and is gone: the search cannot be made.
    const gone = await startCloudAssetFake([fakes.compute]);
    await gone.close();
    await createPc(pc, gone.url);
    const res = await cli(["orphans", "--provider-config", pc, "-o", "json"]);
    await kube.delete(providerConfigs.gcp.type, pc);
    expect(res.code, res.stderr).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain("the search failed");
  }, 120_000);

  it("the Cloud Asset fake answers a query it cannot read, and a page token of another query, as Google does (400 INVALID_ARGUMENT)", async () => {
    const search = (q: Record<string, string>) =>
      fetch(`${assets.url}/v1/projects/${gcpProject()}:searchAllResources?${new URLSearchParams(q)}`);
    const bad = await search({ query: "name:foo OR labels.a:b" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { status: string; code: number } }).error).toMatchObject({
      code: 400,
      status: "INVALID_ARGUMENT",
    });
    const first = (await (await search({ query: "labels.crossplane-providerconfig:*" })).json()) as {
      nextPageToken?: string;
    };
    expect(first.nextPageToken).toBeDefined();
    const other = await search({ query: "labels.other:x", pageToken: first.nextPageToken ?? "" });
    expect(other.status).toBe(400);
    // `:` matches words of the value (what the finder does not send for a value), `=` the whole value.
    const page = async (query: string) =>
      (await (await search({ query })).json()) as { results?: unknown[]; nextPageToken?: string };
    expect(await page("labels.crossplane-providerconfig:pc-orphans-gcp")).toMatchObject({
      results: [expect.anything()],
      nextPageToken: expect.any(String),
    });
    expect((await page("labels.crossplane-providerconfig=pc-orphans-gcp")).results).toEqual([]);
    expect((await page(`labels.crossplane-providerconfig=${PC}`)).results).toHaveLength(1);
  }, 60_000);
});

// The local stack's Cloud Asset fake (what `npm start` users reach): it indexes every Google fake the stack
// runs — GCS, Cloud SQL, Compute, the generic fake of the generated kinds — from each one's own state.
describe("driftless orphans (Google) on the local stack's Cloud Asset fake", () => {
  it("finds the resources labelled for the ProviderConfig that were made outside driftless, in every Google fake, and not the one driftless manages", async () => {
    const pc = uniqueName("pc-orphans-stack");
    const pcLabel = pc.toLowerCase();
    await createGcpProviderConfig(kube, pc, {
      credentials: "InjectedIdentity",
      endpoint: { apis: env("GCP_APIS_ENDPOINT"), cloudAsset: env("GCP_CLOUDASSET_ENDPOINT") },
    });
    try {
      // Managed by driftless: a bucket made through its managed resource.
      const managed = uniqueName("orph-managed");
      const r = newReconciler(kube);
      await kube.create(Bucket, managedObject(Bucket, managed, pc, { connectionSecret: false }));
      await settle(r, keyOf(Bucket, managed));
      expect((await getMr(kube, Bucket, managed))?.metadata.annotations).toBeDefined();

      // Made outside driftless, labelled as if a managed resource of this ProviderConfig owned them: a bucket
      // (GCS fake: a driftless kind, judged), a Cloud SQL instance and a regional address (the Cloud SQL fake
      // and the generic fake) labelled by Crossplane's own provider (kinds driftless does not serve: counted).
      const ghostBucket = uniqueName("orph-ghost-b");
      await fakeStorage().createBucket(ghostBucket, { labels: defaultTags(Bucket, ghostBucket, pc) });
      const upjet = (kind: string, name: string) => ({
        "crossplane-providerconfig": pcLabel,
        "crossplane-kind": kind,
        "crossplane-name": name,
      });
      const post = async (url: string, body: unknown) => {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        expect(res.status, await res.text()).toBe(200);
      };
      const ghostSql = uniqueName("orph-ghost-sql");
      await post(`${env("GCP_SQL_ENDPOINT")}/v1/projects/${gcpProject()}/instances`, {
        name: ghostSql,
        databaseVersion: "POSTGRES_16",
        region: "us-central1",
        settings: {
          tier: "db-f1-micro",
          userLabels: upjet("databaseinstance.sql.gcp.upbound.io", ghostSql),
        },
      });
      const ghostAddress = uniqueName("orph-ghost-addr");
      const addresses = `${env("GCP_APIS_ENDPOINT").replace("{api}", "compute")}/compute/v1/projects/${gcpProject()}/regions/us-central1/addresses`;
      await post(addresses, {
        name: ghostAddress,
        labels: upjet("address.compute.gcp.upbound.io", ghostAddress),
      });
      // Its insert operation finishes on the first look.
      expect((await fetch(`${addresses}/${ghostAddress}`)).status).toBe(200);

      const res = await cli(["orphans", "--provider-config", pc, "-o", "json"]);
      expect(res.code, res.stderr).toBe(1);
      const report = JSON.parse(res.stdout) as OrphanReport;
      // Found: the managed bucket, the three made outside; two of Crossplane's own kinds, not judged.
      expect(report).toMatchObject({ cloud: "gcp", providerConfig: pc, searched: 4, foreign: 2 });
      expect(report.orphans).toEqual([
        expect.objectContaining({
          id: `//storage.googleapis.com/${ghostBucket}`,
          type: "storage.googleapis.com/Bucket",
          managedResource: `Bucket ${ghostBucket}`,
        }),
      ]);
      expect(res.stdout).not.toContain(managed);

      // listAssets answers from the same index: the resource as its own API returns it.
      const listed = (await (
        await fetch(
          `${env("GCP_CLOUDASSET_ENDPOINT")}/v1/projects/${gcpProject()}/assets?${new URLSearchParams({ assetTypes: "storage.googleapis.com/Bucket", contentType: "RESOURCE", pageSize: "1000" })}`,
        )
      ).json()) as { assets: Array<{ name: string; resource: { data: { name: string; labels: unknown } } }> };
      expect(
        listed.assets.find((a) => a.name === `//storage.googleapis.com/${ghostBucket}`)?.resource.data,
      ).toMatchObject({
        name: ghostBucket,
        labels: defaultTags(Bucket, ghostBucket, pc),
      });
    } finally {
      await kube.delete(providerConfigs.gcp.type, pc);
    }
  }, 300_000);
});
