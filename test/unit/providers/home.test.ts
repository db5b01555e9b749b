// Azure and Google Cloud homes through the registries the engine uses: every kind's client says where
// its resource lives, from the ProviderConfig (subscription, project, storage account) and the fields
// the kind has (resource group, location, region); a global resource has no location.
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ManagedKindProvider } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import type {
  AzureProviderConfigSpec,
  GcpProviderConfigSpec,
  ProviderConfig,
} from "../../../shared/api/provider-config.ts";
import { awsKinds } from "../../../shared/providers/aws/kinds.ts";
import { azureKinds } from "../../../shared/providers/azure/kinds.ts";
import { gcpKinds } from "../../../shared/providers/gcp/kinds.ts";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const GCP_KEY = JSON.stringify({
  type: "service_account",
  client_email: "sa@p.iam.gserviceaccount.com",
  private_key: privateKey,
});
const secretRef = { namespace: "ns", name: "s", key: "k" };

function ctxOf<S>(spec: S, secret: string) {
  const providerConfig: ProviderConfig<S> = {
    apiVersion: "x.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "pc", uid: `uid-${Math.random()}`, generation: 1, resourceVersion: "1" },
    spec,
  };
  return { providerConfig, readSecretKey: async () => secret };
}

const azure = (endpoint?: AzureProviderConfigSpec["endpoint"]) =>
  ctxOf<AzureProviderConfigSpec>(
    {
      tenantID: "00000000-0000-0000-0000-000000000001",
      subscriptionID: "sub-a",
      clientID: "00000000-0000-0000-0000-000000000003",
      credentials: { source: "Secret", secretRef },
      storage: { accountName: "acct1" },
      ...(endpoint ? { endpoint } : {}),
    },
    "client-secret",
  );
const gcp = (projectID: string) =>
  ctxOf<GcpProviderConfigSpec>({ projectID, credentials: { source: "Secret", secretRef } }, GCP_KEY);

const kindOf = (list: ManagedKindProvider[], group: string, kind: string) => {
  const p = list.find((k) => k.definition.kind === kind && k.definition.group.startsWith(group));
  if (!p) throw new Error(`no ${group} ${kind}`);
  return p;
};

async function homeOf(p: ManagedKindProvider, ctx: unknown, forProvider: Record<string, unknown>) {
  const client = await p.connect(ctx as never);
  const mr: ManagedResource<Record<string, unknown>, Record<string, unknown>> = {
    apiVersion: p.definition.apiVersion,
    kind: p.definition.kind,
    metadata: { name: "m" },
    spec: { forProvider },
  };
  if (!client.home) throw new Error(`${p.definition.kind} has no home`);
  return client.home(mr);
}

describe("Azure home", () => {
  it("is the subscription, the resource group and the location as the kind has them", async () => {
    const rg = kindOf(azureKinds, "resources.azure", "ResourceGroup");
    expect(await homeOf(rg, azure(), { location: "West Europe" })).toEqual({
      subscription: "sub-a",
      location: "westeurope",
    });
    const vnet = kindOf(azureKinds, "network.azure", "VirtualNetwork");
    expect(
      await homeOf(vnet, azure(), { resourceGroupName: "rg1", location: "eastus", addressSpace: [] }),
    ).toEqual({
      subscription: "sub-a",
      resourceGroup: "rg1",
      location: "eastus",
    });
    const db = kindOf(azureKinds, "dbforpostgresql.azure", "FlexibleServerDatabase");
    expect(
      await homeOf(db, azure({ resourceManager: "https://127.0.0.1:9443" }), {
        resourceGroupName: "rg2",
        serverName: "s",
      }),
    ).toEqual({
      subscription: "sub-a",
      resourceGroup: "rg2",
      // A child's parent: another server would be another database (its id is built under the server).
      server: "s",
      endpoint: "https://127.0.0.1:9443",
    });
    const subnet = kindOf(azureKinds, "network.azure", "Subnet");
    expect(
      await homeOf(subnet, azure(), {
        resourceGroupName: "rg1",
        virtualNetworkName: "VNet-A",
        addressPrefix: "10.0.1.0/24",
      }),
    ).toEqual({ subscription: "sub-a", resourceGroup: "rg1", virtualNetwork: "vnet-a" });
  });

  it("of a Blob container is the ProviderConfig's storage account", async () => {
    const c = kindOf(azureKinds, "storage.azure", "Container");
    expect(await homeOf(c, azure(), { resourceGroupName: "rg1" })).toEqual({
      storageAccount: "acct1",
      resourceGroup: "rg1",
    });
  });

  it("is answered for both shapes (cluster-scoped and namespaced)", async () => {
    const shapes = azureKinds.filter((k) => k.definition.kind === "ResourceGroup");
    expect(shapes).toHaveLength(2);
    for (const p of shapes)
      expect((await homeOf(p, azure(), { location: "eastus" })).subscription).toBe("sub-a");
  });
});

describe("Google Cloud home", () => {
  it("is the ProviderConfig's project and the location, region or zone the kind has", async () => {
    expect(await homeOf(kindOf(gcpKinds, "pubsub.gcp", "Topic"), gcp("p1"), {})).toEqual({ project: "p1" });
    expect(await homeOf(kindOf(gcpKinds, "storage.gcp", "Bucket"), gcp("p2"), { location: "US" })).toEqual({
      project: "p2",
      location: "us",
    });
    expect(
      await homeOf(kindOf(gcpKinds, "sql.gcp", "DatabaseInstance"), gcp("p3"), {
        region: "europe-west1",
        databaseVersion: "POSTGRES_15",
        tier: "db-f1-micro",
      }),
    ).toEqual({ project: "p3", region: "europe-west1" });
    // A global network has no location: only the project.
    expect(await homeOf(kindOf(gcpKinds, "compute.gcp", "Network"), gcp("p4"), {})).toEqual({
      project: "p4",
    }); // Under a parent the spec names: another instance or network would be another database or connection.
    expect(await homeOf(kindOf(gcpKinds, "sql.gcp", "Database"), gcp("p5"), { instance: "main" })).toEqual({
      project: "p5",
      instance: "main",
    });
    expect(await homeOf(kindOf(gcpKinds, "sql.gcp", "User"), gcp("p5"), { instance: "main" })).toEqual({
      project: "p5",
      instance: "main",
    });
    const connection = kindOf(gcpKinds, "servicenetworking.gcp", "Connection");
    const url = await homeOf(connection, gcp("p6"), {
      network: "https://www.googleapis.com/compute/v1/projects/p6/global/networks/n",
    });
    expect(url).toEqual({ project: "p6", network: "projects/p6/global/networks/n" });
    expect(await homeOf(connection, gcp("p6"), { network: "projects/p6/global/networks/n" })).toEqual(url);
  });

  it("every kind of every registry answers home", async () => {
    const aws = ctxOf(
      { region: "us-east-1", credentials: { source: "Secret", secretRef } },
      "[default]\naws_access_key_id = A\naws_secret_access_key = s\n",
    );
    for (const p of [...awsKinds, ...azureKinds, ...gcpKinds]) {
      const ctx = p.definition.cloud === "azure" ? azure() : p.definition.cloud === "gcp" ? gcp("p") : aws;
      const client = await p.connect(ctx as never);
      expect(typeof client.home, p.definition.kind).toBe("function");
    }
  });
});
