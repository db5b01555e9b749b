// The doorbells know the kinds as data (functions/served-types.ts): built, their bundles carry no cloud SDK
// but the one their queue needs: no Pub/Sub gRPC client, no Cloud SQL or Storage client, no AWS service client.
// The GCP functions reach Pub/Sub (their own publishing and the Topic and Subscription kinds), Cloud SQL and
// Cloud Storage over their REST APIs: none of those clients is in them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLES, buildBundle } from "../../infra/build/build.ts";

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

/** A cloud SDK: Google's client libraries and their gRPC stack, any AWS service client, Azure's. */
const CLOUD_SDK = /^(@google-cloud\/|google-gax$|@grpc\/|@aws-sdk\/client-|@azure\/)/;

describe("the doorbell bundles", () => {
  it("GCP: carries no cloud SDK (it publishes over Pub/Sub's REST API with google-auth-library)", async () => {
    const packages = await packagesOf("gcp-doorbell");
    expect(packages).toContain("google-auth-library");
    expect(packages.filter((p) => CLOUD_SDK.test(p))).toEqual([]);
  }, 120_000);

  it("AWS: carries no cloud SDK but SQS, its queue's", async () => {
    const packages = await packagesOf("aws-doorbell");
    expect(packages.filter((p) => CLOUD_SDK.test(p))).toEqual(["@aws-sdk/client-sqs"]);
  }, 120_000);
});

/** Google's clients of the APIs the GCP kinds reach over REST (Pub/Sub with its protos, Cloud SQL, Storage). */
const REST_REPLACED = /^@google-cloud\/(pubsub|sql|storage)/;

describe("the GCP function bundles", () => {
  for (const name of ["gcp-reconcile", "gcp-sweep"])
    it(`${name}: carries no Pub/Sub, Cloud SQL or Storage client (they speak REST through GoogleRestClient)`, async () => {
      const packages = await packagesOf(name);
      expect(packages).toContain("google-auth-library");
      expect(packages.filter((p) => REST_REPLACED.test(p))).toEqual([]);
    }, 120_000);
});
