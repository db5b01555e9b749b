// The functions' kubeconfig loader against the real kube-apiserver of the local stack: the stack's own
// kubeconfig (token + CA file), the same credentials laid out as an in-cluster ServiceAccount, and a
// wrong token, which the server must answer with 401.
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadClusterAccess } from "../../../shared/kube/cluster-auth.ts";
import { type ClusterEndpoint, KubeError, KubeHttp } from "../../../shared/kube/http.ts";
import {
  defaultEndpoint,
  endpointFromKubeconfig,
  inClusterEndpoint,
  parseKubeconfig,
  readKubeconfigFile,
} from "../../../shared/kube/kubeconfig.ts";
import { env } from "../../support/env.ts";

interface NamespaceList {
  items: Array<{ metadata: { name: string } }>;
}

/** What every endpoint below must be able to do: read the server's version and list namespaces. */
async function readsTheCluster(endpoint: ClusterEndpoint) {
  const kube = new KubeHttp(endpoint);
  const version = await kube.request<{ major: string; gitVersion: string }>({
    method: "GET",
    path: "/version",
  });
  expect(version.major).toBe("1");
  expect(version.gitVersion).toMatch(/^v1\./);
  const namespaces = await kube.request<NamespaceList>({
    method: "GET",
    path: "/api/v1/namespaces",
    query: { limit: 100 },
  });
  expect(namespaces.items.map((n) => n.metadata.name)).toEqual(
    expect.arrayContaining(["default", "kube-system"]),
  );
}

describe("kubeconfig loader against the local kube-apiserver", () => {
  it("reads the stack's kubeconfig file: token and CA file", async () => {
    const { endpoint, replacedUsers } = endpointFromKubeconfig(readKubeconfigFile(env("KUBECONFIG")));
    expect(replacedUsers).toEqual([]);
    await readsTheCluster(endpoint);
  });

  it("finds it through KUBECONFIG, as functions do (loadClusterAccess, default chain)", async () => {
    await readsTheCluster(defaultEndpoint({ env: { KUBECONFIG: env("KUBECONFIG") } }).endpoint);
    const access = await loadClusterAccess({ kubeconfigPath: env("KUBECONFIG") });
    expect(access.source).toBe("file");
    await readsTheCluster(access.endpoint);
  });

  it("talks to the cluster as an in-cluster ServiceAccount would", async () => {
    const server = new URL(endpointFromKubeconfig(readKubeconfigFile(env("KUBECONFIG"))).endpoint.server);
    const dir = mkdtempSync(path.join(tmpdir(), "serviceaccount-"));
    writeFileSync(path.join(dir, "token"), `${env("DRIFTLESS_KUBE_TOKEN")}\n`);
    const ca = readKubeconfigFile(env("KUBECONFIG")).clusters[0]?.certificateAuthority ?? "";
    copyFileSync(ca, path.join(dir, "ca.crt"));
    const endpoint = inClusterEndpoint({
      env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
      serviceAccountDir: dir,
    });
    await readsTheCluster(endpoint);
  });

  it("gets 401 (a KubeError) for a wrong token", async () => {
    const kc = readKubeconfigFile(env("KUBECONFIG"));
    const wrong = parseKubeconfig(
      stringify({
        clusters: [
          {
            name: "local",
            cluster: {
              server: kc.clusters[0]?.server,
              "certificate-authority": kc.clusters[0]?.certificateAuthority,
            },
          },
        ],
        users: [{ name: "intruder", user: { token: "not-a-valid-token" } }],
        contexts: [{ name: "local", context: { cluster: "local", user: "intruder" } }],
        "current-context": "local",
      }),
    );
    const kube = new KubeHttp(endpointFromKubeconfig(wrong).endpoint);
    const err = await kube.request({ method: "GET", path: "/api/v1/namespaces" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).status).toBe(401);
  });
});
