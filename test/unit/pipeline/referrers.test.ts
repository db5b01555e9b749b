// The forwarder's referrer index: a resource turning Ready forwards, at once and once per turn, the keys of
// the resources waiting for it by reference (not yet resolved); nothing else. First the index as a table,
// then the forwarder with it over a cluster whose watch shows the target's status-only change (which the
// forwarder's no-op detection drops for the target itself).
import { afterEach, describe, expect, it } from "vitest";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube, type KubeObject, type WatchEventType } from "../../../shared/kube/client.ts";
import { Forwarder } from "../../../shared/pipeline/forwarder.ts";
import { ReferrerIndex, type SeenObject } from "../../../shared/pipeline/referrers.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import { parentType, widgetKind } from "../../support/fake-cloud.ts";

const widgets = widgetKind();
const parents = parentType();
const W = { apiVersion: widgets.apiVersion, kind: widgets.kind };
const P = { apiVersion: parents.apiVersion, kind: parents.kind };

const widget = (name: string, forProvider: Record<string, unknown>, namespace?: string): SeenObject => ({
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec: { forProvider },
});
const parent = (name: string, ready: boolean, namespace?: string): SeenObject => ({
  metadata: { name, ...(namespace ? { namespace } : {}) },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const names = (keys: { name: string; namespace?: string }[]) =>
  keys.map((k) => (k.namespace ? `${k.namespace}/${k.name}` : k.name));

describe("ReferrerIndex", () => {
  it("forwards a waiting referrer when its target turns Ready, once per turn", () => {
    const index = new ReferrerIndex([widgets]);
    expect(index.seen(W, widget("w", { parentRef: { name: "p" } }))).toEqual([]);
    expect(index.waiting).toBe(1);

    const turns = [
      index.seen(P, parent("p", false)),
      index.seen(P, parent("p", true)),
      index.seen(P, parent("p", true)), // another status write while Ready
      index.seen(P, parent("p", false)),
      index.seen(P, parent("p", true)),
    ].map(names);

    expect(turns).toEqual([[], ["w"], [], [], ["w"]]);
  });

  it("forgets a referrer once its field is resolved, or once it is gone", () => {
    const index = new ReferrerIndex([widgets]);
    index.seen(W, widget("resolved-later", { parentRef: { name: "p" } }));
    index.seen(W, widget("gone", { parentRef: { name: "p" } }));
    index.seen(W, widget("resolved-later", { parentRef: { name: "p" }, parentId: "parent-1" }));
    index.gone(W, { name: "gone" });
    index.seen(W, widget("resolved", { parentRef: { name: "p" }, parentId: "parent-1" }));

    expect(index.seen(P, parent("p", true))).toEqual([]);
    expect(index.waiting).toBe(0);
  });

  it("keeps a resolved reference with policy resolve Always waiting, and indexes every name of a list", () => {
    const index = new ReferrerIndex([widgets]);
    index.seen(
      W,
      widget("always", { parentRef: { name: "p", policy: { resolve: "Always" } }, parentId: "old" }),
    );
    index.seen(W, widget("members", { memberRefs: [{ name: "p" }, { name: "q" }] }));

    expect(names(index.seen(P, parent("p", true))).sort()).toEqual(["always", "members"]);
    expect(names(index.seen(P, parent("q", true)))).toEqual(["members"]);
  });

  it("does not index selectors (which object they match is not known without reading it)", () => {
    const index = new ReferrerIndex([widgets]);
    index.seen(W, widget("w", { parentSelector: { matchLabels: { app: "a" } } }));
    expect(index.waiting).toBe(0);
  });

  it("matches a namespaced reference only in the referrer's own namespace", () => {
    const namespacedParent = { ...parents, namespaced: true };
    const index = new ReferrerIndex([
      { ...W, references: [{ ...widgets.references[0]!, to: namespacedParent }] },
    ]);
    index.seen(W, widget("w", { parentRef: { name: "p" } }, "team-a"));

    expect(index.seen(P, parent("p", true, "team-b"))).toEqual([]);
    expect(index.seen(P, parent("p", true, "team-a"))).toEqual([{ ...W, name: "w", namespace: "team-a" }]);
  });
});

/** A cluster with one list answer per kind and a watch on Parents that shows `events` once `after` resolves. */
function cluster(
  objects: Map<string, KubeObject[]>,
  events: Array<[WatchEventType, KubeObject]>,
  after: Promise<void>,
) {
  const kube = {
    async list(t: ResourceType) {
      return { items: structuredClone(objects.get(t.kind) ?? []), resourceVersion: "1" };
    },
    async watch(
      t: ResourceType,
      _opts: unknown,
      onEvent: (type: WatchEventType, obj: KubeObject) => void,
      signal: AbortSignal,
    ) {
      if (t.kind === "Parent") {
        await after;
        for (const [type, obj] of events.splice(0)) onEvent(type, structuredClone(obj));
      }
      return {
        ended: new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
      };
    },
  };
  // A Kube as far as the forwarder can tell (it takes a Kube or a kubeconfig).
  return Object.assign(Object.create(Kube.prototype) as Kube, kube);
}

const forwarders: Forwarder[] = [];
afterEach(async () => {
  await Promise.all(forwarders.splice(0).map((f) => f.stop()));
});

describe("the forwarder with a referrer index", () => {
  const asObject = (kind: string, o: SeenObject, generation = 1): KubeObject =>
    ({
      apiVersion: kind === "Widget" ? W.apiVersion : P.apiVersion,
      kind,
      ...o,
      metadata: { ...o.metadata, uid: `uid-${o.metadata.name}`, generation, resourceVersion: "2" },
    }) as KubeObject;

  async function run(withIndex: boolean) {
    const objects = new Map([
      ["Widget", [asObject("Widget", widget("w", { parentRef: { name: "p" } }))]],
      ["Parent", [asObject("Parent", parent("p", false))]],
    ]);
    // The engine's status write: the same metadata, Ready=True (the fingerprint does not change).
    const events: Array<[WatchEventType, KubeObject]> = [["MODIFIED", asObject("Parent", parent("p", true))]];
    const sent: ReconcileMessage[] = [];
    // The status write comes after the first lists were forwarded (else the outbox merges the two sends).
    let listsSent = () => {};
    const after = new Promise<void>((r) => {
      listsSent = r;
    });
    const forwarder = new Forwarder({
      kube: cluster(objects, events, after),
      types: [widgets, parents],
      sink: {
        async send(messages) {
          sent.push(...messages);
          if (sent.length >= 2) listsSent();
          return { sent: messages.length, failed: [] };
        },
      },
      coalesceMs: 1,
      maxCoalesceMs: 1,
      minIntervalMs: 0,
      ...(withIndex ? { referrers: new ReferrerIndex([widgets]) } : {}),
    });
    forwarders.push(forwarder);
    await forwarder.start();
    await new Promise((r) => setTimeout(r, 50));
    return { sent: sent.map((m) => `${m.kind}/${m.name}`), stats: forwarder.stats() };
  }

  it("forwards the waiting Widget again when its Parent turns Ready", async () => {
    const { sent, stats } = await run(true);
    // The first lists forward both; the Parent's status-only change forwards the Widget once more.
    expect(sent).toEqual(["Widget/w", "Parent/p", "Widget/w"]);
    expect(stats.referrersForwarded).toBe(1);
    expect(stats.droppedNoop).toBe(1);
  });

  it("without it, the Parent's status-only change forwards nothing", async () => {
    const { sent } = await run(false);
    expect(sent).toEqual(["Widget/w", "Parent/p"]);
  });
});
