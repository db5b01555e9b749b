// Usages in the engine table: a managed resource in use is never deleted — not in the cloud, not from the
// cluster — while a Usage holds it, its Ready condition says by what, and deletion proceeds once the user
// is gone. Widgets stand for both ends (the `of` and the `by`), on the in-memory API server.
import { describe, expect, it } from "vitest";
import { MANAGED_FINALIZER } from "../../../shared/api/meta.ts";
import { ClusterUsageType, type UsageObject, UsageType } from "../../../shared/api/protection/usage.ts";
import { Reason } from "../../../shared/reconciler/reconciler.ts";
import { type Engine, engine } from "../../support/engine.ts";
import { serverError } from "../../support/memory-apiserver.ts";

const GRACE_MS = 30_000;

async function ready(e: Engine, name: string, extra = {}) {
  e.apply(name, { size: 1 }, extra);
  await e.settle(name);
  e.advance(GRACE_MS * 2);
  expect(e.condition(name, "Ready")?.status).toBe("True");
}

/** A ClusterUsage (widgets are cluster-scoped) of `of`, by `by` when given, bound to it like the Usage reconciler does. */
function usage(
  e: Engine,
  name: string,
  spec: { of: string | { matchLabels: Record<string, string> }; by?: string; reason?: string },
  opts: { bound?: boolean } = {},
): UsageObject {
  const ref = (n: string | { matchLabels: Record<string, string> }) =>
    typeof n === "string" ? { resourceRef: { name: n } } : { resourceSelector: n };
  const by = spec.by ? e.get(spec.by) : undefined;
  return e.api.seed(ClusterUsageType, {
    apiVersion: "protection.crossplane.io/v1beta1",
    kind: "ClusterUsage",
    metadata: {
      name,
      ...(opts.bound && spec.by
        ? {
            ownerReferences: [
              { apiVersion: e.def.apiVersion, kind: e.def.kind, name: spec.by, uid: by?.metadata.uid ?? "u" },
            ],
          }
        : {}),
    },
    spec: {
      of: { apiVersion: e.def.apiVersion, kind: e.def.kind, ...ref(spec.of) },
      ...(spec.by
        ? { by: { apiVersion: e.def.apiVersion, kind: e.def.kind, resourceRef: { name: spec.by } } }
        : {}),
      ...(spec.reason ? { reason: spec.reason } : {}),
    },
  });
}

/** The object is held: nothing deleted, finalizer kept, Ready says by what. */
async function expectHeld(e: Engine, name: string, by: string) {
  const res = await e.reconcile(name);
  expect(res.outcome).toBe("deleting");
  expect(res.requeueAfterMs).toBeGreaterThan(0);
  expect(e.cloud.calls.delete).toBe(0);
  expect(
    e.cloud.resources.has(e.get(name)?.metadata.annotations?.["crossplane.io/external-name"] ?? ""),
  ).toBe(true);
  expect(e.get(name)?.metadata.finalizers).toContain(MANAGED_FINALIZER);
  expect(e.condition(name, "Ready")).toMatchObject({ status: "False", reason: "Deleting" });
  expect(e.condition(name, "Ready")?.message).toContain(`waiting: in use by ${by}`);
  expect(e.condition(name, "Synced")?.status).toBe("True");
}

interface Row {
  name: string;
  run(e: Engine): Promise<void>;
}

