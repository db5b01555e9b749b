// What a listed model must carry before a batched drift check may use it instead of a read
// (shared/providers/listed-models.ts, ADRs 0012 and 0013): every compared forProvider member the object sets,
// at any depth, and what its status.atProvider holds, at any depth; references never.
import { describe, expect, it } from "vitest";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { listedAmong, uncarried } from "../../../shared/providers/listed-models.ts";

type Json = Record<string, unknown>;
const mr = (forProvider: Json, atProvider?: Json) =>
  ({
    metadata: { name: "x" },
    spec: { forProvider },
    ...(atProvider ? { status: { atProvider } } : {}),
  }) as ManagedResource<Json, Json>;
const all = () => true;

describe("uncarried: what a listed model lacks of what the plan compares", () => {
  const rows: Array<{
    name: string;
    mr: ManagedResource<Json, Json>;
    observed: Json;
    atProvider?: Json;
    want: string[];
  }> = [
    {
      name: "a whole model carries everything",
      mr: mr({ location: "westeurope", properties: { a: 1, b: { c: "x" } } }),
      observed: { location: "westeurope", properties: { a: 2, b: { c: "y" } } },
      want: [],
    },
    {
      name: "a member left out at depth is named by its path",
      mr: mr({ properties: { a: 1, b: { c: "x" } } }),
      observed: { properties: { a: 1, b: {} } },
      want: ["properties.b.c"],
    },
    {
      name: "a null in the listed model is no value",
      mr: mr({ properties: { a: 1 } }),
      observed: { properties: { a: null } },
      want: ["properties.a"],
    },
    {
      name: "references and selectors are never compared",
      mr: mr({ resourceGroupNameRef: { name: "rg" }, properties: { subnetSelector: { matchLabels: {} } } }),
      observed: { properties: {} },
      want: [],
    },
    {
      name: "a read-only member the status holds, at any depth (an instanceView)",
      mr: mr({}, { properties: { instanceView: { state: "Running" }, provisioningState: "Succeeded" } }),
      observed: {},
      atProvider: { properties: { provisioningState: "Succeeded" } },
      want: ["atProvider.properties.instanceView"],
    },
    {
      name: "a status attribute that was null asks for nothing",
      mr: mr({}, { endpoint: null }),
      observed: {},
      atProvider: {},
      want: [],
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const obs = { resourceExists: true, observed: row.observed, atProvider: row.atProvider ?? {} };
      expect(uncarried(row.mr, obs, all)).toEqual(row.want);
    });

  it("only members the kind compares (a top-level name outside the body is not asked for)", () => {
    const m = mr({ resourceGroupName: "rg", properties: { a: 1 } });
    const obs = { resourceExists: true, observed: { properties: { a: 1 } } };
    expect(uncarried(m, obs, (k) => k === "properties")).toEqual([]);
    expect(uncarried(m, obs, all)).toEqual(["resourceGroupName"]);
  });
});

describe("listedAmong: pages stop once they cost more than reading the rest alone", () => {
  async function* pages(n: number, per: number, read: { pages: number }) {
    for (let p = 0; p < n; p++) {
      read.pages++;
      yield new Map(Array.from({ length: per }, (_, i) => [`r${p * per + i}`, p] as const));
    }
  }
  it("stops as soon as every wanted key was seen", async () => {
    const read = { pages: 0 };
    const found = await listedAmong(pages(10, 5, read), new Set(["r0", "r3", "r6", "r9"]));
    expect([...found.keys()]).toEqual(["r0", "r3", "r6", "r9"]);
    expect(read.pages).toBe(2);
  });
  it("stops when the pages read outnumber the wanted keys still unseen", async () => {
    const read = { pages: 0 };
    const found = await listedAmong(pages(10, 5, read), new Set(["r0", "missing-1", "missing-2"]));
    expect([...found.keys()]).toEqual(["r0"]);
    expect(read.pages).toBe(2);
  });
});
