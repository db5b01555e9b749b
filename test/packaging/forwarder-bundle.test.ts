// The forwarder bundle starts without client-node or undici, which were about 10 MB of its RSS.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLES, buildBundle } from "../../infra/build/build.ts";

describe("the forwarder bundle", () => {
  it("starts without @kubernetes/client-node and undici (only the on-demand fallback chunk has them)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "driftless-forwarder-"));
    try {
      const spec = BUNDLES.find((b) => b.name === "forwarder");
      if (!spec) throw new Error("no forwarder bundle spec");
      const built = await buildBundle(spec, path.join(dir, "forwarder.mjs"));
      const eager = built.contributors.map(([pkg]) => pkg);
      expect(eager).not.toContain("@kubernetes/client-node");
      expect(eager).not.toContain("undici");
      expect(eager).toContain("shared/pipeline");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
