// About a hundred generated AWS kinds on a real API server: every 17th CloudFormation type of the sorted
// catalog plus the twenty cloudcontrol.test.ts reconciles, alternately in the cluster-scoped and the
// namespaced (`.m.`) shape, installed the way `driftless crds apply --activate <crd names>` installs them
// (activationPlan, then applyCrds). One object of each is applied with every top-level forProvider field and
// the members CloudFormation requires set: the schema is accepted, the object stored exactly as sent (no
// field pruned), and `kubectl get` shows READY, SYNCED, EXTERNAL-NAME and AGE. The API server is a fresh one
// of this file's own (the shared one is spared a hundred CRDs), stopped at the end.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activationPlan } from "../../../functions/cli/commands/crds.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import type { AwsccCatalogEntry } from "../../../shared/api/awscc/spec.ts";
import { generatedCrdNames } from "../../../shared/api/generated-catalog.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { Kube, type KubeObject } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { CRD_TYPE, typeOfCrd } from "../../../shared/ops/activation.ts";
import { ensureAwsccGenerated } from "../../support/awscc.ts";
import { inParallel } from "../../support/env.ts";
import { type FreshKube, startFreshKube } from "../../support/fresh-kube.ts";
import { awsccSampleOf, type JsonSchema } from "../../support/schema-sample.ts";
import { getTable } from "../../support/table.ts";

/** Every EVERY_NTH type of the catalog sorted by type name: 83 of the 1,401 that Cloud Control provisions. */
const EVERY_NTH = 17;
/** The types cloudcontrol.test.ts reconciles against the Cloud Control fake. */
const RECONCILED = [
  "AWS::DynamoDB::Table",
  "AWS::SNS::Topic",
  "AWS::KMS::Key",
  "AWS::IAM::Role",
  "AWS::Logs::LogGroup",
  "AWS::ECR::Repository",
  "AWS::SecretsManager::Secret",
  "AWS::Route53::HostedZone",
  "AWS::ElastiCache::SubnetGroup",
  "AWS::Lambda::Function",
  "AWS::Events::Rule",
  "AWS::Kinesis::Stream",
  "AWS::EFS::FileSystem",
  "AWS::SSM::Parameter",
  "AWS::SQS::Queue",
  "AWS::S3::Bucket",
  "AWS::ECS::Cluster",
  "AWS::StepFunctions::Activity",
  "AWS::EC2::VPC",
  "AWS::Glue::Database",
];
const COLUMNS = ["READY", "SYNCED", "EXTERNAL-NAME", "AGE"];
const NAMESPACE = "default";
const CONCURRENCY = 8;

interface Crd {
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: Array<{
      name: string;
      additionalPrinterColumns?: Array<{ name: string }>;
      schema: { openAPIV3Schema: JsonSchema };
    }>;
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

interface Sampled {
  entry: AwsccCatalogEntry;
  crdName: string;
  namespaced: boolean;
}

function pickSample(kinds: readonly AwsccCatalogEntry[]): Sampled[] {
  const sorted = [...kinds].sort((a, b) => a.typeName.localeCompare(b.typeName));
  const picked = sorted.filter((e, i) => i % EVERY_NTH === 0 || RECONCILED.includes(e.typeName));
  return picked.map((entry, i) => {
    const [cluster, namespaced] = generatedCrdNames(entry);
    return { entry, crdName: (i % 2 === 0 ? cluster : namespaced) as string, namespaced: i % 2 === 1 };
  });
}

/**
 * The schema without empty `properties` maps: the API server stores `{type: object, properties: {}}` (the
 * atProvider of a type without attributes) as `{type: object}`, which prunes the same (every field).
 */
function withoutEmptyProperties(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEmptyProperties);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(k === "properties" && x && typeof x === "object" && Object.keys(x).length === 0))
      .map(([k, x]) => [k, withoutEmptyProperties(x)]),
  );
}

let server: FreshKube | undefined;
let kube: Kube;
let sample: Sampled[] = [];
/** The CRDs as applied, by name. */
const sent = new Map<string, Crd>();

beforeAll(async () => {
  ensureAwsccGenerated();
  sample = pickSample(loadAwsccCatalog().kinds);
  const { install } = await activationPlan({ activate: sample.map((s) => s.crdName) });
  for (const c of install) sent.set(c.metadata.name, c as unknown as Crd);
  server = await startFreshKube("awscc-sample");
  kube = new Kube(server.kc);
  await applyCrds(server.kc, install, 120_000);
}, 150_000);

afterAll(async () => {
  await server?.stop();
});

const crdOf = (s: Sampled) => {
  const crd = sent.get(s.crdName);
  if (!crd) throw new Error(`${s.crdName} was not planned by activationPlan`);
  return crd;
};

const specSchemaOf = (s: Sampled) =>
  crdOf(s).spec.versions[0]?.schema.openAPIV3Schema.properties?.spec?.properties ?? {};

