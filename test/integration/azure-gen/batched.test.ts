// Batched drift checks of generated Azure kinds (issue 30) on the real API server and the generic ARM fake:
// a resource-group type is checked with its collection list in each resource group (paged by nextLink;
// the verdict is the engine's own plan, through checkMany); an object the list does not show whole is read
// with a GET, and a type whose list leaves out what the plan compares (configured in the fake, as some
// services' lists do) is read per resource from then on; a child type is checked with its collection under
// each parent (routes of a route table), drift and deletion still told by the plan and a GET.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateAzure } from "../../../infra/gen-azure.ts";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { batchedReadOf } from "../../../shared/providers/azure/arm-generic/provider.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  armAsUser,
  armClient,
  armRequestsDuring,
  createAzureProviderConfig,
  startGenericArmFake,
} from "../../support/azure.ts";
import { managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr, keyOf } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
const ROUTES = "Microsoft.Network/routeTables";
/** This suite's fake lists NAT gateways without their idle timeout (a list that is not the whole model). */
const NATS = "Microsoft.Network/natGateways";
const SUBNETS = "Microsoft.Network/virtualNetworks/subnets";
/** A child type the generic fake serves, below ROUTES. */
const ROUTE_ENTRIES = "Microsoft.Network/routeTables/routes";
/** A singleton child (always named `default`): read per resource. */
const BLOB_SERVICES = "Microsoft.Storage/storageAccounts/blobServices";
/** A type whose list this suite's fake refuses once (a type without a list operation, to driftless). */
const ASGS = "Microsoft.Network/applicationSecurityGroups";
/** In-sync objects checked at once, and resources of the type in their group that are not ours (listed first). */
const N = 30;
const OTHERS = 40;
/** Items per list page in this suite's ARM fake: the objects span two pages, linked by nextLink. */
const PAGE = 50;
const SLOW = 600_000;

const kube = newKube();
const PC = uniqueName("pc-azbatch");
const RG = uniqueName("rg-azbatch");
let fake: FakeServer;
let specs: Map<string, AzureKindSpec>;
let defs: Map<string, ManagedKindDef>;
let r: Reconciler;

const specOf = (t: string) => specs.get(t) as AzureKindSpec;
const defOf = (t: string) => defs.get(t) as ManagedKindDef;

/** A direct ARM call, as a user's own tooling (the portal, az) would make it. */
const arm = (method: string, path: string, apiVersion: string, body?: unknown) =>
  armAsUser(fake.url, method, path, apiVersion, body);

const idOf = (t: string, name: string) => {
  const [ns, type] = t.split("/");
  return `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${RG}/providers/${ns}/${type}/${name}`;
};

/** Someone else's resource, or an out-of-band change: PUT, then one GET so the fake's operation ends. */
async function put(t: string, name: string, body: Json) {
  const v = specOf(t).apiVersion;
  expect((await arm("PUT", idOf(t, name), v, body)).status).toBeLessThan(300);
  expect((await arm("GET", idOf(t, name), v)).status).toBe(200);
}

