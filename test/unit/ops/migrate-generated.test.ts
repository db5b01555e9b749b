// migrate onto the generated kinds: over the Upjet providers' generated examples of every kind migrate maps
// onto a generated kind (test/fixtures/crossplane/upjet-examples, v1 and v2, AWS, Azure, GCP), as written, as
// an export with ids and with initProvider, no object is written that the report calls not migrated and every
// forProvider field is carried (as the generated CRD keeps it) or named in the report; with random fields at
// any depth too (fast-check). Plus the mapping facts on a few kinds, and the measured figures.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { migrate } from "../../../shared/ops/migrate.ts";
import { armTypeOf, generatedKinds, upjetIdentifier } from "../../../shared/ops/migrate-generated.ts";
import { loadUpjetFacts, UPJET_FACTS_FILE } from "../../../shared/ops/migrate-upjet-facts.ts";
import { EXAMPLES_FILE, type UpjetExamples } from "../../fixtures/crossplane/upjet-examples/refresh.ts";
import { account, checkAddedFields } from "./migrate-accounting.ts";
import type { Doc } from "./migrate-helpers.ts";

const facts = loadUpjetFacts(UPJET_FACTS_FILE);
const resolve = generatedKinds(facts);
const OPTS = { defaultNamespace: "default", generated: resolve };
const examples = JSON.parse(gunzipSync(readFileSync(EXAMPLES_FILE)).toString("utf8")) as UpjetExamples;
const CORPUS = Object.entries(examples.files)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([file, text]) => ({
    file,
    docs: parseAllDocuments(text)
      .map((d) => d.toJS() as Doc | null)
      .filter((d): d is Doc => d !== null && typeof d === "object" && !Array.isArray(d)),
  }));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const withIds = (docs: Doc[]): Doc[] =>
  docs.map((d) => {
    const annotations = (d.metadata?.annotations ?? {}) as Record<string, string>;
    if (annotations["crossplane.io/external-name"]) return d;
    return {
      ...d,
      metadata: {
        ...d.metadata,
        annotations: { ...annotations, "crossplane.io/external-name": `id-${String(d.metadata?.name)}` },
      },
    };
  });

const withInitProvider = (docs: Doc[]): Doc[] =>
  docs.map((d) =>
    isObject(d.spec) && isObject(d.spec.forProvider)
      ? { ...d, spec: { ...d.spec, initProvider: structuredClone(d.spec.forProvider) } }
      : d,
  );

describe("migrate onto generated kinds: facts", () => {
  it("reads Upjet's external-name configuration as written", () => {
    expect(upjetIdentifier("config.NameAsIdentifier")).toEqual({ kind: "name", field: "name" });
    expect(upjetIdentifier('config.ParameterAsIdentifier("function_name")')).toEqual({
      kind: "name",
      field: "function_name",
    });
    expect(upjetIdentifier("config.IdentifierFromProvider")).toEqual({ kind: "provider" });
    expect(upjetIdentifier("someCustomFunction()")).toEqual({ kind: "other", expr: "someCustomFunction()" });
    expect(
      armTypeOf(
        "/subscriptions/{{ .setup.configuration.subscription_id }}/resourceGroups/{{ .parameters.resource_group_name }}/providers/Microsoft.Network/virtualNetworks/{{ .parameters.virtual_network_name }}/subnets/{{ .external_name }}",
      ),
    ).toBe("Microsoft.Network/virtualNetworks/subnets");
    expect(armTypeOf("{{ .external_name }}")).toBeUndefined();
  });

  it("maps each cloud's kinds by the facts, and says why where it cannot", () => {
    const lambda = resolve("lambda.aws.upbound.io", "Function");
    expect(lambda && "def" in lambda && `${lambda.def.kind}.${lambda.def.group}`).toBe(
      "Function.lambda.awscc.driftless.dev",
    );
    // ParameterAsIdentifier("function_name") and the CloudFormation identifier FunctionName: the same field.
    expect(lambda && "def" in lambda && lambda.externalName).toMatchObject({
      field: "functionName",
      severity: "note",
    });
    const vault = resolve("keyvault.azure.upbound.io", "Vault");
    expect(vault && "def" in vault && vault.def.group).toBe("keyvault.azure.gen.driftless.dev");
    expect(vault && "def" in vault && vault.nested.tenantId).toBe("properties");
    const redis = resolve("redis.gcp.upbound.io", "Instance");
    expect(redis && "def" in redis && `${redis.def.kind}.${redis.def.group}`).toBe(
      "Instance.redis.googleapis.driftless.dev",
    );
    // aws_route53_record is AWS::Route53::RecordSet: no awscc type of the same Terraform name, so not mapped.
    expect(resolve("route53.aws.upbound.io", "Record")).toMatchObject({
      unmapped: expect.stringContaining("aws_route53_record"),
    });
  });
});