/** What the API server adds to a spec that sets only forProvider: the schema's defaults. */
const defaultsOf = (s: Sampled) =>
  Object.fromEntries(
    Object.entries(specSchemaOf(s))
      .filter(([, p]) => p.default !== undefined)
      .map(([k, p]) => [k, p.default]),
  );

/** One object of the sampled kind: forProvider from its schema, the external name set for the column. */
function buildObject(s: Sampled) {
  const crd = crdOf(s);
  const version = crd.spec.versions[0];
  const forProvider = specSchemaOf(s).forProvider ?? {};
  const name = `sample-${s.entry.kind.toLowerCase()}`.slice(0, 60);
  return {
    apiVersion: `${crd.spec.group}/${version?.name}`,
    kind: crd.spec.names.kind,
    metadata: {
      name,
      ...(s.namespaced ? { namespace: NAMESPACE } : {}),
      annotations: { [Annotations.externalName]: `${name}-ext` },
    },
    spec: { forProvider: awsccSampleOf(loadAwsccSpec(s.entry), forProvider) },
  };
}

const objects = new Map<string, ReturnType<typeof buildObject>>();
const objectOf = (s: Sampled) => {
  const obj = objects.get(s.crdName) ?? buildObject(s);
  objects.set(s.crdName, obj);
  return obj;
};

describe("a sample of about a hundred generated AWS kinds on a real API server", () => {
  it("takes about a hundred kinds across many services, in both shapes", () => {
    const services = new Set(sample.map((s) => s.entry.group));
    expect(sample.length).toBeGreaterThanOrEqual(90);
    expect(sample.length).toBeLessThanOrEqual(110);
    expect(services.size).toBeGreaterThanOrEqual(50);
    expect(sample.filter((s) => s.namespaced).length).toBeGreaterThanOrEqual(40);
    for (const t of RECONCILED) expect(sample.map((s) => s.entry.typeName)).toContain(t);
  });

  it("installs only the sampled CRDs among the generated ones (activation by CRD name)", () => {
    const generated = [...sent.keys()].filter((n) => /\.awscc(\.m)?\.driftless\.dev$/.test(n));
    expect(generated.sort()).toEqual(sample.map((s) => s.crdName).sort());
  });

  it("has every CRD established, stored as sent, with the READY, SYNCED, EXTERNAL-NAME and AGE columns", async () => {
    const stored = await inParallel(sample, CONCURRENCY, (s) =>
      kube.get<KubeObject & Crd>(CRD_TYPE, s.crdName),
    );
    sample.forEach((s, i) => {
      const crd = stored[i];
      expect(crd, s.crdName).toBeDefined();
      expect(crd?.status?.conditions, s.crdName).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Established", status: "True" })]),
      );
      expect(withoutEmptyProperties(crd?.spec.versions[0]?.schema), s.crdName).toEqual(
        withoutEmptyProperties(crdOf(s).spec.versions[0]?.schema),
      );
      expect(
        crd?.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name),
        s.crdName,
      ).toEqual(COLUMNS);
    });
  });

  it("stores one object of each kind exactly as sent: no field pruned, only the defaults added", async () => {
    const results = await inParallel(sample, CONCURRENCY, async (s) => {
      const obj = objectOf(s);
      const type = typeOfCrd(crdOf(s));
      const created = await kube.create<KubeObject>(type, obj).catch((err: Error) => {
        throw new Error(`${s.crdName}: ${err.message}`);
      });
      const read = await kube.get(type, obj.metadata.name, obj.metadata.namespace);
      return { s, obj, created, read };
    });
    for (const { s, obj, created, read } of results) {
      expect(read?.spec, s.crdName).toEqual({ ...defaultsOf(s), ...obj.spec });
      expect(read?.metadata.annotations, s.crdName).toEqual(obj.metadata.annotations);
      expect(created.metadata.uid).toBe(read?.metadata.uid);
    }
    const fields = results.map((r) => Object.keys(r.obj.spec.forProvider).length);
    // Not a vacuous check: the sample's objects set hundreds of fields between them.
    expect(fields.reduce((a, b) => a + b, 0)).toBeGreaterThan(500);
  });

  it("renders the columns for every object the way kubectl get asks for them (a Table)", async () => {
    const rows = await inParallel(sample, CONCURRENCY, async (s) => {
      const obj = objectOf(s);
      const type = typeOfCrd(crdOf(s));
      const ns = s.namespaced ? `/namespaces/${NAMESPACE}` : "";
      const table = await getTable(
        server?.kc ?? kube.kubeConfig("a Table GET"),
        `/apis/${type.group}/${type.version}${ns}/${type.plural}/${obj.metadata.name}`,
      );
      return { s, obj, table };
    });
    for (const { s, obj, table } of rows) {
      expect(
        table.columnDefinitions.map((c) => c.name),
        s.crdName,
      ).toEqual(["Name", ...COLUMNS]);
      // No conditions yet (nothing reconciles here): READY and SYNCED are empty, the external name shows.
      expect(table.rows[0]?.cells.slice(0, 4), s.crdName).toEqual([
        obj.metadata.name,
        null,
        null,
        `${obj.metadata.name}-ext`,
      ]);
    }
  });
});
