// The forwarder pod's cluster access: the functions' own kubeconfig loader for what it can serve, client-node
// (loaded on demand) for what only client-node can (exec plugins, auth providers) — and the bundle that
// starts without client-node or undici, which were about 10 MB of its RSS.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { forwarderCluster } from "../../../functions/forwarder.ts";
import { BUNDLES, buildBundle } from "../../../infra/build/build.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { KubeconfigError } from "../../../shared/kube/kubeconfig.ts";

function kubeconfig(user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "  - name: c",
    "    cluster: { server: https://127.0.0.1:6443, insecure-skip-tls-verify: true }",
    "contexts:",
    "  - name: ctx",
    "    context: { cluster: c, user: u }",
    "current-context: ctx",
    "users:",
    "  - name: u",
    `    user: ${user}`,
    "",
  ].join("\n");
}

describe("forwarderCluster", () => {
  it("reads a token kubeconfig with the own loader: a Kube, no client-node", async () => {
    const kube = await forwarderCluster({ DRIFTLESS_KUBECONFIG_YAML: kubeconfig("{ token: abc }") });
    expect(kube).toBeInstanceOf(Kube);
  });

  it("hands a kubeconfig whose user runs an exec plugin to client-node", async () => {
    const exec =
      "{ exec: { apiVersion: client.authentication.k8s.io/v1, command: kubelogin, args: [get-token] } }";
    const kc = await forwarderCluster({ DRIFTLESS_KUBECONFIG_YAML: kubeconfig(exec) });
    expect(kc).not.toBeInstanceOf(Kube);
    expect(kc.constructor.name).toBe("KubeConfig");
  });

  it("does not fall back on a kubeconfig that is wrong for both", async () => {
    await expect(forwarderCluster({ DRIFTLESS_KUBECONFIG_YAML: "clusters: [" })).rejects.toBeInstanceOf(
      KubeconfigError,
    );
  });
});

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
