// The ProviderConfig users `driftless run` knows from its forwarder's lists and watches: a count per kind and
// ProviderConfig that follows every change of reference and every deletion, and that is only given when the
// kind is known (its CRD not served yet, or a complete list seen); otherwise undefined, and the reconciler
// lists that kind.
import { describe, expect, it } from "vitest";
import type { ManagedResource, ProviderConfigTarget } from "../../../shared/api/managed.ts";
import { ProviderConfigUsers } from "../../../shared/pipeline/provider-config-users.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

const defOf = (kind: string, scope: "Cluster" | "Namespaced") => {
  const def = managedKinds
    .map((k) => k.definition)
    .find((d) => d.kind === kind && d.cloud === "aws" && d.scope === scope);
  if (!def) throw new Error(`no aws ${scope} ${kind}`);
  return def;
};
const queue = defOf("Queue", "Cluster");
const nsQueue = defOf("Queue", "Namespaced");

const mr = (name: string, providerConfigRef?: { name: string; kind?: string }, namespace?: string) =>
  ({
    metadata: { name, ...(namespace ? { namespace } : {}) },
    spec: { forProvider: {}, ...(providerConfigRef ? { providerConfigRef } : {}) },
  }) as ManagedResource;
const pc = (name: string): ProviderConfigTarget => ({ type: queue.providerConfig, name });

type Step = (u: ProviderConfigUsers) => void;
const listedWith =
  (...objs: ManagedResource[]): Step =>
  (u) => {
    for (const o of objs) u.seen(queue, o);
    u.listed(queue);
  };

describe("ProviderConfigUsers", () => {
  const rows: { name: string; steps: Step[]; target: ProviderConfigTarget; want: number | undefined }[] = [
    {
      name: "a kind never listed is not known",
      steps: [(u) => u.seen(queue, mr("a"))],
      target: pc("default"),
      want: undefined,
    },
    {
      name: "a kind whose CRD is not served has no users",
      steps: [(u) => u.notServed(queue)],
      target: pc("default"),
      want: 0,
    },
    {
      name: "a kind served again is not known until it is listed",
      steps: [(u) => u.notServed(queue), (u) => u.served(queue)],
      target: pc("default"),
      want: undefined,
    },
    {
      name: "after a complete list: the users of that ProviderConfig (no ref means default)",
      steps: [listedWith(mr("a"), mr("b", { name: "team" }), mr("c", { name: "team" }))],
      target: pc("team"),
      want: 2,
    },
    {
      name: "no ref counts for default",
      steps: [listedWith(mr("a"), mr("b", { name: "team" }))],
      target: pc("default"),
      want: 1,
    },
    {
      name: "a user deleted after the list is no longer counted",
      steps: [
        listedWith(mr("a", { name: "team" }), mr("b", { name: "team" })),
        (u) => u.gone(queue, { name: "a" }),
      ],
      target: pc("team"),
      want: 1,
    },
    {
      name: "a user moved to another ProviderConfig counts there only",
      steps: [listedWith(mr("a", { name: "team" })), (u) => u.seen(queue, mr("a", { name: "other" }))],
      target: pc("team"),
      want: 0,
    },
    {
      name: "the same object seen again (a status write) is counted once",
      steps: [listedWith(mr("a", { name: "team" })), (u) => u.seen(queue, mr("a", { name: "team" }))],
      target: pc("team"),
      want: 1,
    },
    {
      name: "a user of another kind does not count for this kind",
      steps: [listedWith(), (u) => u.seen(nsQueue, mr("a", { name: "team" }, "ns"))],
      target: pc("team"),
      want: 0,
    },
    {
      name: "a user created after the list (a watch event) counts",
      steps: [listedWith(), (u) => u.seen(queue, mr("late", { name: "team" }))],
      target: pc("team"),
      want: 1,
    },
    {
      name: "gone twice, or gone unknown, never goes below zero",
      steps: [
        listedWith(mr("a", { name: "team" })),
        (u) => u.gone(queue, { name: "a" }),
        (u) => u.gone(queue, { name: "a" }),
        (u) => u.gone(queue, { name: "x" }),
      ],
      target: pc("team"),
      want: 0,
    },
  ];
  for (const row of rows)
    it(row.name, () => {
      const users = new ProviderConfigUsers([queue, nsQueue]);
      for (const step of row.steps) step(users);
      expect(users.count(queue, row.target)).toBe(row.want);
    });

  it("counts a namespaced kind's users per namespaced ProviderConfig, and its ClusterProviderConfig users apart", () => {
    const users = new ProviderConfigUsers([queue, nsQueue]);
    for (const o of [
      mr("a", { name: "team", kind: "ProviderConfig" }, "ns-1"),
      mr("b", { name: "team", kind: "ProviderConfig" }, "ns-2"),
      mr("c", { name: "team", kind: "ClusterProviderConfig" }, "ns-1"),
      mr("d", undefined, "ns-1"),
    ])
      users.seen(nsQueue, o);
    users.listed(nsQueue);
    const kinds = nsQueue.providerConfigKinds;
    if (!kinds) throw new Error("a namespaced kind has its ProviderConfig kinds");

    expect([
      users.count(nsQueue, { type: kinds.ProviderConfig, name: "team", namespace: "ns-1" }),
      users.count(nsQueue, { type: kinds.ClusterProviderConfig, name: "team" }),
      users.count(nsQueue, { type: kinds.ClusterProviderConfig, name: "default" }),
    ]).toEqual([1, 1, 1]);
  });

  it("knows nothing of a kind it was not given", () => {
    const users = new ProviderConfigUsers([queue]);
    users.notServed(nsQueue);
    users.listed(nsQueue);
    expect(users.count(nsQueue, pc("default"))).toBeUndefined();
  });
});
