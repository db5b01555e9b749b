// A sample of the generated Google Cloud kinds on a real API server: every 20th kind of the sorted
// catalog plus the 22 lifecycle.test.ts reconciles, alternately in the cluster-scoped and the namespaced
// (`.m.`) shape, installed the way `driftless crds apply --activate <crd names>` installs them
// (activationPlan, then applyCrds). One object of each is applied with every top-level forProvider field
// and the members the protos mark REQUIRED set: the schema is accepted and the object stored exactly as
// sent. The API server is a fresh one of this file's own, stopped at the end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activationPlan } from "../../../functions/cli/commands/crds.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { generatedCrdNames } from "../../../shared/api/generated-catalog.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { modelOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleCatalogEntry } from "../../../shared/api/googleapis/spec.ts";
import { Kube, type KubeObject } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { CRD_TYPE, typeOfCrd } from "../../../shared/ops/activation.ts";
import { inParallel } from "../../support/env.ts";
import { type FreshKube, startFreshKube } from "../../support/fresh-kube.ts";
import { awsccSampleOf, type JsonSchema } from "../../support/schema-sample.ts";

const EVERY_NTH = 20;
const RECONCILED = [
  "secretmanager.googleapis/Secret",
  "artifactregistry.googleapis/Repository",
  "workflows.googleapis/Workflow",
  "redis.googleapis/Instance",
  "memcache.googleapis/Instance",
  "file.googleapis/Instance",
  "certificatemanager.googleapis/Certificate",
  "run.googleapis/Service",
  "eventarc.googleapis/Trigger",
  "apigateway.googleapis/Api",
  "privateca.googleapis/CaPool",
  "cloudfunctions.googleapis/Function",
  "networkconnectivity.googleapis/Hub",
  "gkehub.googleapis/Membership",
  "datastream.googleapis/ConnectionProfile",
  "alloydb.googleapis/Cluster",
  "compute.googleapis/Network",
  "compute.googleapis/Firewall",
  "compute.googleapis/Subnetwork",
  "compute.googleapis/Disk",
  "compute.googleapis/Address",
  "compute.googleapis/GlobalAddress",
];
const NAMESPACE = "default";

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string };
    versions: Array<{ name: string; schema: { openAPIV3Schema: JsonSchema } }>;
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
interface Sampled {
  entry: GoogleCatalogEntry;
  crdName: string;
  namespaced: boolean;
}

let server: FreshKube | undefined;
let kube: Kube;
let sample: Sampled[] = [];
const sent = new Map<string, Crd>();

beforeAll(async () => {
  generateGcp();
  const sorted = [...loadGoogleCatalog().kinds].sort((a, b) =>
    `${a.group}/${a.kind}`.localeCompare(`${b.group}/${b.kind}`),
  );
  sample = sorted
    .filter((e, i) => i % EVERY_NTH === 0 || RECONCILED.includes(`${e.group}/${e.kind}`))
    .map((entry, i) => {
      const [cluster, namespaced] = generatedCrdNames(entry);
      return { entry, crdName: (i % 2 === 0 ? cluster : namespaced) as string, namespaced: i % 2 === 1 };
    });
  const { install } = await activationPlan({ activate: sample.map((s) => s.crdName) });
  for (const c of install) sent.set(c.metadata.name, c as unknown as Crd);
  server = await startFreshKube("gcp-generated-sample");
  kube = new Kube(server.kc);
  await applyCrds(server.kc, install, 120_000);
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

const crdOf = (s: Sampled) => sent.get(s.crdName) as Crd;

describe("a sample of the generated Google Cloud kinds on a real API server", () => {
  it("takes kinds of many APIs, Compute among them, in both shapes", () => {
    expect(sample.length).toBeGreaterThanOrEqual(50);
    expect(new Set(sample.map((s) => s.entry.group)).size).toBeGreaterThanOrEqual(30);
    expect(sample.some((s) => s.entry.family === "compute")).toBe(true);
    expect(sample.filter((s) => s.namespaced).length).toBeGreaterThanOrEqual(20);
    const generated = [...sent.keys()].filter((n) => /\.googleapis(\.m)?\.driftless\.dev$/.test(n));
    expect(generated.sort()).toEqual(sample.map((s) => s.crdName).sort());
  });

  it("has every CRD established and stores one object of each exactly as sent", async () => {
    const results = await inParallel(sample, 8, async (s) => {
      const crd = await kube.get<KubeObject & Crd>(CRD_TYPE, s.crdName);
      const sentCrd = crdOf(s);
      const forProvider =
        sentCrd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties?.forProvider ?? {};
      const name = `sample-${s.entry.kind.toLowerCase()}`.slice(0, 60);
      const obj = {
        apiVersion: `${sentCrd.spec.group}/${sentCrd.spec.versions[0]?.name}`,
        kind: sentCrd.spec.names.kind,
        metadata: { name, ...(s.namespaced ? { namespace: NAMESPACE } : {}) },
        spec: { forProvider: awsccSampleOf(modelOf(loadGoogleSpec(s.entry)), forProvider) },
      };
      const type = typeOfCrd(sentCrd as never);
      await kube.create<KubeObject>(type, obj).catch((err: Error) => {
        throw new Error(`${s.crdName}: ${err.message}`);
      });
      const read = await kube.get<KubeObject & { spec: { forProvider: unknown } }>(
        type,
        name,
        obj.metadata.namespace,
      );
      return { s, crd, obj, read };
    });
    for (const { s, crd, obj, read } of results) {
      expect(crd?.status?.conditions, s.crdName).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Established", status: "True" })]),
      );
      expect(read?.spec.forProvider, s.crdName).toEqual(obj.spec.forProvider);
    }
    expect(
      results.map((r) => Object.keys(r.obj.spec.forProvider).length).reduce((a, b) => a + b, 0),
    ).toBeGreaterThan(200);
  });
});
