// `driftless migrate` onto the generated kinds, end to end on a real API server: Upjet examples of AWS, Azure
// and Google kinds without a hand-written twin (test/fixtures/crossplane/upjet-examples, v1 and v2), migrated,
// are accepted by the generated kinds' CRDs (both shapes) and stored exactly as written — nothing pruned, so
// what the report calls carried is what the cluster keeps. The API server is a fresh one of this file's own.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { managedCrd } from "../../../shared/api/crd.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { Kube, type KubeObject } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { type DriftlessObject, migrate } from "../../../shared/ops/migrate.ts";
import { generatedKinds } from "../../../shared/ops/migrate-generated.ts";
import { loadUpjetFacts, UPJET_FACTS_FILE } from "../../../shared/ops/migrate-upjet-facts.ts";
import { EXAMPLES_FILE, type UpjetExamples } from "../../fixtures/crossplane/upjet-examples/refresh.ts";
import { ensureNamespace } from "../../support/aws.ts";
import { inParallel } from "../../support/env.ts";
import { type FreshKube, startFreshKube } from "../../support/fresh-kube.ts";

/** Per cloud and shape (v1 cluster-scoped, v2 namespaced). */
const PER_SHAPE = 8;
const GENERATED = /\.(awscc|azure\.gen|googleapis)(\.m)?\.driftless\.dev\//;

let server: FreshKube | undefined;
let kube: Kube;
const sample: Array<{ cloud: string; file: string; object: DriftlessObject; def: ManagedKindDef }> = [];

beforeAll(async () => {
  const examples = JSON.parse(gunzipSync(readFileSync(EXAMPLES_FILE)).toString("utf8")) as UpjetExamples;
  const resolve = generatedKinds(loadUpjetFacts(UPJET_FACTS_FILE));
  const seen = new Set<string>();
  const perCloud: Record<string, number> = {};
  for (const [file, text] of Object.entries(examples.files).sort(([a], [b]) => a.localeCompare(b))) {
    const cloud = file.split("/")[0] as string;
    const slot = `${cloud}/${file.includes("/namespaced/") ? "v2" : "v1"}`;
    if ((perCloud[slot] ?? 0) >= PER_SHAPE) continue;
    // As an export: every object with the id its cloud chose.
    const docs = parseAllDocuments(text)
      .map((d) => d.toJS() as KubeObject | null)
      .filter((d): d is KubeObject => !!d)
      .map((d) => ({
        ...d,
        metadata: {
          ...d.metadata,
          annotations: { "crossplane.io/external-name": `id-${d.metadata.name}`, ...d.metadata.annotations },
        },
      }));
    const r = migrate(docs, { defaultNamespace: "default", generated: resolve });
    for (const m of r.objects) {
      if (!GENERATED.test(m.object.apiVersion) || seen.has(m.object.apiVersion + m.object.kind)) continue;
      const def = r.generated.find((d) =>
        [d, namespacedVariantOf(d)].some(
          (v) => v.apiVersion === m.object.apiVersion && v.kind === m.object.kind,
        ),
      );
      if (!def || Object.keys(m.object.spec.forProvider ?? {}).length === 0) continue;
      seen.add(m.object.apiVersion + m.object.kind);
      sample.push({ cloud, file, object: m.object, def });
      perCloud[slot] = (perCloud[slot] ?? 0) + 1;
      break;
    }
  }
  server = await startFreshKube("migrate-generated");
  kube = new Kube(server.kc);
  // The v2 examples' own namespaces (upbound-system…).
  for (const ns of new Set(sample.flatMap((s) => s.object.metadata.namespace ?? [])))
    await ensureNamespace(kube, ns);
  const defs = [...new Set(sample.map((s) => s.def))];
  await applyCrds(
    server.kc,
    defs.flatMap((d) => [managedCrd(d), managedCrd(namespacedVariantOf(d))]),
    120_000,
  );
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

describe("driftless migrate onto generated kinds, applied on a real API server", () => {
  it("samples each cloud, in both shapes", () => {
    for (const cloud of ["aws", "azure", "gcp"]) {
      const of = sample.filter((s) => s.cloud === cloud);
      expect(of.filter((s) => s.object.metadata.namespace).length, cloud).toBe(PER_SHAPE);
      expect(of.filter((s) => !s.object.metadata.namespace).length, cloud).toBe(PER_SHAPE);
    }
  });

  it("stores every migrated object exactly as written", async () => {
    const results = await inParallel(sample, 6, async (s, i) => {
      const type = s.object.metadata.namespace ? namespacedVariantOf(s.def) : s.def;
      const group = type.group;
      const name = `m${i}-${s.object.metadata.name}`
        .slice(0, 60)
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, "-");
      const obj = { ...s.object, metadata: { ...s.object.metadata, name } };
      await kube.create<KubeObject>(type, obj as KubeObject).catch((err: Error) => {
        throw new Error(`${s.file} → ${s.object.kind}.${group}: ${err.message}`);
      });
      const read = await kube.get<KubeObject & { spec: Record<string, unknown> }>(
        type,
        name,
        s.object.metadata.namespace,
      );
      return { s, read };
    });
    for (const { s, read } of results) {
      expect(read?.spec.forProvider, s.file).toEqual(s.object.spec.forProvider);
      expect(read?.spec.initProvider, s.file).toEqual(s.object.spec.initProvider);
      expect(read?.metadata.annotations?.["crossplane.io/external-name"], s.file).toBe(
        s.object.metadata.annotations?.["crossplane.io/external-name"],
      );
    }
  });
});
