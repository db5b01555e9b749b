// `driftless orphans` for Azure on the ARM fake and the real kube-apiserver: resource groups and virtual
// networks created through driftless carry Crossplane's default tags; those whose managed resource is deleted
// with deletionPolicy Orphan stay in the subscription, and Resource Manager's tag-filtered lists find them by
// crossplane-providerconfig (each resource's tags read with Tags - Get At Scope). Listed (exit code 1): the
// orphans; not listed: what is still managed. Nothing is deleted. The suite's own fake pages every list one
// item at a time, so each list is followed through nextLink.

import type { NetworkManagementClient } from "@azure/arm-network";
import { ClientSecretCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import type { OrphanReport } from "../../../shared/ops/orphans.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  AZURE_CLIENT_ID,
  AZURE_CLIENT_SECRET,
  armClient,
  armRequestsDuring,
  createAzureProviderConfig,
  networkClient,
  startGenericArmFake,
  startPrivateArmFake,
} from "../../support/azure.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const PC = uniqueName("pc-orphans-az");
let fake: FakeServer;
let arm: ReturnType<typeof armClient>;
let network: NetworkManagementClient;

const mr = (
  def: typeof ResourceGroup | typeof VirtualNetwork,
  name: string,
  forProvider: Record<string, unknown>,
) =>
  ({
    apiVersion: def.apiVersion,
    kind: def.kind,
    metadata: { name },
    spec: { providerConfigRef: { name: PC }, deletionPolicy: "Orphan", forProvider },
  }) as unknown as KubeObject;

beforeAll(async () => {
  await ensureCrds();
  fake = await startPrivateArmFake({ [AZURE_CLIENT_ID]: AZURE_CLIENT_SECRET }, { listPageSize: 1 });
  arm = armClient(fake.url);
  network = networkClient(fake.url);
  await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
});

afterAll(async () => {
  await fake?.close();
});

