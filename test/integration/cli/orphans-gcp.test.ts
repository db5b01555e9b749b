// `driftless orphans` for Google on the Compute and Cloud Asset fakes and the real kube-apiserver: global
// addresses created through driftless carry Crossplane's default labels; the one whose managed resource is
// deleted with deletionPolicy Orphan stays in the project, and Cloud Asset Inventory's searchAllResources
// finds it by labels.crossplane-providerconfig. Listed (exit code 1): the orphan; not listed: what is still
// managed. Nothing is deleted. The Cloud Asset fake indexes what this suite's Compute fake holds (the fakes
// run in this process; the Pub/Sub emulator and the GCS fake are not indexed) and pages one result at a time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startCloudAssetFake } from "../../../infra/local/fakes/gcp-cloudasset-fake.ts";
import type { FakeHttpServer } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GcpPrivateNetworkingFakes,
  startGcpPrivateNetworkingFakes,
} from "../../../infra/local/fakes/gcp-private-networking-fakes.ts";
import { GlobalAddress } from "../../../shared/api/gcp/compute.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import type { OrphanReport } from "../../../shared/ops/orphans.ts";
import { ensureCrds, ensureNamespace } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
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
  assets = await startCloudAssetFake(fakes.compute, { maxPageSize: 1 });
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
    const gone = await startCloudAssetFake(fakes.compute);
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
