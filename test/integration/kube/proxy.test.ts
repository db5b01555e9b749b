// The own client through an HTTP CONNECT proxy to the real kube-apiserver (TLS with the stack's CA inside
// the tunnel): the stack's kubeconfig with proxy-url added; requests and a watch both go through it.
import { afterAll, describe, expect, it } from "vitest";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { endpointFromKubeconfig, readKubeconfigFile } from "../../../shared/kube/kubeconfig.ts";
import { connectProxy } from "../../support/connect-proxy.ts";
import { env } from "../../support/env.ts";

const Namespace: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

let proxy: Awaited<ReturnType<typeof connectProxy>> | undefined;

afterAll(async () => {
  await proxy?.close();
});

describe("through an HTTP proxy, real API server", () => {
  it("reads, lists and watches over CONNECT tunnels, one per pooled connection", async () => {
    // Prepare
    proxy = await connectProxy();
    const proxyUrl = proxy.url;
    const connects = proxy.connects;
    const kc = readKubeconfigFile(env("KUBECONFIG"));
    const withProxy = { ...kc, clusters: kc.clusters.map((c) => ({ ...c, proxyUrl })) };
    const { endpoint } = endpointFromKubeconfig(withProxy, { env: {} });
    const kube = new Kube(endpoint);
    const apiHost = new URL(endpoint.server).host;
    // Act
    const first = await kube.get(Namespace, "default");
    const again = await kube.get(Namespace, "kube-system");
    const events: string[] = [];
    const watching = await kube.watch(Namespace, { timeoutSeconds: 1 }, (type, obj) =>
      events.push(`${type} ${obj.metadata.name}`),
    );
    await watching.ended;
    // Assess
    expect(first?.metadata.name).toBe("default");
    expect(again?.metadata.name).toBe("kube-system");
    expect(events).toContain("ADDED default");
    expect(connects.length).toBeGreaterThanOrEqual(1);
    expect(connects.length).toBeLessThanOrEqual(2);
    expect(new Set(connects)).toEqual(new Set([apiHost]));
  });
});
