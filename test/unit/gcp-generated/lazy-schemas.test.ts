// A generated Google kind's zod schemas are built on the kind's first use, not when it is activated (the
// GCP functions' cold start with 50 activated kinds), and every path still validates with the kind's one
// schema: the engine refuses a bad spec of a kind whose schema was not yet built, in both shapes, and the
// schema built lazily is the one built eagerly. The activated kinds are built once per process: the
// registry at load and the served kinds (cold start, each sweep) share the spec, provider and definition.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { servedGcpKinds } from "../../../functions/gcp/kinds.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { managedCrd } from "../../../shared/api/crd.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { googleSpecsFor, loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleSchemas } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import { localizeSecretRefs } from "../../../shared/api/managed.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { activatedGoogleKinds, googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../../shared/providers/gcp/home.ts";
import { withHome } from "../../../shared/providers/home.ts";
import { built, expectActivatedBuiltOnce, expectBadSpecRefusedUnbuilt } from "../../support/lazy-kinds.ts";

const spec = (typeName: string): GoogleKindSpec => {
  const e = loadGoogleCatalog().kinds.find((k) => k.typeName === typeName);
  if (!e) throw new Error(`${typeName} is not generated`);
  return loadGoogleSpec(e);
};

/** Both shapes of one generated kind, as the GCP registry builds them (shared/providers/gcp/kinds.ts). */
const shapes = (s: GoogleKindSpec) =>
  withNamespacedVariants(googleProviders([s], {}).map((p) => withHome(p, gcpHome)));

beforeAll(() => {
  generateGcp();
}, 120_000);

describe("generated Google kinds build their schemas on first use", () => {
  it("activating a kind builds no zod schema of either shape; reading one builds it once", () => {
    const [cluster, namespaced] = shapes(spec("compute.googleapis.com/Subnetwork")).map((p) => p.definition);
    if (!cluster || !namespaced) throw new Error("two shapes expected");
    for (const def of [cluster, namespaced])
      for (const key of ["forProvider", "atProvider", "spec", "status"] as const)
        expect(built(def, key), `${def.group} ${key}`).toBe(false);
    // What the registry reads at start is there without them: references, immutable home fields.
    expect(cluster.references.map((r) => r.field)).toContain("network");
    expect(cluster.immutable).toContain("region");
    expect(namespaced.group).toBe("compute.googleapis.m.driftless.dev");
    const first = cluster.forProvider;
    expect(built(cluster)).toBe(true);
    expect(cluster.forProvider).toBe(first);
    expect(Object.keys(first.shape)).toEqual(expect.arrayContaining(["region", "network", "networkRef"]));
    expect(built(namespaced)).toBe(false);
    expect(namespaced.forProvider).toBe(namespaced.forProvider);
  });

  it("the schemas built lazily are the ones built eagerly, in both shapes (CRD included)", () => {
    // A Compute kind with references, and a kind with a secret (a Secret key, local in the `.m.` shape).
    for (const type of ["compute.googleapis.com/Instance", "alloydb.googleapis.com/User"]) {
      const sp = spec(type);
      const [cluster, namespaced] = shapes(sp).map((p) => p.definition);
      if (!cluster || !namespaced) throw new Error("two shapes expected");
      const eager = googleSchemas(sp);
      expect(z.toJSONSchema(cluster.forProvider)).toEqual(z.toJSONSchema(eager.forProvider));
      expect(z.toJSONSchema(cluster.atProvider)).toEqual(z.toJSONSchema(eager.atProvider));
      const local = localizeSecretRefs(eager.forProvider);
      expect(z.toJSONSchema(namespaced.forProvider)).toEqual(z.toJSONSchema(local.schema));
      expect(namespaced.secretRefPaths).toEqual(local.paths);
      if (type.startsWith("alloydb")) {
        // The `.m.` shape's Secret key is in the resource's own namespace: no namespace field to name another.
        expect(local.paths).toEqual(["passwordSecretRef"]);
        const json = z.toJSONSchema(namespaced.forProvider) as {
          properties: Record<string, { properties: object }>;
        };
        expect(Object.keys(json.properties.passwordSecretRef?.properties ?? {})).toEqual(["name", "key"]);
      }
      const props = managedCrd(cluster).spec.versions[0]?.schema?.openAPIV3Schema?.properties;
      expect(Object.keys(props ?? {})).toEqual(expect.arrayContaining(["spec", "status"]));
    }
  });

  it("the engine refuses a bad spec of a kind whose schema was not yet built, in both shapes", async () => {
    await expectBadSpecRefusedUnbuilt({
      providers: shapes(spec("secretmanager.googleapis.com/Secret")),
      // Credentials from a Secret that does not exist: a valid spec goes on to connect, and that step fails.
      providerConfig: {
        type: providerConfigs.gcp.type,
        spec: {
          projectID: "p",
          credentials: { source: "Secret", secretRef: { name: "none", namespace: "default", key: "k" } },
        },
      },
      // Wrong types at the top and deep inside: refused before any cloud call.
      bad: { labels: 5, replication: { userManaged: { replicas: [{ location: 7 }] } } },
      badPaths: [/spec\.forProvider\.labels: /, /replicas\.0\.location: /],
      good: { replication: { automatic: {} }, labels: { a: "1" } },
    });
  });

  it("the activated kinds are built once: the registry's and the served kinds' are the same definitions", async () => {
    const entry = loadGoogleCatalog().kinds.find((k) => k.typeName === "run.googleapis.com/Service");
    if (!entry) throw new Error("run.googleapis.com/Service is not generated");
    await expectActivatedBuiltOnce({ entry, activated: activatedGoogleKinds, served: servedGcpKinds });
    const pattern = `${entry.plural}.${entry.group}.driftless.dev`;
    expect(googleSpecsFor([pattern])[0]).toBe(googleSpecsFor([pattern])[0]);
  });
});
