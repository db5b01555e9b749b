// Generated Google Cloud kinds on a real kube-apiserver: their CRDs installed, objects reconciled by the
// generic providers against this file's own generic fake (the same code the dev stack runs on its port):
// 14 kinds of 11 APIs — resource-oriented kinds with long-running creates (Cloud Run Service, Artifact
// Registry, Workflows, Memorystore, CA pools, API Gateway, GKE Hub, Certificate Manager), one without
// (Secret Manager Secret, Monitoring AlertPolicy: a name Google chooses), global, regional and zonal Compute kinds — create, drift corrected, immutable
// change refused, import by external name, delete; and references resolved into the stored object:
// parentRef and scopeRef (the protos' resource_reference), a Subnetwork's networkRef and an Instance's
// networkInterfaces[].networkRef (Compute's, from Config Connector's service mappings).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../../shared/providers/gcp/home.ts";
import { withHome } from "../../../shared/providers/home.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds } from "../../support/aws.ts";
import { managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, gcpProject } from "../../support/gcp.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
const KINDS: Array<{ type: string; kind: string; forProvider: Json; drift: Json; immutable?: Json }> = [
  {
    type: "run.googleapis.com/Service",
    kind: "Service",
    forProvider: {
      location: "us-central1",
      description: "s",
      template: { containers: [{ image: "hello" }] },
    },
    drift: { description: "console" },
  },
  {
    type: "secretmanager.googleapis.com/Secret",
    kind: "Secret",
    forProvider: { replication: { automatic: {} }, labels: { a: "1" } },
    drift: { labels: { a: "2" } },
    immutable: { replication: { userManaged: { replicas: [{ location: "us-east1" }] } } },
  },
  {
    type: "artifactregistry.googleapis.com/Repository",
    kind: "Repository",
    forProvider: { location: "us-central1", format: "DOCKER", description: "d" },
    drift: { description: "console" },
  },
  {
    type: "workflows.googleapis.com/Workflow",
    kind: "Workflow",
    forProvider: { location: "us-central1", description: "d", sourceContents: "main: {}" },
    drift: { description: "console" },
  },
  {
    type: "redis.googleapis.com/Instance",
    kind: "Instance",
    forProvider: { location: "us-central1", tier: "BASIC", memorySizeGb: 1, displayName: "r" },
    drift: { displayName: "console" },
  },
  {
    type: "privateca.googleapis.com/CaPool",
    kind: "CaPool",
    forProvider: { location: "us-central1", tier: "DEVOPS", labels: { p: "1" } },
    drift: { labels: { p: "2" } },
  },
  {
    type: "apigateway.googleapis.com/Api",
    kind: "Api",
    forProvider: { location: "global", displayName: "a" },
    drift: { displayName: "console" },
  },
  {
    type: "gkehub.googleapis.com/Membership",
    kind: "Membership",
    forProvider: { location: "global", labels: { m: "1" } },
    drift: { labels: { m: "2" } },
  },
  {
    type: "certificatemanager.googleapis.com/Certificate",
    kind: "Certificate",
    forProvider: { location: "global", description: "c", managed: { domains: ["a.example.com"] } },
    drift: { description: "console" },
  },
  {
    // Created under `{name=projects/*}`, named by Google (the create's answer), with the owner label.
    type: "monitoring.googleapis.com/AlertPolicy",
    kind: "AlertPolicy",
    forProvider: { displayName: "a", combiner: "OR", userLabels: { team: "a" } },
    drift: { displayName: "console" },
  },
  {
    type: "compute.googleapis.com/Network",
    kind: "Network",
    forProvider: { autoCreateSubnetworks: false, description: "n" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Disk",
    kind: "Disk",
    forProvider: { zone: "us-central1-a", sizeGb: "10", description: "d" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Firewall",
    kind: "Firewall",
    forProvider: { network: "global/networks/default", allowed: [{ IPProtocol: "tcp" }], description: "f" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Subnetwork",
    kind: "Subnetwork",
    forProvider: { region: "us-central1", network: "global/networks/default", ipCidrRange: "10.9.0.0/16" },
    drift: { ipCidrRange: "10.8.0.0/16" },
  },
];

/**
 * Kinds the reference tests add: a binding whose parent (a Membership) and scope come from references; a
 * Compute Instance whose network interfaces' networks come from nested references.
 */
const MORE = [
  "gkehub.googleapis.com/Scope",
  "gkehub.googleapis.com/MembershipBinding",
  "compute.googleapis.com/Instance",
];

const kube = newKube();
const PC = uniqueName("gcpgen");
let fake: GoogleGenericFake;
let r: Reconciler;
const specs = new Map<string, GoogleKindSpec>();
const defs = new Map<string, ManagedKindDef>();

beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 1 });
  const catalog = loadGoogleCatalog();
  for (const k of KINDS) {
    const e = catalog.kinds.find((x) => x.typeName === k.type && x.kind === k.kind);
    if (!e) throw new Error(k.type);
    const s = loadGoogleSpec(e);
    specs.set(k.kind, s);
    defs.set(k.kind, googleKindOf(s));
  }
  for (const t of MORE) {
    const kind = t.split("/")[1];
    const s = loadGoogleSpec(catalog.kinds.find((x) => x.typeName === t && x.kind === kind) as never);
    // A kind name two APIs share (Redis and Compute Instance): the later one by its type.
    const key = specs.has(s.kind) ? t : s.kind;
    specs.set(key, s);
    defs.set(key, googleKindOf(s));
  }
  await ensureCrds();
  await installCrds(kube, [...defs.values()]);
  await createGcpProviderConfig(kube, PC, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${fake.url}/{api}` },
  });
  const providers = googleProviders([...specs.values()], { pollDelaysMs: [] }).map((p) =>
    withHome(p, gcpHome),
  );
  r = new Reconciler(kube, new KindRegistry(withNamespacedVariants(providers)), { creationGracePeriodMs: 0 });
}, 120_000);

afterAll(async () => {
  await removeCrds(kube, [...defs.values()]);
  await fake?.close();
});

describe("generated Google Cloud kinds on a real API server", () => {
  it("resolves parentRef and scopeRef (google.api.resource_reference) into the stored object", {
    timeout: 60_000,
  }, async () => {
    const [mem, scope, binding] = ["Membership", "Scope", "MembershipBinding"].map(
      (k) => defs.get(k) as ManagedKindDef,
    ) as [ManagedKindDef, ManagedKindDef, ManagedKindDef];
    const [m, sc, b] = [uniqueName("ref-mem"), uniqueName("ref-scope"), uniqueName("ref-bind")];
    await kube.create(
      binding,
      managedObject(binding, b, PC, {
        forProvider: { parentRef: { name: m }, scopeRef: { name: sc } },
        connectionSecret: false,
      }),
    );
    await r.reconcile(keyOf(binding, b));
    // The targets do not exist yet: nothing is made, and Synced says why.
    expect(conditionOf(await getMr(kube, binding, b), "Synced")).toMatchObject({ status: "False" });
    await kube.create(
      mem,
      managedObject(mem, m, PC, { forProvider: { location: "global" }, connectionSecret: false }),
    );
    await kube.create(
      scope,
      managedObject(scope, sc, PC, { forProvider: { location: "global" }, connectionSecret: false }),
    );
    for (const [d, n] of [
      [mem, m],
      [scope, sc],
    ] as const) {
      await settle(r, keyOf(d, n));
      await settle(r, keyOf(d, n));
    }
    await settle(r, keyOf(binding, b));
    await settle(r, keyOf(binding, b));
    const got = await getMr<Json>(kube, binding, b);
    expect(conditionOf(got, "Ready"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
    const memName = (await getMr<Json>(kube, mem, m))?.status?.atProvider?.name;
    expect(got?.spec.forProvider.parent).toBe(memName);
    expect(got?.spec.forProvider.scope).toBe((await getMr<Json>(kube, scope, sc))?.status?.atProvider?.name);
    expect(fake.resource(String(got?.status?.atProvider?.name))?.scope).toBe(got?.spec.forProvider.scope);
    for (const [d, n] of [
      [binding, b],
      [scope, sc],
      [mem, m],
    ] as const) {
      await kube.delete(d, n);
      await settle(r, keyOf(d, n));
      await settle(r, keyOf(d, n));
    }
  });

  it("resolves Compute's references (Config Connector's facts): networkRef, and each network interface's own networkRef", {
    timeout: 90_000,
  }, async () => {
    const [net, sub, vm, fw] = ["Network", "Subnetwork", "compute.googleapis.com/Instance", "Firewall"].map(
      (k) => defs.get(k) as ManagedKindDef,
    ) as [ManagedKindDef, ManagedKindDef, ManagedKindDef, ManagedKindDef];
    const [n, sn, v, f] = ["ref-net", "ref-sub", "ref-vm", "ref-fw"].map((x) => uniqueName(x)) as [
      string,
      string,
      string,
      string,
    ];
    await kube.create(
      sub,
      managedObject(sub, sn, PC, {
        forProvider: { region: "us-central1", ipCidrRange: "10.7.0.0/16", networkRef: { name: n } },
        connectionSecret: false,
      }),
    );
    await kube.create(
      vm,
      managedObject(vm, v, PC, {
        forProvider: {
          zone: "us-central1-a",
          machineType: "zones/us-central1-a/machineTypes/e2-small",
          networkInterfaces: [{ networkRef: { name: n } }],
        },
        connectionSecret: false,
      }),
    );
    await r.reconcile(keyOf(sub, sn));
    await r.reconcile(keyOf(vm, v));
    // The Network does not exist yet: nothing is made, and Synced says which reference waits for what.
    expect(conditionOf(await getMr(kube, sub, sn), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining(`referenced Network "${n}" does not exist (networkRef)`),
    });
    expect(conditionOf(await getMr(kube, vm, v), "Synced")?.message).toContain(
      `referenced Network "${n}" does not exist (networkInterfaces[0].networkRef)`,
    );
    await kube.create(
      net,
      managedObject(net, n, PC, { forProvider: { autoCreateSubnetworks: false }, connectionSecret: false }),
    );
    await settle(r, keyOf(net, n));
    await settle(r, keyOf(net, n));
    const link = String((await getMr<Json>(kube, net, n))?.status?.atProvider?.selfLink);
    expect(link).toMatch(/^https:\/\/.+\/compute\/v1\/projects\/.+\/global\/networks\//);
    for (const [d, x] of [
      [sub, sn],
      [vm, v],
    ] as const) {
      await settle(r, keyOf(d, x));
      await settle(r, keyOf(d, x));
      const got = await getMr<Json>(kube, d, x);
      expect(conditionOf(got, "Ready"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
      expect(conditionOf(got, "Synced")).toMatchObject({ status: "True" });
    }
    // The full URL Compute answers with is what is stored and sent; the fake (which refuses a malformed URL
    // and any unknown field, networkRef included) holds the same.
    const subObj = await getMr<Json>(kube, sub, sn);
    expect(subObj?.spec.forProvider.network).toBe(link);
    const subPath = new URL(String(subObj?.status?.atProvider?.selfLink)).pathname;
    expect(fake.resource(subPath)?.network).toBe(link);
    const vmObj = await getMr<Json>(kube, vm, v);
    expect(vmObj?.spec.forProvider.networkInterfaces).toEqual([{ networkRef: { name: n }, network: link }]);
    const vmPath = new URL(String(vmObj?.status?.atProvider?.selfLink)).pathname;
    expect(fake.resource(vmPath)?.networkInterfaces).toEqual([{ network: link }]);

    // A reference to nothing: Synced=False naming the field, the kind and the name, and nothing is made.
    await kube.create(
      fw,
      managedObject(fw, f, PC, {
        forProvider: { allowed: [{ IPProtocol: "tcp" }], networkRef: { name: "no-such-network" } },
        connectionSecret: false,
      }),
    );
    await r.reconcile(keyOf(fw, f));
    const fwObj = await getMr<Json>(kube, fw, f);
    expect(conditionOf(fwObj, "Synced")?.message).toContain(
      'referenced Network "no-such-network" does not exist (networkRef): referenced resource may not yet be ready',
    );
    expect(fwObj?.metadata.annotations?.[Annotations.createPending]).toBeUndefined();
    for (const [d, x] of [
      [fw, f],
      [vm, v],
      [sub, sn],
      [net, n],
    ] as const) {
      await kube.delete(d, x);
      await settle(r, keyOf(d, x));
      await settle(r, keyOf(d, x));
    }
  });

  for (const k of KINDS)
    it(`${k.type} (${k.kind}): create, drift, immutable, import, delete`, { timeout: 60_000 }, async () => {
      const d = defs.get(k.kind) as ManagedKindDef;
      const s = specs.get(k.kind) as GoogleKindSpec;
      const name = uniqueName(k.kind.toLowerCase());
      await kube.create(
        d,
        managedObject(d, name, PC, { forProvider: structuredClone(k.forProvider), connectionSecret: false }),
      );
      await settle(r, keyOf(d, name));
      await settle(r, keyOf(d, name));
      let mr = await getMr<Json>(kube, d, name);
      expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({
        status: "True",
        reason: "Available",
      });
      const where =
        s.google.family === "resource"
          ? String(mr?.status?.atProvider?.name)
          : (s.google.get?.p ?? "").replace(/\{(\w+)\}/g, (_, v: string) =>
              v === "project"
                ? gcpProject()
                : v === "region" || v === "zone"
                  ? String(k.forProvider[v])
                  : name,
            );
      expect(fake.resource(where), where).toBeDefined();

      fake.mutate(where, k.drift);
      await settle(r, keyOf(d, name));
      await settle(r, keyOf(d, name));
      // Labels put back carry Crossplane's default labels beside the spec's (written with any labels write).
      for (const f of Object.keys(k.drift))
        expect(fake.resource(where)?.[f]).toEqual(
          f === d.tagging?.field
            ? { ...defaultTags(d, name, PC), ...(k.forProvider[f] as Record<string, string>) }
            : k.forProvider[f],
        );

      if (k.immutable) {
        await kube.patch(d, name, { spec: { forProvider: { ...k.immutable } } });
        await r.reconcile(keyOf(d, name));
        mr = await getMr<Json>(kube, d, name);
        expect(conditionOf(mr, "Synced")?.message).toContain("immutable");
      }

      const imported = uniqueName(`${k.kind.toLowerCase()}-imp`);
      const ext = mr?.metadata.annotations?.[Annotations.externalName] as string;
      await kube.create(
        d,
        managedObject(d, imported, PC, {
          forProvider: structuredClone(k.forProvider),
          annotations: { [Annotations.externalName]: ext },
          spec: { managementPolicies: ["Observe"] },
          connectionSecret: false,
        }),
      );
      await settle(r, keyOf(d, imported));
      expect(conditionOf(await getMr(kube, d, imported), "Ready")).toMatchObject({ status: "True" });

      await kube.delete(d, name);
      await settle(r, keyOf(d, name));
      await settle(r, keyOf(d, name));
      expect(fake.resource(where)).toBeUndefined();
      expect(await getMr(kube, d, name)).toBeUndefined();
    });
});
