// A generated kind's CRD shared by test files running at once (test/support/crd-holds.ts): another
// process letting go of it while this one holds it removes nothing; this one letting go last removes it.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { awsccKindOf } from "../../shared/api/awscc/kind.ts";
import { CRD_TYPE } from "../../shared/ops/activation.ts";
import { awsccSpec } from "../support/awscc.ts";
import { installCrds, removeCrds } from "../support/crd-holds.ts";
import { newKube } from "../support/env.ts";

const kube = newKube();
// A kind no other test file uses.
const def = awsccKindOf(awsccSpec("AWS::Logs::Destination"));
const crdName = `${def.plural}.${def.group}`;
const at = (rel: string) => JSON.stringify(fileURLToPath(new URL(rel, import.meta.url)));

/** Another test process: holds the CRD (install), or lets go of it (remove), then exits. */
function otherProcess(op: "installCrds" | "removeCrds") {
  const script = `
    const { ${op} } = await import(${at("../support/crd-holds.ts")});
    const { newKube } = await import(${at("../support/env.ts")});
    const { awsccSpec } = await import(${at("../support/awscc.ts")});
    const { awsccKindOf } = await import(${at("../../shared/api/awscc/kind.ts")});
    await ${op}(newKube(), [awsccKindOf(awsccSpec("AWS::Logs::Destination"))]);`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(run.status, run.stderr).toBe(0);
}

describe("generated kinds' CRDs held across test processes", () => {
  it("another process letting go removes nothing this one holds; the last holder removes it", async () => {
    await installCrds(kube, [def]);
    otherProcess("removeCrds");
    expect(await kube.get(CRD_TYPE, crdName)).toBeDefined();
    // A holder whose process has ended holds nothing: this one, letting go, is the last.
    otherProcess("installCrds");
    await removeCrds(kube, [def]);
    expect(await kube.get(CRD_TYPE, crdName)).toBeUndefined();
  }, 300_000);
});