describe("migrate onto generated kinds: every object written is migrated, every field carried or reported", () => {
  it("holds over every example of a mapped kind, as written, exported with ids, and with initProvider", () => {
    const perCloud: Record<string, { kinds: Set<string>; converted: number; refused: number }> = {};
    let carried = 0;
    let reported = 0;
    for (const { file, docs } of CORPUS) {
      const cloud = file.split("/")[0] as string;
      for (const [variant, input] of [docs, withIds(docs), withInitProvider(withIds(docs))].entries()) {
        const r = migrate(input, OPTS);
        const a = account(input, r);
        expect(a.writtenDespiteError, file).toEqual([]);
        expect(a.silentlyLost, file).toEqual([]);
        if (variant !== 1) continue;
        const row = perCloud[cloud] ?? { kinds: new Set(), converted: 0, refused: 0 };
        perCloud[cloud] = row;
        row.refused += r.refused.length;
        const bySource = new Map(input.map((d) => [sourceOf(d), d]));
        for (const o of r.objects) {
          if (!/\.(awscc|azure\.gen|googleapis)(\.m)?\.driftless\.dev\//.test(o.object.apiVersion)) continue;
          row.converted++;
          row.kinds.add(o.source.slice(0, o.source.indexOf("/")).replace(".m.upbound.io", ".upbound.io"));
          // Top-level forProvider fields of the input: carried, or named by a DROPPED line.
          const fp = ((bySource.get(o.source)?.spec as Record<string, unknown> | undefined)?.forProvider ??
            {}) as Record<string, unknown>;
          const dropped = r.issues.filter(
            (i) => i.source === o.source && i.severity === "dropped" && i.field !== undefined,
          );
          for (const k of Object.keys(fp)) {
            if (dropped.some((i) => i.field === k || i.field?.startsWith(`${k}.`))) reported++;
            else carried++;
          }
        }
      }
    }
    const figures = Object.fromEntries(
      Object.entries(perCloud).map(([c, r]) => [
        c,
        { kinds: r.kinds.size, objects: r.converted, refused: r.refused },
      ]),
    );
    console.log(JSON.stringify({ figures, topLevelFields: { carried, reported } }));
    // Not vacuous: each cloud converts kinds of its generated groups.
    expect(figures.aws?.kinds).toBeGreaterThan(100);
    expect(figures.azure?.kinds).toBeGreaterThan(100);
    expect(figures.gcp?.kinds).toBeGreaterThan(30);
    expect(carried).toBeGreaterThan(reported);
  }, 900_000);

  it("reports an added field at any depth of any object, or carries it", () => {
    checkAddedFields(
      CORPUS.map(({ file, docs }) => ({ file, docs: withIds(docs) })),
      OPTS,
    );
  });
});

const sourceOf = (d: Doc) =>
  `${String(d.kind)}.${String(d.apiVersion).split("/")[0]}/${String(d.metadata?.name)}`;
