// Cloud SQL DatabaseInstance and Compute Network: the generic managed-resource behaviours against the real
// API server, with the real clients against the project's Cloud SQL and Compute wire fakes (started
// in-process here, so any running stack serves). The chain with private IP, updates and refusals is in
// test/unit/providers/gcp-private-sql.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeHttpServer } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GcpPrivateNetworkingFakes,
  startGcpPrivateNetworkingFakes,
} from "../../../infra/local/fakes/gcp-private-networking-fakes.ts";
import { Network } from "../../../shared/api/gcp/compute.ts";
import { DatabaseInstance } from "../../../shared/api/gcp/sql.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { ensureCrds, ensureNamespace } from "../../support/aws.ts";
import { describeManagedKind, expectAvailable, managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { captureLogger, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";

const kube = newKube();
const PC = uniqueName("pc-gcpsql");
let fakes: GcpPrivateNetworkingFakes;

beforeAll(async () => {
  fakes = await startGcpPrivateNetworkingFakes();
  await ensureCrds();
  await ensureNamespace(kube, "driftless-system");
  const t = providerConfigs.gcp.type;
  await kube.create(t, {
    apiVersion: `${t.group}/${t.version}`,
    kind: "ProviderConfig",
    metadata: { name: PC },
    // The fakes take no credentials, and driftless sends none to a host that is not Google's.
    spec: { projectID: gcpProject(), credentials: { source: "InjectedIdentity" }, endpoint: fakes.endpoint },
  });
});
afterAll(async () => {
  await kube.delete(providerConfigs.gcp.type, PC);
  await fakes?.close();
});

/** Requests a fake served while `fn` ran. */
async function requestsOf(fake: () => FakeHttpServer, fn: () => Promise<unknown>) {
  const before = fake().stats();
  await fn();
  const delta: Record<string, number> = {};
  for (const [k, v] of Object.entries(fake().stats()))
    if (v !== (before[k] ?? 0)) delta[k] = v - (before[k] ?? 0);
  return delta;
}

const instance = (name: string) => fakes.sql.instance(gcpProject(), name);
const settings = (name: string) => instance(name)?.settings as Record<string, unknown> | undefined;

describeManagedKind({
  type: DatabaseInstance,
  cloud: "the Cloud SQL fake",
  prefix: "sql",
  providerConfig: PC,
  connectionSecret: true,
  forProvider: () => ({ databaseVersion: "POSTGRES_16", tier: "db-f1-micro" }),
  exists: async (name) => instance(name) !== undefined,
  requests: { during: (fn) => requestsOf(() => fakes.sql, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET instances": 1 },
  // PENDING_DELETE is observed, and the delete asked for again (a no-op), until the instance is gone.
  deleteRepeatsUntilGone: true,
  invalidSpec: {
    forProvider: { databaseVersion: "MYSQL_8_0", tier: "db-f1-micro" },
    field: "spec.forProvider.databaseVersion",
  },
  import: {
    arrange: async (cloudName) => {
      fakes.sql.seedInstance(gcpProject(), cloudName, {
        databaseVersion: "POSTGRES_15",
        region: "europe-west1",
        settings: { tier: "db-custom-2-7680", dataDiskSizeGb: "50", availabilityType: "REGIONAL" },
      });
    },
    forProvider: { databaseVersion: "POSTGRES_15" },
    expectSpec: (fp) =>
      expect(fp).toMatchObject({
        databaseVersion: "POSTGRES_15",
        region: "europe-west1",
        tier: "db-custom-2-7680",
        diskSize: 50,
        diskType: "PD_SSD",
        availabilityType: "REGIONAL",
        ipv4Enabled: true,
      }),
    change: { tier: "db-custom-4-15360" },
    expectUnchanged: async (cloudName) => expect(settings(cloudName)?.tier).toBe("db-custom-2-7680"),
  },
});

describeManagedKind({
  type: Network,
  cloud: "the Compute fake",
  prefix: "net",
  providerConfig: PC,
  connectionSecret: false,
  exists: async (name) => fakes.compute.network(gcpProject(), name) !== undefined,
  requests: { during: (fn) => requestsOf(() => fakes.compute, fn), isRead: (k) => k.startsWith("GET ") },
  inSyncRequests: { "GET networks": 1 },
  invalidSpec: { forProvider: { mtu: 100 }, field: "spec.forProvider.mtu" },
  import: {
    arrange: async (cloudName) => {
      fakes.compute.seedNetwork(gcpProject(), cloudName, { autoCreateSubnetworks: false, mtu: 1500 });
    },
    expectSpec: (fp) =>
      expect(fp).toEqual({ autoCreateSubnetworks: false, routingMode: "REGIONAL", mtu: 1500 }),
    change: { mtu: 1400 },
    expectUnchanged: async (cloudName) =>
      expect(fakes.compute.network(gcpProject(), cloudName)?.mtu).toBe(1500),
  },
});

describe("Network adoption (the import example of the managed-resources guide) against the real API server", () => {
  it("adopts an existing network named by crossplane.io/external-name with an empty forProvider, and late-initializes it", async () => {
    const cloudName = uniqueName("existing-net");
    fakes.compute.seedNetwork(gcpProject(), cloudName, { routingConfig: { routingMode: "GLOBAL" } });
    const name = uniqueName("adopted");
    const { lines, logger } = captureLogger();
    const r = newReconciler(kube, { logger });
    await kube.create(
      Network,
      managedObject(Network, name, PC, {
        connectionSecret: false,
        annotations: { [Annotations.externalName]: cloudName },
      }),
    );

    await settle(r, keyOf(Network, name));

    const mr = await getMr<Record<string, unknown>>(kube, Network, name);
    expectAvailable(mr, cloudName);
    expect(r.externalCalls.create).toBe(0);
    expect(mr?.spec.forProvider).toEqual({ autoCreateSubnetworks: true, routingMode: "GLOBAL", mtu: 1460 });
    expect(lines.join("\n")).toContain("late-initialized");
  });
});
