import { describe, expect, it } from "vitest";
import { forwarderCluster } from "../../../functions/forwarder.ts";
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
