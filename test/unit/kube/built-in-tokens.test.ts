// A kubeconfig user whose exec plugin (aws eks get-token, gke-gcloud-auth-plugin) is replaced by a
// built-in token carries the function's own cloud identity (an STS-presigned URL, a Google access
// token). It is sent only over verified TLS: never with insecure-skip-tls-verify, never over plain http.
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { loadClusterAccess } from "../../../shared/kube/cluster-auth.ts";
import { KubeconfigError } from "../../../shared/kube/kubeconfig.ts";

const CLOUD_TOKEN = "k8s-aws-v1.cloud-identity-s3cr3t";
const CA = Buffer.from("-----BEGIN CERTIFICATE-----\nY2E=\n-----END CERTIFICATE-----\n").toString("base64");

const PLUGINS = {
  eks: { command: "aws", args: ["eks", "get-token", "--cluster-name", "prod"] },
  gke: { command: "gke-gcloud-auth-plugin", args: [] },
} as const;

function kubeconfig(cluster: Record<string, unknown>, plugin: keyof typeof PLUGINS) {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [
      {
        name: "u",
        user: { exec: { apiVersion: "client.authentication.k8s.io/v1beta1", ...PLUGINS[plugin] } },
      },
    ],
    contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
    "current-context": "ctx",
  });
}

const tokens = {
  eks: () => async () => CLOUD_TOKEN,
  gke: () => async () => CLOUD_TOKEN,
};

describe("built-in EKS/GKE tokens", () => {
  it.each([
    ["eks", { server: "https://k8s.example.invalid", "insecure-skip-tls-verify": true }],
    ["gke", { server: "https://k8s.example.invalid", "insecure-skip-tls-verify": true }],
    ["eks", { server: "http://k8s.example.invalid:8080", "insecure-skip-tls-verify": true }],
    ["gke", { server: "http://127.0.0.1:8080", "insecure-skip-tls-verify": true }],
  ] as const)("%s: refused for %j, with a message that says why and what to do", async (plugin, cluster) => {
    const err = await loadClusterAccess({ kubeconfigYaml: kubeconfig(cluster, plugin), tokens }).catch(
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(KubeconfigError);
    expect((err as Error).message).toMatch(/built-in .*token/);
    expect((err as Error).message).toMatch(/insecure-skip-tls-verify|plain http/);
    expect((err as Error).message).toMatch(/certificate-authority/);
    expect((err as Error).message).not.toContain(CLOUD_TOKEN);
  });

  it.each(["eks", "gke"] as const)("%s: sent over verified TLS", async (plugin) => {
    const access = await loadClusterAccess({
      kubeconfigYaml: kubeconfig(
        { server: "https://k8s.example.invalid", "certificate-authority-data": CA },
        plugin,
      ),
      tokens,
    });
    expect(access.replacedUsers).toEqual(["u"]);
    expect((await access.endpoint.prepare()).headers).toMatchObject({
      Authorization: `Bearer ${CLOUD_TOKEN}`,
    });
  });

  it("leaves a user's own static token alone (their choice, client-go's behaviour)", async () => {
    const yaml = stringify({
      clusters: [
        { name: "c", cluster: { server: "https://k8s.example.invalid", "insecure-skip-tls-verify": true } },
      ],
      users: [{ name: "u", user: { token: "static" } }],
      contexts: [{ name: "ctx", context: { cluster: "c", user: "u" } }],
      "current-context": "ctx",
    });
    const access = await loadClusterAccess({ kubeconfigYaml: yaml, tokens });
    expect((await access.endpoint.prepare()).headers).toMatchObject({ Authorization: "Bearer static" });
  });
});
