// Kube's own wire client (shared/kube/http.ts) against the real kube-apiserver: what the server's Status
// answers become, and one pooled TLS connection for a run of requests.
import type { Socket } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { ConflictError, isNotFound, Kube, KubeError } from "../../../shared/kube/client.ts";
import { endpointFromKubeConfig } from "../../../shared/kube/kubeconfig-endpoint.ts";
import { kubeConfig, uniqueName } from "../../support/env.ts";

const NAMESPACE = "default";
const kube = new Kube(kubeConfig());
const created: string[] = [];
afterAll(async () => {
  for (const name of created) await kube.deleteSecret(NAMESPACE, name);
});

describe("Kube over its own HTTP client, real API server", () => {
  it("reads, replaces and deletes a Secret; a missing one is undefined, deleting it twice is fine", async () => {
    const name = uniqueName("http");
    created.push(name);
    expect(await kube.getSecret(NAMESPACE, name)).toBeUndefined();
    const made = await kube.createSecret({
      metadata: { name, namespace: NAMESPACE },
      data: { k: Buffer.from("v").toString("base64") },
    });
    expect(made.metadata?.uid).toBeTruthy();
    const read = await kube.getSecret(NAMESPACE, name);
    expect(Buffer.from(read?.data?.k ?? "", "base64").toString()).toBe("v");
    await kube.replaceSecret({ ...read, data: { k: Buffer.from("w").toString("base64") } });
    await kube.deleteSecret(NAMESPACE, name);
    await kube.deleteSecret(NAMESPACE, name);
    expect(await kube.getSecret(NAMESPACE, name)).toBeUndefined();
  });

  it("a stale resourceVersion is a ConflictError, an invalid object a 422 with the server's words", async () => {
    const name = uniqueName("http");
    created.push(name);
    const first = await kube.createSecret({ metadata: { name, namespace: NAMESPACE }, data: {} });
    await kube.replaceSecret({ ...first, data: { a: "YQ==" } });
    const stale = await kube.replaceSecret({ ...first, data: { b: "Yg==" } }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect(stale).toMatchObject({ status: 409, reason: "Conflict" });
    expect((stale as Error).message).toMatch(/^replace Secret: Operation cannot be fulfilled on secrets/);

    const invalid = await kube
      .createSecret({ metadata: { name: "Not_A_DNS_Name", namespace: NAMESPACE } })
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(KubeError);
    expect(invalid).toMatchObject({ status: 422, reason: "Invalid" });
    expect((invalid as Error).message).toContain("Not_A_DNS_Name");

    const missingNs = await kube.listEvents("no-such-namespace-here").catch((e: unknown) => e);
    // Listing in a namespace that does not exist is an empty list, as kubectl shows it.
    expect(missingNs).toEqual([]);
    expect(
      isNotFound(
        await kube
          .replaceSecret({ metadata: { name: uniqueName("gone"), namespace: NAMESPACE } })
          .catch((e: unknown) => e),
      ),
    ).toBe(true);
  });

  it("sends a run of requests over one TLS connection", async () => {
    const endpoint = endpointFromKubeConfig(kubeConfig());
    const { agent } = await endpoint.prepare();
    let connections = 0;
    const original = (agent as unknown as { createConnection: (...a: unknown[]) => Socket }).createConnection;
    (agent as unknown as { createConnection: (...a: unknown[]) => Socket }).createConnection = function (
      ...args: unknown[]
    ) {
      connections++;
      return original.apply(this, args);
    };
    const pooled = new Kube(endpoint);
    for (let i = 0; i < 20; i++) await pooled.getSecret(NAMESPACE, "driftless-no-such-secret");
    expect(pooled.stats.gets).toBe(20);
    expect(connections).toBe(1);
  });
});
