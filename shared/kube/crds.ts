import { createHash } from "node:crypto";
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

const DRIFTLESS_DOMAIN = ".driftless.dev";
const PART_OF = "app.kubernetes.io/part-of";
/**
 * The digest of the CRD as driftless last wrote it: a CRD that carries the digest of what would be written
 * and is Established is left alone (no PUT the API server must validate, no wait). Every process start and
 * test file applies the same CRDs; only a changed CRD is written.
 */
const DIGEST = "driftless.dev/crd-digest";

const digestOf = (crd: object) => createHash("sha256").update(JSON.stringify(crd)).digest("hex").slice(0, 32);
const established = (crd: V1CustomResourceDefinition | undefined) =>
  crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CRDs written at once: the API server's per-CRD work overlaps (68 CRDs: 50.7 s serial, 30.0 s at 8, loaded). */
const CRD_CONCURRENCY = 8;

/** Runs fn over items, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Creates or updates CRDs and waits until the API server serves them (Established). */
export async function applyCrds(config: KubeConfig, crds: object[], timeoutMs = 30_000): Promise<void> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  const raw = config.makeApiClient(CustomObjectsApi);
  const toWait: string[] = [];
  await eachLimited(crds as V1CustomResourceDefinition[], CRD_CONCURRENCY, async (given) => {
    const name = given.metadata?.name ?? "";
    const digest = digestOf(given);
    const crd = {
      ...given,
      metadata: { ...given.metadata, annotations: { ...given.metadata?.annotations, [DIGEST]: digest } },
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const current = await api.readCustomResourceDefinition({ name });
        // Another owner's CRD of a shared group (Crossplane's Usages): theirs to keep, never overwritten.
        if (
          !crd.metadata?.name?.endsWith(DRIFTLESS_DOMAIN) &&
          current.metadata?.labels?.[PART_OF] !== "driftless"
        ) {
          toWait.push(name);
          return;
        }
        if (current.metadata?.annotations?.[DIGEST] === digest && established(current)) return;
        toWait.push(name);
        await raw.replaceClusterCustomObject({
          ...CRDS,
          name,
          body: {
            ...crd,
            metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion ?? "" },
          },
        });
        return;
      } catch (err) {
        if (isNotFound(err)) {
          try {
            toWait.push(name);
            await raw.createClusterCustomObject({ ...CRDS, body: crd });
            return;
          } catch (createErr) {
            if (!isConflict(createErr) || attempt > 3) throw createErr;
            continue;
          }
        }
        if (!isConflict(err) || attempt > 3) throw err;
      }
    }
  });
  const missing = await waitForCrds(config, [...new Set(toWait)], timeoutMs);
  if (missing.length > 0) throw new Error(`CRD ${missing[0]} not established after ${timeoutMs} ms`);
}

/**
 * Waits until the API server serves each named CRD (Established), at most `timeoutMs`; returns the names
 * still not established then (none when all are).
 */
export async function waitForCrds(config: KubeConfig, names: string[], timeoutMs: number): Promise<string[]> {
  const api = config.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + timeoutMs;
  const missing: string[] = [];
  await eachLimited(names, CRD_CONCURRENCY, async (name) => {
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (established(current)) return;
      if (Date.now() > deadline) {
        missing.push(name);
        return;
      }
      await sleep(100);
    }
  });
  return missing.sort();
}
