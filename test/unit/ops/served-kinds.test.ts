// What a function serves at run time (shared/ops/served-kinds.ts): read at cold start, read again after the
// refresh interval, the worker made again only when the generated kinds changed; a key of a generated kind
// not served reads the policies again (rate-limited) before it is told KindNotActivated.
import { describe, expect, it } from "vitest";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { generatedCloudOf, isGeneratedGroup } from "../../../shared/api/generated-catalog.ts";
import { apiVersionOf } from "../../../shared/api/meta.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import { NOT_ACTIVATED, notActivatedMessage } from "../../../shared/ops/activation-policy.ts";
import {
  type Served,
  ServedKinds,
  servedReconcile,
  unservedGenerated,
} from "../../../shared/ops/served-kinds.ts";
import { awsKinds } from "../../../shared/providers/aws/kinds.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { noopLogger, type ResourceKey } from "../../../shared/reconciler/contract.ts";
import { awsccSpec } from "../../support/awscc.ts";

const groupKinds = withNamespacedVariants(awsccProviders([awsccSpec("AWS::ResourceGroups::Group")]));
const served = (generated: boolean): Served => {
  const kinds = [...awsKinds, ...(generated ? groupKinds : [])];
  return { kinds, generated: generated ? groupKinds.map((k) => k.definition.plural).sort() : [] };
};
const groupKey = (namespaced = false): ResourceKey => {
  const def = groupKinds[namespaced ? 1 : 0]!.definition;
  return {
    apiVersion: apiVersionOf(def),
    kind: def.kind,
    name: "g",
    ...(namespaced ? { namespace: "a" } : {}),
  };
};

/** A clock, a policy switch and a count of reads and builds. */
function setup(refreshMs = 60_000) {
  const state = { now: 0, activated: false, reads: 0, builds: 0 };
  const kinds = new ServedKinds(
    async () => {
      state.reads++;
      return served(state.activated);
    },
    (s) => {
      state.builds++;
      return { generated: s.generated, reconcile: async () => ({ outcome: "in-sync" as const }) };
    },
    { refreshMs, now: () => state.now },
  );
  return { state, kinds };
}

describe("ServedKinds", () => {
  it("reads once per refresh interval and builds again only when the generated kinds change", async () => {
    const { state, kinds } = setup();
    await Promise.all([kinds.current(), kinds.current()]);
    expect(state).toMatchObject({ reads: 1, builds: 1 });
    state.now = 59_999;
    await kinds.current();
    expect(state.reads).toBe(1);
    state.now = 60_000;
    await kinds.current();
    expect(state).toMatchObject({ reads: 2, builds: 1 });
    state.activated = true;
    state.now = 120_000;
    expect((await kinds.current()).value.generated).toHaveLength(2);
    expect(state).toMatchObject({ reads: 3, builds: 2 });
  });

  it("tells which keys are of generated kinds not served", () => {
    expect(unservedGenerated(served(false), groupKey())).toBe(true);
    expect(unservedGenerated(served(false), groupKey(true))).toBe(true);
    expect(unservedGenerated(served(true), groupKey(true))).toBe(false);
    const queue = awsKinds[0]!.definition;
    expect(
      unservedGenerated(served(false), { apiVersion: apiVersionOf(queue), kind: queue.kind, name: "q" }),
    ).toBe(false);
    // A generated Google or Azure kind not served is told too (each cloud's generated group, both shapes).
    for (const apiVersion of [
      "secretmanager.googleapis.driftless.dev/v1alpha1",
      "secretmanager.googleapis.m.driftless.dev/v1alpha1",
      "storage.azure.gen.driftless.dev/v1alpha1",
    ])
      expect(unservedGenerated(served(true), { apiVersion, kind: "Secret", name: "s" }), apiVersion).toBe(
        true,
      );
  });
});

describe("a generated kind's group", () => {
  it("is told from a hand-written one's by one rule, with its cloud, in either shape and form", () => {
    const rows: Array<[string, string | undefined]> = [
      ["dynamodb.awscc", "aws"],
      ["dynamodb.awscc.m.driftless.dev", "aws"],
      ["storage.azure.gen.driftless.dev", "azure"],
      ["storage.azure.gen.m", "azure"],
      ["run.googleapis.driftless.dev", "gcp"],
      ["run.googleapis.m.driftless.dev", "gcp"],
      ["sqs.aws.driftless.dev", undefined],
      ["resources.azure.driftless.dev", undefined],
      ["pubsub.gcp.m.driftless.dev", undefined],
    ];
    for (const [group, cloud] of rows) {
      expect(generatedCloudOf(group), group).toBe(cloud);
      expect(isGeneratedGroup(group), group).toBe(cloud !== undefined);
    }
  });

  it("names the pattern that activates it, per cloud", () => {
    expect(
      notActivatedMessage("Table", "dynamodb.awscc.driftless.dev", "tables.dynamodb.awscc.driftless.dev"),
    ).toContain('spec.activate: ["dynamodb.table"]');
    expect(
      notActivatedMessage(
        "StorageAccount",
        "storage.azure.gen.driftless.dev",
        "storageaccounts.storage.azure.gen.driftless.dev",
      ),
    ).toContain('spec.activate: ["azure:storage.storageaccount"]');
    expect(
      notActivatedMessage(
        "Secret",
        "secretmanager.googleapis.m.driftless.dev",
        "secrets.secretmanager.googleapis.m.driftless.dev",
      ),
    ).toContain('spec.activate: ["secretmanager.googleapis.secret"]');
  });
});

describe("servedReconcile", () => {
  const told: string[] = [];
  const kube = { get: async () => ({ metadata: { name: "g", uid: "u1" } }) } as unknown as Kube;
  const events = { record: async (_o: unknown, _t: string, reason: string) => void told.push(reason) };

  it("reads the policies again for a key of an unserved generated kind, then serves it once activated", async () => {
    const { state, kinds } = setup();
    const reconcile = servedReconcile({
      served: kinds,
      kube,
      events,
      logger: noopLogger,
      recheckMs: 10_000,
      now: () => state.now,
    });
    // Not activated: told, settled; the policies were read again only because the recheck interval allowed it.
    told.length = 0;
    expect(await reconcile(groupKey())).toEqual({ outcome: "blocked" });
    expect(told).toEqual([NOT_ACTIVATED]);
    expect(state.reads).toBe(1);
    state.now = 5_000;
    await reconcile(groupKey());
    expect(state.reads).toBe(1); // within the recheck interval: no read
    // Activated meanwhile: the next key past the recheck interval reads again and is reconciled.
    state.activated = true;
    state.now = 10_000;
    expect(await reconcile(groupKey())).toEqual({ outcome: "in-sync" });
    expect(state.reads).toBe(2);
  });
});