const rows: Row[] = [
  {
    name: "a resource used by another is not deleted while the user exists; deleting both deletes the user's first",
    async run(e) {
      await ready(e, "vpc");
      await ready(e, "subnet");
      usage(e, "subnet-uses-vpc", { of: "vpc", by: "subnet" }, { bound: true });
      await e.delete("vpc");
      await e.delete("subnet");
      // The VPC reconciles first, again and again: it waits, and says for what.
      await expectHeld(e, "vpc", "Widget/subnet (ClusterUsage subnet-uses-vpc)");
      await expectHeld(e, "vpc", "Widget/subnet");
      await e.settle("subnet");
      expect(e.get("subnet")).toBeUndefined();
      expect(e.cloud.calls.delete).toBe(1);
      await e.settle("vpc");
      expect(e.get("vpc")).toBeUndefined();
      expect(e.cloud.calls.delete).toBe(2);
      expect(e.cloud.resources.size).toBe(0);
    },
  },
  {
    name: "a Usage with only a reason protects the resource until the Usage itself is deleted",
    async run(e) {
      await ready(e, "db");
      usage(e, "keep-db", { of: "db", reason: "production database" });
      await e.delete("db");
      await expectHeld(e, "db", 'ClusterUsage keep-db: "production database"');
      await e.kube.delete(ClusterUsageType, "keep-db");
      await e.settle("db");
      expect(e.get("db")).toBeUndefined();
      expect(e.cloud.calls.delete).toBe(1);
    },
  },
  {
    name: "deletionPolicy Orphan: a resource in use stays in the cluster too until nothing uses it",
    async run(e) {
      await ready(e, "db", { spec: { deletionPolicy: "Orphan" } });
      usage(e, "keep-db", { of: "db", reason: "in use" });
      await e.delete("db");
      await expectHeld(e, "db", "ClusterUsage keep-db");
      await e.kube.delete(ClusterUsageType, "keep-db");
      await e.settle("db");
      expect(e.get("db")).toBeUndefined();
      expect(e.cloud.calls.delete).toBe(0);
      expect(e.cloud.resources.size).toBe(1);
    },
  },
  {
    name: "a selector not yet resolved that matches the resource's labels holds it",
    async run(e) {
      await ready(e, "db", { labels: { tier: "data" } });
      usage(e, "by-label", { of: { matchLabels: { tier: "data" } }, reason: "selected" });
      await e.delete("db");
      await expectHeld(e, "db", "ClusterUsage by-label");
    },
  },
  {
    name: "a using resource that was never seen holds (the Usage may be applied before it)",
    async run(e) {
      await ready(e, "vpc");
      usage(e, "early", { of: "vpc", by: "not-yet" });
      await e.delete("vpc");
      await expectHeld(e, "vpc", "Widget/not-yet (ClusterUsage early)");
    },
  },
  {
    name: "a namespaced Usage naming the cluster-scoped resource holds it too",
    async run(e) {
      await ready(e, "vpc");
      e.api.seed(UsageType, {
        apiVersion: "protection.crossplane.io/v1beta1",
        kind: "Usage",
        metadata: { name: "team-a", namespace: "team-a" },
        spec: {
          of: { apiVersion: e.def.apiVersion, kind: e.def.kind, resourceRef: { name: "vpc" } },
          reason: "team a",
        },
      });
      await e.delete("vpc");
      await expectHeld(e, "vpc", "Usage team-a/team-a");
    },
  },
  {
    name: "Usages of other resources, or whose bound user is gone, hold nothing",
    async run(e) {
      await ready(e, "vpc");
      await ready(e, "other");
      await ready(e, "gone-user");
      usage(e, "of-other", { of: "other", reason: "not this one" });
      usage(e, "released", { of: "vpc", by: "gone-user" }, { bound: true });
      await e.kube.patch(e.def, "gone-user", { metadata: { finalizers: [] } });
      await e.delete("gone-user");
      expect(e.get("gone-user")).toBeUndefined();
      await e.delete("vpc");
      await e.settle("vpc");
      expect(e.get("vpc")).toBeUndefined();
      expect(e.cloud.calls.delete).toBe(1);
    },
  },
  {
    name: "Usages that cannot be read: nothing is deleted, Synced=False says why",
    async run(e) {
      await ready(e, "vpc");
      await e.delete("vpc");
      e.api.failNext(
        (r) => r.resource.includes("usages") && r.method === "GET",
        () => serverError(),
      );
      const res = await e.reconcile("vpc");
      expect(res.outcome).toBe("error");
      expect(e.cloud.calls.delete).toBe(0);
      expect(e.condition("vpc", "Synced")?.message).toContain("cannot read the Usages");
      expect(e.reasons("vpc")).toContain(Reason.cannotGetUsages);
    },
  },
];

describe("managed reconciler: Usages", () => {
  it.each(rows)("$name", async (row) => row.run(engine()));
});
