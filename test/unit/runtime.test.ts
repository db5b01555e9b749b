import { describe, expect, it } from "vitest";

describe("runtime", () => {
  it("runs on Node 22 (from the locked node-<os>-<cpu> package), as the SDKs and vitest require", () => {
    expect(process.versions.node.split(".")[0]).toBe("22");
  });
});
