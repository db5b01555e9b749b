import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { claimKinds } from "../../../shared/api/claims/claims.ts";
import { classKinds } from "../../../shared/api/claims/classes.ts";
import { allCrds } from "../../../shared/crds.ts";

type Crd = ReturnType<typeof allCrds>[number] & {
  spec: { names: { shortNames?: string[]; plural: string; singular: string }; scope: string };
};

describe("claim and class CRDs", () => {
  const crds = allCrds() as Crd[];
  const byName = new Map(crds.map((c) => [c.metadata.name, c]));

  it("are part of allCrds: claims namespaced, classes cluster-scoped", () => {
    for (const k of claimKinds)
      expect(byName.get(`${k.plural}.claims.driftless.dev`)?.spec.scope).toBe("Namespaced");
    for (const k of classKinds)
      expect(byName.get(`${k.plural}.classes.driftless.dev`)?.spec.scope).toBe("Cluster");
  });

  it("have short names that clash with no other kind's names", () => {
    const all = crds.flatMap((c) => [
      c.spec.names.plural,
      c.spec.names.singular,
      ...(c.spec.names.shortNames ?? []),
    ]);
    for (const c of crds) {
      for (const s of c.spec.names.shortNames ?? []) expect(all.filter((x) => x === s)).toHaveLength(1);
    }
  });

  it("show READY, SYNCED, CLASS, RESOURCE and AGE for claims", () => {
    const cols = (
      byName.get("queues.claims.driftless.dev") as unknown as {
        spec: { versions: Array<{ additionalPrinterColumns: Array<{ name: string; priority?: number }> }> };
      }
    ).spec.versions[0]?.additionalPrinterColumns;
    expect(cols?.filter((c) => !c.priority).map((c) => c.name)).toEqual([
      "READY",
      "SYNCED",
      "CLASS",
      "RESOURCE",
      "AGE",
    ]);
  });
});

describe("examples/claims.yaml", () => {
  const docs = parseAllDocuments(
    readFileSync(join(import.meta.dirname, "../../../examples/claims.yaml"), "utf8"),
  ).map((d) => d.toJS() as { apiVersion: string; kind: string; spec?: unknown });

  it("has only valid claims and classes", () => {
    const kinds = [...claimKinds, ...classKinds];
    let checked = 0;
    for (const doc of docs) {
      const def = kinds.find((k) => k.apiVersion === doc.apiVersion && k.kind === doc.kind);
      if (!def) continue;
      const parsed = def.spec.safeParse(doc.spec);
      expect(parsed.success, `${doc.kind}: ${parsed.error?.message}`).toBe(true);
      checked++;
    }
    expect(checked).toBe(9);
  });
});
