// `kubectl explain` and `kubectl get` work for every kind: every field of every generated CRD has a
// description (but metadata, whose schema the API server fixes), and every CRD has printer columns (managed kinds: READY, SYNCED, EXTERNAL-NAME, AGE).
import { describe, expect, it } from "vitest";
import { allCrds } from "../../../shared/crds.ts";
import { undocumentedFields } from "../../../shared/ops/crd-docs.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

describe("generated CRDs", () => {
  it("describe every field (kubectl explain shows a text for each)", () => {
    const missing = allCrds().flatMap((crd) =>
      undocumentedFields(crd.spec.versions[0]?.schema.openAPIV3Schema)
        // The API server forbids anything but `type` on metadata; kubectl explain documents ObjectMeta itself.
        .filter((path) => path !== "metadata")
        .map((path) => `${crd.metadata.name}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it("give every kind printer columns, and every managed kind READY, SYNCED, EXTERNAL-NAME and AGE", () => {
    const crds = allCrds();
    for (const crd of crds) {
      expect(crd.spec.versions[0]?.additionalPrinterColumns?.length, crd.metadata.name).toBeGreaterThan(0);
    }
    for (const k of managedKinds) {
      const crd = crds.find((c) => c.metadata.name === `${k.definition.plural}.${k.definition.group}`);
      expect(
        crd?.spec.versions[0]?.additionalPrinterColumns?.map((c) => (c as { name?: string }).name),
        k.definition.kind,
      ).toEqual(["READY", "SYNCED", "EXTERNAL-NAME", "AGE"]);
    }
  });

  it("the walker finds fields without a description at any depth", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "string", description: "A." },
        b: { type: "object", properties: { c: { type: "string" } } },
        d: {
          type: "array",
          description: "D.",
          items: { type: "object", properties: { e: { type: "string" } } },
        },
        f: {
          type: "object",
          description: "F.",
          additionalProperties: { type: "object", properties: { g: {} } },
        },
      },
    };
    expect(undocumentedFields(schema)).toEqual(["b", "b.c", "d[].e", "f{}.g"]);
  });
});
