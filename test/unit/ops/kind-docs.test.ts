// docs/kinds/ is generated from the schemas (npm run gen:docs): it must never drift from them.
import { describe, expect, it } from "vitest";
import { generatedKindDocs, staleKindDocs } from "../../../infra/gen-docs.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { fieldRows, pageName } from "../../../shared/ops/kind-docs.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

describe("docs/kinds", () => {
  it("is up to date with the schemas and examples (run npm run gen:docs)", () => {
    expect(staleKindDocs()).toEqual([]);
  });

  it("has a page per managed kind with every forProvider field, immutability and connection keys", () => {
    const pages = generatedKindDocs();
    // One page per kind shows both shapes: the namespaced variant is on its cluster-scoped kind's page.
    const clusterScoped = managedKinds.filter((k) => k.definition.scope === "Cluster");
    expect(clusterScoped.length * 2).toBe(managedKinds.length);
    for (const { definition: def } of clusterScoped) {
      const page = pages.get(pageName(def)) ?? "";
      expect(page, def.kind).toContain(
        `# ${def.kind} — \`${def.apiVersion}\`, \`${namespacedVariantOf(def).apiVersion}\``,
      );
      expect(page, def.kind).toContain(`apiVersion: ${namespacedVariantOf(def).apiVersion}`);
      for (const f of Object.keys(def.forProvider.shape))
        expect(page, `${def.kind}.${f}`).toContain(`| \`${f}\` |`);
      for (const f of def.immutable)
        expect(page).toMatch(new RegExp(`\\| \`${f}\` \\|.*\\*\\*immutable\\*\\*`));
      for (const k of def.connectionKeys) expect(page).toContain(`\`${k}\``);
      expect(page).toContain("## Example");
      expect(pages.get("README.md")).toContain(`(${pageName(def)})`);
    }
  });

  it("walks nested objects, lists and maps", () => {
    const rows = fieldRows(
      {
        type: "object",
        required: ["a"],
        properties: {
          a: { type: "string", description: "A.", minLength: 1 },
          b: {
            type: "array",
            items: { type: "object", properties: { c: { type: "integer", minimum: 1, maximum: 5 } } },
          },
          d: { type: "object", additionalProperties: { type: "string" } },
        },
      },
      ["b"],
    );
    expect(rows.map((r) => [r.path, r.type, r.required, r.immutable, r.constraints])).toEqual([
      ["a", "string", true, false, ["not empty"]],
      ["b", "[]object", false, true, []],
      ["b[].c", "integer", false, true, ["range: 1–5"]],
      ["d", "map[string]string", false, false, []],
    ]);
  });
});
