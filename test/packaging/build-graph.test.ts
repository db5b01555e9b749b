// The bundle import-graph check: an AWS bundle that pulls in Pub/Sub fails the build, naming the chain;
// and the real AWS reconcile bundle, built, is within its budget.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import { AWS_RECONCILE_BUDGET_BYTES, BUNDLES, buildBundle, forbiddenInput } from "../../infra/build/build.ts";

function metafile(edges: Record<string, string[]>): Metafile {
  const inputs: Metafile["inputs"] = {};
  for (const [file, imports] of Object.entries(edges)) {
    inputs[file] = {
      bytes: 1,
      imports: imports.map((path) => ({ path, kind: "import-statement", original: path })),
    };
  }
  return { inputs, outputs: {} };
}

describe("forbiddenInput", () => {
  const graph = metafile({
    "functions/aws/reconcile.ts": ["shared/queue/index.ts"],
    "shared/queue/index.ts": ["shared/queue/pubsub.ts"],
    "shared/queue/pubsub.ts": ["node_modules/@google-cloud/pubsub/build/src/index.js"],
    "node_modules/@google-cloud/pubsub/build/src/index.js": [],
  });

  it("finds Pub/Sub in an AWS bundle and the file that brought it in", () => {
    expect(forbiddenInput(graph, "aws")).toEqual({
      input: "node_modules/@google-cloud/pubsub/build/src/index.js",
      via: ["shared/queue/pubsub.ts"],
    });
  });

  it("accepts the same graph for GCP and a clean AWS graph", () => {
    expect(forbiddenInput(graph, "gcp")).toBeUndefined();
    const clean = metafile({
      "functions/aws/reconcile.ts": ["shared/queue/sqs.ts"],
      "shared/queue/sqs.ts": ["node_modules/@aws-sdk/client-sqs/dist-es/index.js"],
      "node_modules/@aws-sdk/client-sqs/dist-es/index.js": [],
    });
    expect(forbiddenInput(clean, "aws")).toBeUndefined();
    expect(forbiddenInput(clean, "gcp")?.input).toContain("@aws-sdk/client-sqs");
  });
});

describe("the AWS reconcile bundle", () => {
  it("stays within its size budget and carries no Kubernetes client library, Pub/Sub or Azure", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "driftless-bundle-"));
    try {
      const spec = BUNDLES.find((b) => b.name === "aws-reconcile");
      if (!spec) throw new Error("no aws-reconcile bundle spec");
      // buildBundle throws BundleGraphError when a forbidden package (client-node, undici, Pub/Sub…) is inside.
      const built = await buildBundle(spec, path.join(dir, "aws-reconcile.mjs"));
      expect(built.bytes).toBeLessThanOrEqual(AWS_RECONCILE_BUDGET_BYTES);
      const packages = built.contributors.map(([pkg]) => pkg);
      expect(packages).toContain("@aws-sdk/client-sqs");
      expect(packages.filter((p) => /client-node|undici|google|azure/.test(p))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
