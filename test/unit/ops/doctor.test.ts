// What doctor checks for RBAC is exactly what infra/k8s/rbac.yaml grants: the two cannot drift apart.
import { describe, expect, it } from "vitest";
import { rbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { canonicalJson, requiredAccess } from "../../../shared/ops/doctor.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

describe("doctor", () => {
  it("asks only for permissions the shipped ClusterRoles (and, for Secrets, its Roles) grant", () => {
    const objects = rbacObjects() as Array<{
      kind: string;
      metadata: { namespace?: string };
      rules?: Rule[];
    }>;
    const clusterRules = objects.filter((o) => o.kind === "ClusterRole").flatMap((o) => o.rules ?? []);
    const rulesIn = (ns: string | undefined) =>
      ns === undefined
        ? clusterRules
        : [
            ...clusterRules,
            ...objects
              .filter((o) => o.kind === "Role" && o.metadata.namespace === ns)
              .flatMap((o) => o.rules ?? []),
          ];
    const needed = requiredAccess(
      managedKinds.map((k) => k.definition),
      providerConfigKinds.map((k) => k.type),
    );
    const ungranted = needed.filter(
      (a) =>
        !rulesIn(a.namespace).some(
          (r) =>
            r.apiGroups.includes(a.group) &&
            r.resources.includes(a.subresource ? `${a.resource}/${a.subresource}` : a.resource) &&
            r.verbs.includes(a.verb),
        ),
    );
    expect(ungranted).toEqual([]);
    expect(needed.length).toBeGreaterThan(managedKinds.length * 5);
  });

  it("checks what the claim reconciler does: claims and their status, classes, making managed resources", () => {
    const needed = requiredAccess([], []).map(
      (a) => `${a.verb} ${a.resource}.${a.group}${a.subresource ? `/${a.subresource}` : ""}`,
    );
    expect(needed).toEqual(
      expect.arrayContaining([
        "patch queues.claims.driftless.dev",
        "patch queues.claims.driftless.dev/status",
        "list postgresqlinstances.claims.driftless.dev",
        "watch sqsqueueclasses.classes.driftless.dev",
        "get rdsinstanceclasses.classes.driftless.dev",
        "create queues.sqs.aws.driftless.dev",
        "delete subscriptions.pubsub.gcp.driftless.dev",
      ]),
    );
    // Only the kinds classes make are ever created: never a VPC, say.
    expect(needed).not.toContain("create vpcs.ec2.aws.driftless.dev");
  });

  it("compares schemas regardless of key order", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 1, x: 2 }], c: 2 } })).toBe(
      canonicalJson({ a: { c: 2, d: [1, { x: 2, y: 1 }] }, b: 1 }),
    );
  });
});
