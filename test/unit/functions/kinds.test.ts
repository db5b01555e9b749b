// The per-cloud kind lists of the function bundles (imported by file to keep other clouds' SDKs out)
// must match the full registry: a kind added to shared/providers/index.ts cannot be forgotten there.
import { describe, expect, it } from "vitest";
import { awsKinds, awsProviderConfigKinds } from "../../../functions/aws/kinds.ts";
import { definitions } from "../../../functions/forwarder.ts";
import { gcpKinds, gcpProviderConfigKinds } from "../../../functions/gcp/kinds.ts";
import { servedTypes } from "../../../functions/served-types.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { claimKinds } from "../../../shared/api/claims/claims.ts";
import { classKinds } from "../../../shared/api/claims/classes.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import { activatedAwsccSpecs } from "../../../shared/providers/awscc/activated.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { activatedGoogleSpecs } from "../../../shared/providers/gcp/generic/activated.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { typesOf } from "../../../shared/worker/worker.ts";

const names = (defs: Array<{ kind: string; group: string }>) =>
  defs.map((d) => `${d.kind}.${d.group}`).sort();
const ofCloud = (cloud: string) => managedKinds.filter((k) => k.definition.cloud === cloud);

describe("function kind lists", () => {
  it("serve every AWS kind on AWS and every GCP kind on GCP, and nothing else", () => {
    expect(names(awsKinds.map((k) => k.definition))).toEqual(names(ofCloud("aws").map((k) => k.definition)));
    expect(names(gcpKinds.map((k) => k.definition))).toEqual(names(ofCloud("gcp").map((k) => k.definition)));
    // The v1 shape's ProviderConfig, and the namespaced ProviderConfig and ClusterProviderConfig.
    expect(awsProviderConfigKinds.map((k) => `${k.cloud} ${k.type.kind}.${k.type.group}`)).toEqual([
      "aws ProviderConfig.aws.driftless.dev",
      "aws ProviderConfig.aws.m.driftless.dev",
      "aws ClusterProviderConfig.aws.m.driftless.dev",
    ]);
    expect(gcpProviderConfigKinds.map((k) => k.cloud)).toEqual(["gcp", "gcp", "gcp"]);
    expect(providerConfigKinds.map((k) => k.cloud)).toEqual(expect.arrayContaining(["aws", "gcp"]));
  });

  it("let the forwarder watch what the functions behind its queue serve", () => {
    expect(names([...definitions])).toEqual(names(managedKinds.map((k) => k.definition)));
    expect(names(servedTypes(["aws"]))).toEqual(names(typesOf(awsKinds, awsProviderConfigKinds)));
    expect(names(servedTypes(["gcp"]))).toEqual(names(typesOf(gcpKinds, gcpProviderConfigKinds)));
    const claims = { claims: true };
    expect(names(servedTypes(["aws"], claims))).toEqual(
      names(typesOf(awsKinds, awsProviderConfigKinds, claims)),
    );
  });

  it("let the doorbells know the activated generated kinds, both shapes, from their definitions alone", () => {
    const before = process.env.DRIFTLESS_ACTIVATE;
    process.env.DRIFTLESS_ACTIVATE = "run.googleapis.service,compute.googleapis.network,dynamodb.table";
    try {
      const google = activatedGoogleSpecs();
      const awscc = activatedAwsccSpecs();
      expect(google.length).toBeGreaterThan(0);
      expect(awscc.length).toBeGreaterThan(0);
      expect(names(servedTypes(["gcp"], { generated: google.map(googleKindOf) }))).toEqual(
        names(
          typesOf([...gcpKinds, ...withNamespacedVariants(googleProviders(google))], gcpProviderConfigKinds),
        ),
      );
      expect(names(servedTypes(["aws"], { claims: true, generated: awscc.map(awsccKindOf) }))).toEqual(
        names(
          typesOf([...awsKinds, ...withNamespacedVariants(awsccProviders(awscc))], awsProviderConfigKinds, {
            claims: true,
          }),
        ),
      );
    } finally {
      if (before === undefined) delete process.env.DRIFTLESS_ACTIVATE;
      else process.env.DRIFTLESS_ACTIVATE = before;
    }
  });

  it("add every claim and class kind when claims are served, the same on every cloud", () => {
    const claimed = names(typesOf(gcpKinds, gcpProviderConfigKinds, { claims: true })).filter((n) =>
      /\.(claims|classes)\.driftless\.dev$/.test(n),
    );
    expect(claimed).toEqual(names([...claimKinds, ...classKinds]));
    expect(names(typesOf(awsKinds, awsProviderConfigKinds, { claims: true }))).toEqual(
      expect.arrayContaining(claimed),
    );
  });
});