async function made(t: string, prefix: string, n: number, forProvider: Json): Promise<string[]> {
  const def = defOf(t);
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, "0")}`);
  for (const name of names)
    await kube.create(
      def,
      managedObject(def, name, PC, {
        forProvider: { resourceGroupName: RG, ...forProvider },
        connectionSecret: false,
      }),
    );
  for (const name of names) {
    for (let i = 0; i < 8; i++) {
      await r.reconcile(keyOf(def, name));
      const mr = await getMr(kube, def, name);
      if (conditionOf(mr, "Ready")?.status === "True" && conditionOf(mr, "Synced")?.status === "True") break;
    }
    expect(conditionOf(await getMr(kube, def, name), "Ready")?.status, name).toBe("True");
  }
  return names;
}

const check = async (t: string, names: string[]) =>
  r.checkMany((await Promise.all(names.map((n) => getMr(kube, defOf(t), n)))) as ManagedResource[], {
    connectionSecret: () => undefined,
  });

/** The ARM reads the fake served while `f` ran, by counter (`GET <type> (list)` is a collection's page). */
async function counted<T>(f: () => Promise<T>): Promise<{ out: T; calls: Record<string, number> }> {
  let out: T | undefined;
  const requests = await armRequestsDuring(fake.url, async () => {
    out = await f();
  });
  const calls = Object.fromEntries(Object.entries(requests).filter(([k]) => k !== "POST token"));
  return { out: out as T, calls };
}

beforeAll(async () => {
  generateAzure();
  const catalog = loadAzureCatalog();
  specs = new Map(
    [ROUTES, NATS, SUBNETS, ASGS, ROUTE_ENTRIES, BLOB_SERVICES].map((t) => {
      const e = catalog.kinds.find((k) => k.type === t);
      if (!e) throw new Error(`${t} is not generated`);
      return [t, loadAzureSpec(e)];
    }),
  );
  const providers = azureGenProviders([...specs.values()]);
  defs = new Map(providers.map((p, i) => [[...specs.keys()][i] as string, p.definition]));
  fake = await startGenericArmFake({
    listPageSize: PAGE,
    listLeavesOut: { [NATS.toLowerCase()]: ["properties.idleTimeoutInMinutes"] },
  });
  await ensureCrds();
  await installCrds(kube, [...defs.values()]);
  await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
  await armClient(fake.url).resourceGroups.createOrUpdate(RG, { location: "westeurope" });
  r = new Reconciler(kube, new KindRegistry([...managedKinds, ...providers]), { creationGracePeriodMs: 0 });
}, 120_000);

afterAll(async () => {
  if (defs) await removeCrds(kube, [...defs.values()]);
  await fake?.close();
});

describe("batched drift checks of generated Azure kinds through ARM's list by resource group", () => {
  it("says per type how a batched check reads it, from the spec", () => {
    expect(batchedReadOf(specOf(ROUTES))).toBe("list");
    expect(batchedReadOf(specOf(SUBNETS))).toBe("list");
    expect(batchedReadOf(specOf(BLOB_SERVICES))).toMatch(/a singleton \(always named default\)/);
    const [routes, , blobServices] = azureGenProviders([specOf(ROUTES), specOf(NATS), specOf(BLOB_SERVICES)]);
    expect(routes?.observeMany?.maxItems).toBeGreaterThanOrEqual(N);
    expect(blobServices?.observeMany).toBeUndefined();
  });

  it(
    `checks ${N} in-sync route tables with 2 list pages among ${OTHERS} others, and sends drifted or gone ones to a full reconcile`,
    async () => {
      // Route tables of someone else's in the same group, listed before ours: paging is needed.
      for (let i = 0; i < OTHERS; i++)
        await put(ROUTES, `a-other-${String(i).padStart(3, "0")}`, { location: "westeurope" });
      const forProvider = { location: "westeurope", tags: { team: "a" } };
      const names = await made(ROUTES, uniqueName("rt"), N, forProvider);
      const LIST = `GET ${ROUTES.toLowerCase()} (list)`;
      const GET = `GET ${ROUTES.toLowerCase()}`;

      const first = await counted(() => check(ROUTES, names));
      expect(first.out.map((v) => v.inSync)).toEqual(names.map(() => true));
      expect(first.calls).toEqual({ [LIST]: 2 });
      expect((first.calls[LIST] ?? 0) / N).toBeLessThanOrEqual(0.07);

      // Drift made in the cloud, and one deleted there: each is told by the plan, the gone one from a GET.
      const changed = names[3] as string;
      const gone = names[7] as string;
      await put(ROUTES, changed, { location: "westeurope", tags: { team: "console" } });
      expect((await arm("DELETE", idOf(ROUTES, gone), specOf(ROUTES).apiVersion)).status).toBe(202);
      const second = await counted(() => check(ROUTES, names));
      expect(second.out.map((v) => v.inSync)).toEqual(names.map((n) => n !== changed && n !== gone));
      // The one the list does not show is observed alone, as a per-resource check would: one GET (a 404).
      expect(second.calls).toEqual({ [LIST]: 2, [GET]: 1 });
      // The drifted one is put back by its own reconcile, and is in sync in the next batch.
      for (let i = 0; i < 4; i++) await r.reconcile(keyOf(defOf(ROUTES), changed));
      const third = await counted(() =>
        check(
          ROUTES,
          names.filter((n) => n !== gone),
        ),
      );
      expect(third.out.every((v) => v.inSync)).toBe(true);
      expect(third.calls).toEqual({ [LIST]: 2 });
    },
    SLOW,
  );

  it(
    "checks a child type's in-sync objects with one list under their parent; drift and deletion still told",
    async () => {
      const [table] = await made(ROUTES, uniqueName("rtp"), 1, { location: "westeurope" });
      const properties = { addressPrefix: "10.1.0.0/16", nextHopType: "VnetLocal" };
      const names = await made(ROUTE_ENTRIES, uniqueName("route"), 10, { routeTableName: table, properties });
      const v = specOf(ROUTE_ENTRIES).apiVersion;
      const routeId = (n: string) => `${idOf(ROUTES, table as string)}/routes/${n}`;
      const LIST = `GET ${ROUTE_ENTRIES.toLowerCase()} (list)`;
      const GET = `GET ${ROUTE_ENTRIES.toLowerCase()}`;

      const first = await counted(() => check(ROUTE_ENTRIES, names));
      expect(first.out.map((x) => x.inSync)).toEqual(names.map(() => true));
      expect(first.calls).toEqual({ [LIST]: 1 });

      const changed = names[2] as string;
      const gone = names[5] as string;
      const drifted = { properties: { ...properties, addressPrefix: "10.9.0.0/16" } };
      expect((await arm("PUT", routeId(changed), v, drifted)).status).toBeLessThan(300);
      expect((await arm("GET", routeId(changed), v)).status).toBe(200);
      expect((await arm("DELETE", routeId(gone), v)).status).toBe(202);
      const second = await counted(() => check(ROUTE_ENTRIES, names));
      expect(second.out.map((x) => x.inSync)).toEqual(names.map((n) => n !== changed && n !== gone));
      // The deleted one is concluded absent only from its own GET (a 404).
      expect(second.calls).toEqual({ [LIST]: 1, [GET]: 1 });
    },
    SLOW,
  );

  it(
    "reads a type per resource once its list was seen to leave out what the plan compares",
    async () => {
      expect(batchedReadOf(specOf(NATS))).toBe("list");
      const names = await made(NATS, uniqueName("nat"), 3, {
        location: "westeurope",
        sku: { name: "Standard" },
        properties: { idleTimeoutInMinutes: 4 },
      });
      const LIST = `GET ${NATS.toLowerCase()} (list)`;
      const GET = `GET ${NATS.toLowerCase()}`;

      const first = await counted(() => check(NATS, names));
      expect(first.out.every((v) => v.inSync)).toBe(true);
      expect(first.calls).toEqual({ [LIST]: 1, [GET]: 3 });
      expect(batchedReadOf(specOf(NATS))).toMatch(/left out properties\.idleTimeoutInMinutes/);

      const second = await counted(() => check(NATS, names));
      expect(second.out.every((v) => v.inSync)).toBe(true);
      expect(second.calls).toEqual({ [GET]: 3 });
    },
    SLOW,
  );

  it(
    "reads a type per resource once ARM refused its list",
    async () => {
      const names = await made(ASGS, uniqueName("asg"), 2, { location: "westeurope" });
      const LIST = `GET ${ASGS.toLowerCase()} (list)`;
      const GET = `GET ${ASGS.toLowerCase()}`;
      await fetch(`${fake.url}/__fake/fail`, {
        method: "POST",
        body: JSON.stringify({
          method: "GET",
          path: `/providers/${ASGS}`,
          status: 405,
          code: "MethodNotAllowed",
          message: "The requested resource does not support http method 'GET'.",
          times: 1,
        }),
      });
      const first = await counted(() => check(ASGS, names));
      expect(first.out.every((v) => v.inSync)).toBe(true);
      expect(first.calls).toEqual({ [LIST]: 1, [GET]: 2 });
      expect(batchedReadOf(specOf(ASGS))).toMatch(/ARM refused its list: MethodNotAllowed/);
      const second = await counted(() => check(ASGS, names));
      expect(second.out.every((v) => v.inSync)).toBe(true);
      expect(second.calls).toEqual({ [GET]: 2 });
    },
    SLOW,
  );
});
