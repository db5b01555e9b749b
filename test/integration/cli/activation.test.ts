// `driftless crds print|apply --activate`: only the activated managed kinds' CRDs (plus ProviderConfigs,
// claims, classes and export templates). `--prune` is covered by test/unit/ops/activation.test.ts on an
// in-memory API server: on the shared one it would remove CRDs other suites use.
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { allCrds } from "../../../shared/crds.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { cli } from "./helpers.ts";

const managed = new Set(managedKinds.map((k) => `${k.definition.plural}.${k.definition.group}`));
const nonManaged = (allCrds() as Array<{ metadata: { name: string } }>)
  .map((c) => c.metadata.name)
  .filter((n) => !managed.has(n));
const printed = (stdout: string) =>
  parseAllDocuments(stdout).map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name);

describe("driftless crds --activate", () => {
  it("print: the activated managed kinds and every other CRD; a pattern matching nothing is warned about", async () => {
    const out = await cli(["crds", "print", "--activate", "*.gcp.driftless.dev", "--activate", "nosuch.*"]);
    expect(out.code).toBe(0);
    const names = printed(out.stdout);
    expect(names.filter((n) => managed.has(n)).sort()).toEqual(
      [...managed].filter((n) => n.endsWith(".gcp.driftless.dev")).sort(),
    );
    expect(names.filter((n) => !managed.has(n)).sort()).toEqual([...nonManaged].sort());
    expect(out.stderr).toMatch(/"nosuch\.\*" matches no managed kind/);
  });

  it("DRIFTLESS_ACTIVATE is the default list; a malformed pattern is a usage error", async () => {
    const env = await cli(["crds", "print"], { env: { DRIFTLESS_ACTIVATE: "queues.sqs.aws.driftless.dev" } });
    expect(printed(env.stdout).filter((n) => managed.has(n))).toEqual(["queues.sqs.aws.driftless.dev"]);
    const bad = await cli(["crds", "print", "--activate", "queues.(sqs)"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/may only hold/);
  });

  it("apply --activate installs the subset and leaves the other CRDs alone", async () => {
    const out = await cli(["crds", "apply", "--activate", "queues.sqs.aws.driftless.dev"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`applied ${nonManaged.length + 1} CRDs\n`);
  });
});
