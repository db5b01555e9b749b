import { createHash } from "node:crypto";
import type { KubeConfig } from "@kubernetes/client-node";
import type { ResourceType } from "../api/meta.ts";
import { isConflict, Kube, type KubeObject } from "./client.ts";

// Through Kube (one keep-alive pool, counted requests, plain JSON): client-node's generated APIs open a new
// TLS connection per request, and its typed model drops `enum`, `default` and `x-kubernetes-*` schema keys.
const CRD: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};

interface StoredCrd extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

const DRIFTLESS_DOMAIN = ".driftless.dev";
const PART_OF = "app.kubernetes.io/part-of";
/**
 * The digest of the CRD as driftless last wrote it: a CRD that carries the digest of what would be written
 * and is Established is left alone (no PUT the API server must validate and establish again). Every process
 * start and test file applies the same CRDs; only a changed CRD is written.
 */
const DIGEST = "driftless.dev/crd-digest";
const digestOf = (crd: object) => createHash("sha256").update(JSON.stringify(crd)).digest("hex").slice(0, 32);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CRDs written at once: the API server's per-CRD work overlaps (68 CRDs: 50.7 s serial, 30.0 s at 8, loaded). */
const CRD_CONCURRENCY = 8;
/** Pause before watching again when the server ended the CRD watch early or the stream broke. */
const REWATCH_MS = 250;

/** Runs fn over items, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

const kubeOf = (c: KubeConfig | Kube) => (c instanceof Kube ? c : new Kube(c));
const nameOf = (crd: object) => (crd as { metadata?: { name?: string } }).metadata?.name ?? "";

/**
 * Creates or updates CRDs (one GET and one write each), without waiting for them to be served. Another
 * owner's CRD of a shared group (Crossplane's Usages) is theirs to keep, never overwritten.
 */
export async function writeCrds(config: KubeConfig | Kube, crds: object[]): Promise<void> {
  const kube = kubeOf(config);
  await eachLimited(crds, CRD_CONCURRENCY, async (given) => {
    const name = nameOf(given);
    const g = given as KubeObject;
    const digest = digestOf(given);
    const crd = {
      ...g,
      metadata: { ...g.metadata, annotations: { ...g.metadata.annotations, [DIGEST]: digest } },
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const current = await kube.get<StoredCrd>(CRD, name);
        if (!current) {
          await kube.create(CRD, crd);
          return;
        }
        if (!name.endsWith(DRIFTLESS_DOMAIN) && current.metadata.labels?.[PART_OF] !== "driftless") return;
        if (current.metadata.annotations?.[DIGEST] === digest && established(current)) return;
        const c = crd;
        await kube.replace(CRD, {
          ...c,
          metadata: { ...c.metadata, resourceVersion: current.metadata.resourceVersion ?? "" },
        });
        return;
      } catch (err) {
        // Someone else created or changed it between our read and write: read again.
        if (!isConflict(err) || attempt > 3) throw err;
      }
    }
  });
}

/** Creates or updates CRDs and waits until the API server serves them (Established). */
export async function applyCrds(
  config: KubeConfig | Kube,
  crds: object[],
  timeoutMs = 30_000,
): Promise<void> {
  const kube = kubeOf(config);
  await writeCrds(kube, crds);
  const missing = await waitForCrds(kube, crds.map(nameOf), timeoutMs);
  if (missing.length > 0) throw new Error(`CRD ${missing[0]} not established after ${timeoutMs} ms`);
}

const established = (crd: StoredCrd) =>
  crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false;

/**
 * Waits until the API server serves each named CRD (Established), at most `timeoutMs`; returns the names
 * still not established then (none when all are). One watch on CRDs, not a GET per CRD per poll: while the
 * server establishes dozens of CRDs, polling competed with it for the CPU (and `npm start` polled twice).
 * `onEstablished` is told each name as it is served, so a caller can use one CRD before all are.
 */
export async function waitForCrds(
  config: KubeConfig | Kube,
  names: string[],
  timeoutMs: number,
  onEstablished?: (name: string) => void,
): Promise<string[]> {
  const kube = kubeOf(config);
  const deadline = Date.now() + timeoutMs;
  const waiting = new Set(names);
  while (waiting.size > 0 && Date.now() < deadline) {
    const abort = new AbortController();
    let done!: () => void;
    const allEstablished = new Promise<void>((r) => {
      done = r;
    });
    try {
      // No resourceVersion: the server first sends every existing CRD (ADDED), then the changes.
      const open = await kube.watch<StoredCrd>(
        CRD,
        { timeoutSeconds: Math.max(1, Math.ceil((deadline - Date.now()) / 1000)) },
        (type, crd) => {
          if (
            (type === "ADDED" || type === "MODIFIED") &&
            established(crd) &&
            waiting.has(crd.metadata.name)
          ) {
            waiting.delete(crd.metadata.name);
            onEstablished?.(crd.metadata.name);
          }
          if (waiting.size === 0) done();
        },
        abort.signal,
      );
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      await Promise.race([allEstablished, open.ended.catch(() => undefined)]);
      clearTimeout(timer);
    } catch {
      // Refused or broken (a restarting API server): watch again until the deadline.
    } finally {
      abort.abort();
    }
    if (waiting.size > 0 && Date.now() < deadline) await sleep(REWATCH_MS);
  }
  return [...waiting].sort();
}
