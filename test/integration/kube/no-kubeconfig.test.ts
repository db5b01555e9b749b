// `driftless get` with no cluster access at all: the CLI says where it looked and how to point it at a
// cluster (client-node alone would fall back to http://localhost:8080 and complain about TLS instead).
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../cli/helpers.ts";

/** An environment with no kubeconfig anywhere: empty HOME, no KUBECONFIG, not in a cluster. */
function nowhere(extra: Record<string, string> = {}) {
  const home = mkdtempSync(path.join(tmpdir(), "driftless-nokube-"));
  return {
    home,
    env: {
      HOME: home,
      KUBECONFIG: undefined,
      DRIFTLESS_KUBECONFIG_YAML: undefined,
      KUBERNETES_SERVICE_HOST: undefined,
      KUBERNETES_SERVICE_PORT: undefined,
      ...extra,
    },
  };
}

describe("no kubeconfig", { timeout: 60_000 }, () => {
  it("names every place it looked and what to set", async () => {
    const { home, env } = nowhere();
    const res = await cli(["get", "queue"], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).not.toContain("skipTLSVerify");
    expect(res.stderr).toContain("no Kubernetes cluster configured");
    expect(res.stderr).toContain("KUBECONFIG (not set)");
    expect(res.stderr).toContain(`${path.join(home, ".kube", "config")} (does not exist)`);
    expect(res.stderr).toContain("the in-cluster ServiceAccount (KUBERNETES_SERVICE_HOST is not set");
    expect(res.stderr).toContain("--kubeconfig FILE, KUBECONFIG=FILE or DRIFTLESS_KUBECONFIG_YAML");
  });

  it("says which KUBECONFIG file is missing, or is a directory", async () => {
    const { home, env } = nowhere();
    const missing = path.join(home, "config");
    const gone = await cli(["get", "queue"], { env: { ...env, KUBECONFIG: missing } });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no kubeconfig found: ${missing} does not exist`);

    mkdirSync(path.join(home, "dir"));
    const dir = await cli(["get", "queue", "--kubeconfig", path.join(home, "dir")], { env });
    expect(dir.code).toBe(1);
    expect(dir.stderr).toContain(`no kubeconfig found: ${path.join(home, "dir")} is not a file`);
  });
});