describe("driftless orphans (Azure)", () => {
  it("lists the resource groups and resources whose managed resource is gone (orphan policy), not those still managed; exit 1", async () => {
    const keptRg = uniqueName("rg-managed");
    const goneRg = uniqueName("rg-orphaned");
    const keptNet = uniqueName("vnet-managed");
    const goneNet = uniqueName("vnet-orphaned");
    const r = newReconciler(kube);
    await kube.create(ResourceGroup, mr(ResourceGroup, keptRg, { location: "westeurope" }));
    await kube.create(ResourceGroup, mr(ResourceGroup, goneRg, { location: "westeurope" }));
    await settle(r, keyOf(ResourceGroup, keptRg));
    await settle(r, keyOf(ResourceGroup, goneRg));
    for (const n of [keptNet, goneNet]) {
      await kube.create(
        VirtualNetwork,
        mr(VirtualNetwork, n, {
          resourceGroupName: keptRg,
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.61.0.0/16"] },
        }),
      );
      await settle(r, keyOf(VirtualNetwork, n));
    }
    const goneRgId = (await arm.resourceGroups.get(goneRg)).id ?? "";
    const keptRgId = (await arm.resourceGroups.get(keptRg)).id ?? "";
    const goneNetId = (await network.virtualNetworks.get(keptRg, goneNet)).id ?? "";
    const keptNetId = (await network.virtualNetworks.get(keptRg, keptNet)).id ?? "";
    expect(goneNetId).toContain("/providers/Microsoft.Network/virtualNetworks/");

    // Before: everything tagged for the ProviderConfig is managed.
    const before = await cli(["orphans", "--provider-config", PC, "-o", "json"]);
    expect(before.code, before.stderr).toBe(0);
    const clean = JSON.parse(before.stdout) as OrphanReport;
    expect(clean).toMatchObject({ cloud: "azure", providerConfig: PC, searched: 4, orphans: [] });

    // The managed resources go with deletionPolicy Orphan: the group and the network stay in the cloud.
    await kube.delete(ResourceGroup, goneRg);
    await kube.delete(VirtualNetwork, goneNet);
    await settle(r, keyOf(ResourceGroup, goneRg));
    await settle(r, keyOf(VirtualNetwork, goneNet));
    expect(await getMr(kube, ResourceGroup, goneRg)).toBeUndefined();
    expect(await getMr(kube, VirtualNetwork, goneNet)).toBeUndefined();

    let res = { code: null as number | null, stdout: "", stderr: "" };
    // One list request per item and page (page size 1), one Tags - Get At Scope per listed resource.
    const requests = await armRequestsDuring(fake.url, async () => {
      res = await cli(["orphans", "--provider-config", PC, "-o", "yaml"]);
    });
    expect(res.code, res.stderr).toBe(1);
    expect(requests).toMatchObject({
      "GET resourcegroups": 2,
      "GET resources": 2,
      "GET Microsoft.Resources/tags": 2,
    });
    const report = parse(res.stdout) as OrphanReport;
    expect(report).toMatchObject({ cloud: "azure", providerConfig: PC, searched: 4, foreign: 0 });
    expect(report.orphans.map((o) => o.id).sort()).toEqual([goneRgId, goneNetId].sort());
    expect(report.orphans.map((o) => o.id)).not.toContain(keptRgId);
    expect(report.orphans.map((o) => o.id)).not.toContain(keptNetId);
    expect(report.orphans.find((o) => o.id === goneRgId)).toMatchObject({
      type: "Microsoft.Resources/resourceGroups",
      location: "westeurope",
      managedResource: `ResourceGroup ${goneRg}`,
      adopt: `driftless import --provider-config ${PC} --kinds resources.resourcegroup -o <dir>`,
      tags: { "crossplane-providerconfig": PC, "crossplane-name": goneRg },
    });
    expect(report.orphans.find((o) => o.id === goneNetId)).toMatchObject({
      type: "Microsoft.Network/virtualNetworks",
      managedResource: `VirtualNetwork ${goneNet}`,
      tags: { "crossplane-kind": "virtualnetwork.network.azure.driftless.dev", "crossplane-name": goneNet },
    });

    const text = await cli(["orphans", "--provider-config", PC]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(goneNetId);
    expect(text.stdout).toContain(`2 orphan(s) among 4 resource(s) tagged for azure ProviderConfig "${PC}"`);

    // Never deletes anything: both are still there.
    expect((await arm.resourceGroups.get(goneRg)).id).toBe(goneRgId);
    expect((await network.virtualNetworks.get(keptRg, goneNet)).id).toBe(goneNetId);

    // Gone from the cloud, gone from the report.
    await network.virtualNetworks.beginDeleteAndWait(keptRg, goneNet, { updateIntervalInMs: 50 });
    await arm.resourceGroups.beginDeleteAndWait(goneRg, { updateIntervalInMs: 50 });
    const after = await cli(["orphans", "--provider-config", PC, "-o", "json"]);
    expect(after.code, after.stderr).toBe(0);
    expect((JSON.parse(after.stdout) as OrphanReport).orphans).toEqual([]);
  }, 600_000);

  it("the ARM fake answers a filter it cannot read as ARM does: 400 InvalidFilterInQueryString", async () => {
    const credential = new ClientSecretCredential(
      env("AZURE_TENANT_ID"),
      AZURE_CLIENT_ID,
      AZURE_CLIENT_SECRET,
      {
        authorityHost: fake.url,
        disableInstanceDiscovery: true,
      },
    );
    const token = (await credential.getToken(`${fake.url}/.default`))?.token ?? "";
    const list = (query: string) =>
      fetch(`${fake.url}/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resources?${query}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const bad = await list(
      `$filter=${encodeURIComponent("tagname eq 'a' or name eq 'b'")}&api-version=2021-04-01`,
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: {
        code: "InvalidFilterInQueryString",
        message: "Invalid $filter 'tagname eq 'a' or name eq 'b'' specified in the query string.",
      },
    });
    const version = await list("api-version=2099-01-01");
    expect(version.status).toBe(400);
    expect(((await version.json()) as { error: { code: string } }).error.code).toBe(
      "InvalidApiVersionParameter",
    );
  }, 60_000);

  it("the ARM fake lists the generated kinds' resources too (its generic handler's), tags left out, and reads their tags", async () => {
    const generic = await startGenericArmFake();
    try {
      const type = "Microsoft.Network/applicationSecurityGroups";
      const entry = loadAzureCatalog().kinds.find((k) => k.type === type);
      if (!entry) throw new Error(`${type} is not in the Azure catalog`);
      const sub = `${generic.url}/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}`;
      const call = (method: string, url: string, body?: unknown) =>
        fetch(url, {
          method,
          headers: { authorization: "Bearer user-tooling", "content-type": "application/json" },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
      const rg = uniqueName("rg-orphans-gen");
      expect(
        (await call("PUT", `${sub}/resourcegroups/${rg}?api-version=2021-04-01`, { location: "westeurope" }))
          .ok,
      ).toBe(true);
      const id = `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${rg}/providers/${type}/asg1`;
      const put = await call("PUT", `${generic.url}${id}?api-version=${loadAzureSpec(entry).apiVersion}`, {
        location: "westeurope",
        tags: { "crossplane-providerconfig": "pc-x", "crossplane-name": "asg1" },
      });
      expect(put.status, await put.text()).toBeLessThan(300);
      const filter = encodeURIComponent("tagName eq 'crossplane-providerconfig' and tagValue eq 'pc-x'");
      const list = (await (
        await call("GET", `${sub}/resources?$filter=${filter}&api-version=2021-04-01`)
      ).json()) as {
        value: Array<Record<string, unknown>>;
      };
      expect(list.value).toEqual([expect.objectContaining({ id, type })]);
      expect(list.value[0]).not.toHaveProperty("tags");
      const tags = (await (
        await call(
          "GET",
          `${generic.url}${id}/providers/Microsoft.Resources/tags/default?api-version=2021-04-01`,
        )
      ).json()) as { properties: { tags: Record<string, string> } };
      expect(tags.properties.tags).toEqual({
        "crossplane-providerconfig": "pc-x",
        "crossplane-name": "asg1",
      });
    } finally {
      await generic.close();
    }
  }, 60_000);
});
