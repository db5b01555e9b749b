import {
  ApiextensionsV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { isConflict, isNotFound } from "./client.ts";

// Writes go through the untyped custom-objects client: the typed ApiextensionsV1Api serializes plain objects
// by its model's property names (`_enum`, `_default`, `xKubernetesPreserveUnknownFields`) and silently drops
// `enum`, `default` and every `x-kubernetes-*` key of a schema written as plain JSON.
const CRDS = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates or updates CRDs and waits until the API server serves them (Established). */
export async function applyCrds(config: KubeConfig, crds: object[], timeoutMs = 30_000): Promise<void> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  const raw = config.makeApiClient(CustomObjectsApi);
  for (const crd of crds as V1CustomResourceDefinition[]) {
    const name = crd.metadata?.name ?? "";
    for (let attempt = 0; ; attempt++) {
      try {
        const current = await api.readCustomResourceDefinition({ name });
        await raw.replaceClusterCustomObject({
          ...CRDS,
          name,
          body: {
            ...crd,
            metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion ?? "" },
          },
        });
        break;
      } catch (err) {
        if (isNotFound(err)) {
          try {
            await raw.createClusterCustomObject({ ...CRDS, body: crd });
            break;
          } catch (createErr) {
            if (!isConflict(createErr) || attempt > 3) throw createErr;
            continue;
          }
        }
        if (!isConflict(err) || attempt > 3) throw err;
      }
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds as V1CustomResourceDefinition[]) {
    const name = crd.metadata?.name ?? "";
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name });
      if (current.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} not established after ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}
