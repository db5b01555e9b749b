// The doorbells know the kinds as data (functions/served-types.ts): built, their bundles carry no cloud SDK
// but the one their queue needs: no Pub/Sub gRPC client, no Cloud SQL or Storage client, no AWS service client.
// The GCP functions reach Pub/Sub (their own publishing and the Topic and Subscription kinds), Cloud SQL and
// Cloud Storage over their REST APIs: they carry no cloud SDK either. The AWS doorbell (SQS only) is checked
// on the bundle `npm run package` builds (cloudformation.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLES, buildBundle } from "../../infra/build/build.ts";
import { CLOUD_SDK } from "../support/bundles.ts";

async function packagesOf(name: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "driftless-doorbell-"));
  try {
    const spec = BUNDLES.find((b) => b.name === name);
    if (!spec) throw new Error(`no ${name} bundle spec`);
    const built = await buildBundle(spec, path.join(dir, `${name}.mjs`));
    return built.contributors.map(([pkg]) => pkg);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the doorbell bundles", () => {
  it("GCP: carries no cloud SDK (it publishes over Pub/Sub's REST API with google-auth-library)", async () => {
    const packages = await packagesOf("gcp-doorbell");
    expect(packages).toContain("google-auth-library");
    expect(packages.filter((p) => CLOUD_SDK.test(p))).toEqual([]);
  }, 120_000);
});

describe("the GCP function bundles", () => {
  // Pub/Sub (with its protos), Cloud SQL and Storage are reached over REST: no Google client library, no
  // google-gax or gRPC stack is left in them.
  for (const name of ["gcp-reconcile", "gcp-sweep"])
    it(`${name}: carries no cloud SDK (Pub/Sub, Cloud SQL and Storage speak REST through GoogleRestClient)`, async () => {
      const packages = await packagesOf(name);
      expect(packages).toContain("google-auth-library");
      expect(packages.filter((p) => CLOUD_SDK.test(p))).toEqual([]);
    }, 120_000);
});
