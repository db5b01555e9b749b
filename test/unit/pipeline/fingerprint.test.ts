import { describe, expect, it } from "vitest";
import type { ObjectMeta } from "../../../shared/api/meta.ts";
import { fingerprint } from "../../../shared/pipeline/forwarder.ts";

const base: ObjectMeta = {
  name: "q",
  uid: "5c1f0d7e-0000-4000-8000-000000000001",
  resourceVersion: "100",
  generation: 3,
  labels: { team: "a", env: "dev" },
  annotations: { "crossplane.io/external-name": "q" },
  finalizers: ["finalizer.managedresource.driftless.dev"],
};

describe("forwarder fingerprint", () => {
  it("ignores what a status write changes (resourceVersion, managedFields) and map key order", () => {
    const statusWrite = {
      ...base,
      resourceVersion: "101",
      managedFields: [{ manager: "driftless" }],
    } as ObjectMeta;
    const reordered = { ...base, labels: { env: "dev", team: "a" } };
    expect(fingerprint(statusWrite)).toBe(fingerprint(base));
    expect(fingerprint(reordered)).toBe(fingerprint(base));
  });

  it.each<[string, Partial<ObjectMeta>]>([
    ["generation (a spec change)", { generation: 4 }],
    ["a label", { labels: { team: "b", env: "dev" } }],
    ["an annotation", { annotations: { "crossplane.io/paused": "true" } }],
    ["the finalizers", { finalizers: [] }],
    ["deletionTimestamp", { deletionTimestamp: "2030-01-01T00:00:00Z" }],
    ["the uid (a new object with the same name)", { uid: "5c1f0d7e-0000-4000-8000-000000000002" }],
  ])("changes with %s", (_what, change) => {
    expect(fingerprint({ ...base, ...change })).not.toBe(fingerprint(base));
  });

  it("is one number (a Map value of its own, no string per key)", () => {
    const fp = fingerprint(base);
    expect(typeof fp).toBe("number");
    expect(Number.isSafeInteger(fp)).toBe(true);
  });
});
