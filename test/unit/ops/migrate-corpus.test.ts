// migrate says exactly what it writes: over every Upjet example kept as a fixture (v1 and v2, sources in
// test/fixtures/crossplane/v1|v2/README.md), as written and as an export with ids, no object is written that
// the report calls not migrated, and every forProvider field is carried (as the target CRD keeps it) or named
// in the report — also with random fields added at any depth of any object (fast-check).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { migrate } from "../../../shared/ops/migrate.ts";
import { generatedKinds } from "../../../shared/ops/migrate-generated.ts";
import { loadUpjetFacts, UPJET_FACTS_FILE } from "../../../shared/ops/migrate-upjet-facts.ts";
import { account, checkAddedFields } from "./migrate-accounting.ts";
import { type Doc, fixture } from "./migrate-helpers.ts";

const ROOT = join(import.meta.dirname, "../../fixtures/crossplane");
const FILES = readdirSync(ROOT, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".yaml"))
  .sort();
const OPTS = { defaultNamespace: "default", generated: generatedKinds(loadUpjetFacts(UPJET_FACTS_FILE)) };

/** As `kubectl get -o yaml` exports them once reconciled: every object carries the id its cloud chose. */
const withIds = (docs: Doc[]): Doc[] =>
  docs.map((d) => {
    const annotations = (d.metadata.annotations ?? {}) as Record<string, string>;
    if (annotations["crossplane.io/external-name"]) return d;
    const id = `id-${String(d.metadata.name)}`;
    return {
      ...d,
      metadata: { ...d.metadata, annotations: { ...annotations, "crossplane.io/external-name": id } },
    };
  });

/** Every managed object also setting its forProvider as create-only fields (Crossplane's initProvider). */
const withInitProvider = (docs: Doc[]): Doc[] =>
  docs.map((d) =>
    isObject(d.spec) && isObject(d.spec.forProvider)
      ? { ...d, spec: { ...d.spec, initProvider: structuredClone(d.spec.forProvider) } }
      : d,
  );

describe("migrate: every object written is migrated, every field carried or reported", () => {
  it("holds over every fixture, as written, exported with ids, and with initProvider", () => {
    const totals: Record<string, { converted: number; refused: number; folded: number; lost: number }> = {};
    let initCarried = 0;
    for (const file of FILES) {
      const variants = [fixture(file), withIds(fixture(file)), withInitProvider(withIds(fixture(file)))];
      for (const [variant, docs] of variants.entries()) {
        const r = migrate(docs, OPTS);
        const a = account(docs, r);
        expect(a.writtenDespiteError, file).toEqual([]);
        expect(a.silentlyLost, file).toEqual([]);
        if (variant === 2) {
          initCarried += r.objects.filter((o) => isObject(o.object.spec.initProvider)).length;
          continue;
        }
        for (const [kind, row] of Object.entries(a.kinds)) {
          const t = totals[kind] ?? { converted: 0, refused: 0, folded: 0, lost: 0 };
          for (const k of ["converted", "refused", "folded", "lost"] as const) t[k] += row[k];
          totals[kind] = t;
        }
      }
    }
    // Not vacuous: the corpus converts, refuses and folds, among others, these kinds.
    expect(totals["SecurityGroup.ec2.aws.upbound.io"]).toMatchObject({ refused: 3, converted: 5 });
    expect(totals["SecurityGroupIngressRule.ec2.aws.upbound.io"]).toMatchObject({ folded: 1 });
    expect(totals["SecurityGroupRule.ec2.aws.upbound.io"]).toMatchObject({ folded: 1 });
    expect(totals["QueueRedrivePolicy.sqs.aws.upbound.io"]).toMatchObject({ folded: 2 });
    expect(totals["QueuePolicy.sqs.aws.upbound.io"]).toMatchObject({ folded: 2, refused: 0 });
    expect(totals["Container.storage.azure.upbound.io"]).toMatchObject({ converted: 4 });
    expect(totals["BucketVersioning.s3.aws.m.upbound.io"]).toMatchObject({ folded: 2 });
    expect(Object.values(totals).reduce((n, t) => n + t.converted, 0)).toBeGreaterThan(80);
    // initProvider is carried, not dropped: most converted objects keep one.
    expect(initCarried).toBeGreaterThan(60);
  });

  it("reports an added field at any depth of any object, or carries it", () => {
    checkAddedFields(
      FILES.map((file) => ({ file, docs: withIds(fixture(file)) })),
      OPTS,
    );
  });
});

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Every object node of a JSON value (itself first), list elements included. */
