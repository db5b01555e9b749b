import { ApiextensionsV1Api, type KubeConfig, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { isConflict, isNotFound } from "./client.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates or updates CRDs and waits until the API server serves them (Established). */
export async function applyCrds(config: KubeConfig, crds: object[], timeoutMs = 30_000): Promise<void> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  for (const crd of crds as V1CustomResourceDefinition[]) {
    const name = crd.metadata?.name ?? "";
    for (let attempt = 0; ; attempt++) {
      try {
        const current = await api.readCustomResourceDefinition({ name });
        await api.replaceCustomResourceDefinition({
          name,
          body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion ?? "" } },
        });
        break;
      } catch (err) {
        if (isNotFound(err)) {
          try {
            await api.createCustomResourceDefinition({ body: crd });
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
