import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { jsonSchemaOf, managedCrd, providerConfigCrd, toStructural } from "../../../shared/api/crd.ts";
import { defineManagedKind } from "../../../shared/api/managed.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";

describe("toStructural", () => {
  it("drops what structural schemas forbid or zod adds as noise", () => {
    const out = toStructural({
      $schema: "x",
      id: "y",
      type: "object",
      additionalProperties: false,
      required: [],
      properties: {
        n: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      },
    });
    expect(out).toEqual({ type: "object", properties: { n: { type: "integer" } } });
  });

  it("keeps real bounds, required lists and typed additionalProperties (maps)", () => {
    const out = toStructural({
      type: "object",
      required: ["a"],
      properties: { a: { type: "integer", minimum: 0, maximum: 900 } },
      additionalProperties: { type: "string" },
    });
    expect(out).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: { type: "integer", minimum: 0, maximum: 900 } },
      additionalProperties: { type: "string" },
    });
  });

  it("keeps a free-form object's fields instead of letting the server prune them", () => {
    expect(toStructural({ type: "object" })).toEqual({
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it.each(["anyOf", "oneOf", "allOf"])("refuses %s (one type per field)", (k) => {
    expect(() => toStructural({ [k]: [{ type: "string" }, { type: "integer" }] })).toThrow(k);
  });
});

describe("jsonSchemaOf", () => {
  it("turns zod enums, defaults, bounds and maps into their OpenAPI forms", () => {
    const schema = jsonSchemaOf(
      z.object({
        mode: z.enum(["A", "B"]).default("A"),
        count: z.number().int().min(1).max(10).optional(),
        labels: z.record(z.string(), z.string()).optional(),
      }),
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        mode: { type: "string", enum: ["A", "B"], default: "A" },
        count: { type: "integer", minimum: 1, maximum: 10 },
        labels: { type: "object", additionalProperties: { type: "string" } },
      },
    });
  });

  it("refuses a union (not structural)", () => {
    expect(() => jsonSchemaOf(z.object({ v: z.union([z.string(), z.number()]) }))).toThrow(/anyOf|oneOf/);
  });
});

describe("defineManagedKind", () => {
  const Thing = defineManagedKind({
    group: "things.gcp",
    kind: "Thing",
    cloud: "gcp",
    description: "A thing.",
    forProvider: z.object({ size: z.number().int().optional() }),
    atProvider: z.object({ id: z.string().optional() }),
  });

  it("derives the API identity and defaults", () => {
    expect(Thing).toMatchObject({
      group: "things.gcp.driftless.dev",
      version: "v1alpha1",
      apiVersion: "things.gcp.driftless.dev/v1alpha1",
      plural: "things",
      namespaced: false,
      immutable: [],
      connectionKeys: [],
      externalName: "fromAnnotation",
      providerConfig: { group: "gcp.driftless.dev", kind: "ProviderConfig", plural: "providerconfigs" },
    });
  });

  it("gives every spec Crossplane's shared fields with their defaults", () => {
    expect(Thing.spec.parse({ forProvider: {} })).toEqual({
      forProvider: {},
      providerConfigRef: { name: "default" },
      deletionPolicy: "Delete",
      managementPolicies: ["*"],
    });
    expect(Thing.spec.safeParse({}).success).toBe(false);
  });
});

describe("managedCrd", () => {
  const crd = managedCrd(Bucket);
  const version = crd.spec.versions[0];

  it("is a cluster-scoped CRD with a status subresource, in the managed categories", () => {
    expect(crd.metadata.name).toBe("buckets.s3.aws.driftless.dev");
    expect(crd.spec.scope).toBe("Cluster");
    expect(crd.spec.names).toMatchObject({
      kind: "Bucket",
      listKind: "BucketList",
      plural: "buckets",
      singular: "bucket",
    });
    expect(crd.spec.names.categories).toEqual(expect.arrayContaining(["crossplane", "managed", "aws"]));
    expect(version?.subresources).toEqual({ status: {} });
  });

  it("prints READY, SYNCED, EXTERNAL-NAME and AGE", () => {
    expect(version?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      "READY",
      "SYNCED",
      "EXTERNAL-NAME",
      "AGE",
    ]);
    expect(version?.additionalPrinterColumns[2]).toMatchObject({
      jsonPath: ".metadata.annotations.crossplane\\.io/external-name",
    });
  });

  it("makes conditions a list map keyed by type", () => {
    const status = version?.schema.openAPIV3Schema.properties.status as {
      properties: Record<string, unknown>;
    };
    expect(status.properties.conditions).toMatchObject({
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["type"],
    });
  });

  it("requires spec and spec.forProvider", () => {
    const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
    expect(schema.required).toEqual(["spec"]);
    expect((schema.properties.spec as { required: string[] }).required).toEqual(["forProvider"]);
  });
});

describe("providerConfigCrd", () => {
  it("prints READY, USERS, SOURCE and AGE", () => {
    const crd = providerConfigCrd(providerConfigs.aws.type, providerConfigs.aws.spec, "aws");
    expect(crd.metadata.name).toBe("providerconfigs.aws.driftless.dev");
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((c) => c.name)).toEqual([
      "READY",
      "USERS",
      "SOURCE",
      "AGE",
    ]);
  });
});
