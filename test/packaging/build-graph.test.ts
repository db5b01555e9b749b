// The bundle import-graph check: an AWS bundle that pulls in Pub/Sub fails the build, naming the chain.
// The real AWS reconcile bundle's budget and contents: cloudformation.test.ts, on the bundle `npm run
// package` builds (built once).
import type { Metafile } from "esbuild";
import { describe, expect, it } from "vitest";
import { forbiddenInput } from "../../infra/build/build.ts";

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
