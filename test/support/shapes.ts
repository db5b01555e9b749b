// A kind in its two shapes (cluster-scoped and namespaced `.m.`) on the in-memory API server and the fake
// cloud, with a cloud-event declaration: the real engine labels objects (and marks their shapes,
// shared/reconciler/shape-marks.ts) and the real resolver resolves CloudTrail events about them, on one clock
// the test moves. The reference — what the resolver found before shapes had marks — is one label-selected
// LIST of every shape.
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../shared/api/cloud-events.ts";
import type { ManagedKindProvider } from "../../shared/api/external.ts";
import {
  clusterProviderConfigType,
  type ManagedResource,
  namespacedVariantOf,
  providerConfigType,
} from "../../shared/api/managed.ts";
import type { CloudTrailEvent } from "../../shared/cloud-events/cloudtrail.ts";
import { CloudEventResolver } from "../../shared/cloud-events/resolve.ts";
import type { ReconcileResult, ResourceKey } from "../../shared/reconciler/contract.ts";
import type { ReconcilerOptions } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { FakeCloud, widgetKind } from "./fake-cloud.ts";
import { MemoryApiServer } from "./memory-apiserver.ts";
import { Reconciler } from "./routed.ts";

export const EVENT_SOURCE = "aws.widgets";
export const EVENT_NAME = "SetWidgetAttributes";
export const NAMESPACE = "team-a";

export type Shape = "cluster" | "namespaced";

export function twoShapes(opts: { engine?: ReconcilerOptions } = {}) {
  const api = new MemoryApiServer();
  const kube = api.kube();
  const cloud = new FakeCloud();
  const clusterDef = widgetKind();
  const nsDef = namespacedVariantOf(clusterDef);
  const declared = (p: ManagedKindProvider): ManagedKindProvider => ({
    ...p,
    cloudEvents: {
      aws: {
        source: EVENT_SOURCE,
        eventNames: [EVENT_NAME],
        externalNames: (call) => [String(call.requestParameters.widgetName ?? "")].filter(Boolean),
      },
    },
  });
  const kinds = [declared(cloud.provider(clusterDef)), declared(cloud.provider(nsDef))];
  const defs = { cluster: clusterDef, namespaced: nsDef } as const;
  let clock = new Date("2026-01-01T00:00:00.000Z");
  for (const [t, namespace] of [
    [providerConfigType("aws"), undefined],
    [clusterProviderConfigType("aws"), undefined],
  ] as const) {
    api.seed(t, {
      apiVersion: `${t.group}/${t.version}`,
      kind: t.kind,
      metadata: { name: "default", ...(namespace ? { namespace } : {}) },
      spec: { credentials: { source: "InjectedIdentity" }, region: "eu-west-1" },
    });
  }
  const newEngine = () =>
    new Reconciler(kube, new KindRegistry(kinds), {
      now: () => clock,
      random: () => 0.5,
      rateLimit: false,
      retryBaseMs: 0,
      throttleBackoffMs: 0,
      ...opts.engine,
    });
  /** A resolver as one container of the event function builds it. */
  const newResolver = () =>
    new CloudEventResolver({
      kube,
      kinds,
      now: () => clock.getTime(),
      rateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
    });
  const keyOf = (shape: Shape, name: string): ResourceKey => ({
    apiVersion: defs[shape].apiVersion,
    kind: defs[shape].kind,
    name,
    ...(shape === "namespaced" ? { namespace: NAMESPACE } : {}),
  });
  let n = 0;
  return {
    api,
    kube,
    cloud,
    defs,
    kinds,
    newEngine,
    newResolver,
    keyOf,
    now: () => clock,
    advance(ms: number) {
      clock = new Date(clock.getTime() + ms);
    },
    /** A managed resource as `kubectl apply` makes it (no label yet). */
    apply(shape: Shape, name: string): ManagedResource {
      const def = defs[shape];
      return api.seed(def, {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name, ...(shape === "namespaced" ? { namespace: NAMESPACE } : {}) },
        spec: { forProvider: { region: "eu-west-1", size: 1 } },
      }) as unknown as ManagedResource;
    },
    /** Reconciles until the engine asks for nothing sooner than a poll, moving the clock by each requeue. */
    async settle(engine: Reconciler, shape: Shape, name: string, max = 20): Promise<ReconcileResult[]> {
      const out: ReconcileResult[] = [];
      for (let i = 0; i < max; i++) {
        const res = await engine.reconcile(keyOf(shape, name));
        out.push(res);
        if (res.outcome === "gone" || res.requeueAfterMs === undefined) break;
        clock = new Date(clock.getTime() + res.requeueAfterMs);
      }
      return out;
    },
    label(shape: Shape, name: string): string | undefined {
      const o = api.get<ManagedResource>(defs[shape], name, NAMESPACE);
      return o?.metadata.labels?.[EXTERNAL_KEY_LABEL];
    },
    /** The documented shape of an EventBridge CloudTrail event: another principal changed widget `name`. */
    event(name: string): CloudTrailEvent {
      n++;
      return {
        version: "0",
        id: `event-${n}`,
        "detail-type": "AWS API Call via CloudTrail",
        source: EVENT_SOURCE,
        account: "111122223333",
        region: "eu-west-1",
        detail: {
          eventSource: "widgets.amazonaws.com",
          eventName: EVENT_NAME,
          awsRegion: "eu-west-1",
          userIdentity: { arn: "arn:aws:iam::111122223333:user/someone-else" },
          requestParameters: { widgetName: name },
          responseElements: null,
        },
      };
    },
    /** What a LIST of every shape by the index label finds now: the resolver before shapes had marks. */
    async reference(name: string): Promise<string[]> {
      const out: string[] = [];
      for (const shape of ["cluster", "namespaced"] as const) {
        const def = defs[shape];
        const page = await kube.list<ManagedResource & { [k: string]: unknown }>(def, {
          labelSelector: `${EXTERNAL_KEY_LABEL}=${externalKeyOf(def, name)}`,
        });
        for (const o of page.items) out.push(`${shape}/${o.metadata.name}`);
      }
      return out.sort();
    },
    /** LIST requests made since `from` (an index into api.requests), and GETs of the shapes' marks. */
    countsSince(from: number) {
      const reqs = api.requests.slice(from);
      return {
        lists: reqs.filter((r) => r.method === "GET" && !r.name).length,
        markReads: reqs.filter((r) => r.method === "GET" && r.plural === "configmaps" && r.name).length,
        markWrites: reqs.filter((r) => r.method !== "GET" && r.plural === "configmaps").length,
      };
    },
  };
}

export type TwoShapes = ReturnType<typeof twoShapes>;

/** What a resolution found, as `shape/name`, sorted. */
export const foundOf = (keys: readonly ResourceKey[]) =>
  keys.map((k) => `${k.namespace ? "namespaced" : "cluster"}/${k.name}`).sort();
