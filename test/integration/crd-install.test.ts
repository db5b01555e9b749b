// The CRD installer on the real API server: what it costs the server. `npm start` installs ~70 CRDs while
// `driftless run --no-crds` waits for them; both used to GET every CRD every 100 ms until Established, load
// that landed on the API server while it was establishing them. Now: one read and one write per CRD, and
// one watch for the wait; a CRD already Established as it would be written is not written again.
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { Kube, type KubeObject } from "../../shared/kube/client.ts";
import { applyCrds, waitForCrds } from "../../shared/kube/crds.ts";
import { kubeConfig } from "../support/env.ts";

const CRD_TYPE = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};
const group = `t${randomBytes(4).toString("hex")}.example.com`;

/** A minimal cluster-scoped CRD of a throwaway group, labelled as driftless's (so the installer updates it). */
const crd = (kind: string) => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: {
    name: `${kind.toLowerCase()}s.${group}`,
    labels: { "app.kubernetes.io/part-of": "driftless" },
  },
  spec: {
    group,
    scope: "Cluster",
    names: { plural: `${kind.toLowerCase()}s`, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      },
    ],
  },
});
const crds = ["Widget", "Gadget", "Gizmo"].map(crd);

afterAll(async () => {
  const kube = new Kube(kubeConfig());
  for (const c of crds) await kube.delete(CRD_TYPE, c.metadata.name);
});

describe("applyCrds", () => {
  it("reads and writes each CRD once and waits with one watch, not a GET per CRD per poll", async () => {
    // Prepare
    const kube = new Kube(kubeConfig());

    // Act
    await applyCrds(kube, crds);

    // Assess
    expect(kube.stats.byOperation).toEqual({
      "get CustomResourceDefinition": 3,
      "create CustomResourceDefinition": 3,
      "watch CustomResourceDefinition": 1,
    });
  });

  it("leaves CRDs that are Established as written alone: one read each, no write", async () => {
    const kube = new Kube(kubeConfig());
    await applyCrds(kube, crds);
    kube.resetStats();

    await applyCrds(kube, crds);

    expect(kube.stats.byOperation).toEqual({
      "get CustomResourceDefinition": 3,
      "watch CustomResourceDefinition": 1,
    });
  });

  it("updates CRDs that changed with one read and one write each, and the wait sees them at once", async () => {
    const kube = new Kube(kubeConfig());
    await applyCrds(kube, crds);
    kube.resetStats();
    const changed = crds.map((c) => ({
      ...c,
      metadata: { ...c.metadata, labels: { ...c.metadata.labels, "crd-install-test": "changed" } },
    }));

    await applyCrds(kube, changed);

    expect(kube.stats.byOperation).toEqual({
      "get CustomResourceDefinition": 3,
      "replace CustomResourceDefinition": 3,
      "watch CustomResourceDefinition": 1,
    });
    const stored = await kube.get<KubeObject>(CRD_TYPE, crds[0]?.metadata.name ?? "");
    expect(stored?.metadata.labels?.["crd-install-test"]).toBe("changed");
  });
});

describe("waitForCrds", () => {
  it("names the CRDs not established by the deadline, and watches again only while waiting", async () => {
    const kube = new Kube(kubeConfig());
    const absent = `nothings.${group}`;

    const missing = await waitForCrds(kube, [absent, crds[0]?.metadata.name ?? ""], 2_000);

    expect(missing).toEqual([absent]);
    // The server ends a watch at its timeoutSeconds; a handful of watches in 2 s, never a poll per CRD.
    expect(kube.stats.byOperation["get CustomResourceDefinition"]).toBeUndefined();
    expect(kube.stats.byOperation["watch CustomResourceDefinition"]).toBeLessThanOrEqual(3);
  });
});
