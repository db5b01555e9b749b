import { describe, expect, it } from "vitest";
import { UsageError } from "../../../shared/ops/errors.ts";
import { findKind, namespaceOf, parseKindName } from "../../../shared/ops/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";

const t = (kind: string, group: string, shortNames?: string[], namespaced = false) => ({
  kind,
  group,
  version: "v1alpha1",
  plural: `${kind.toLowerCase()}s`,
  namespaced,
  ...(shortNames ? { shortNames } : {}),
});
const types = [
  t("Queue", "sqs.aws.driftless.dev", ["sqsq"]),
  t("Bucket", "s3.aws.driftless.dev"),
  t("Bucket", "storage.gcp.driftless.dev"),
  t("ProviderConfig", "aws.driftless.dev"),
  t("ProviderConfig", "gcp.driftless.dev"),
];

describe("findKind", () => {
  it("finds a kind by Kind, plural or short name, in any case, with an optional group prefix", () => {
    for (const ref of ["queue", "Queue", "queues", "sqsq", "queue.sqs", "Queue.sqs.aws.driftless.dev"]) {
      expect(findKind(ref, types).group, ref).toBe("sqs.aws.driftless.dev");
    }
    expect(findKind("bucket.storage.gcp", types).group).toBe("storage.gcp.driftless.dev");
    expect(findKind("providerconfig.aws", types).group).toBe("aws.driftless.dev");
  });

  it("refuses ambiguous and unknown kinds with a usage error that lists the candidates", () => {
    expect(() => findKind("bucket", types)).toThrow(UsageError);
    expect(() => findKind("bucket", types)).toThrow(
      '"bucket" is ambiguous: Bucket.s3.aws.driftless.dev, Bucket.storage.gcp.driftless.dev — add the group',
    );
    expect(() => findKind("widget", types)).toThrow(/unknown kind "widget"; known: Queue\.sqs\.aws/);
    expect(() => findKind("queue.s3", types)).toThrow(UsageError);
  });
});

describe("findKind with both shapes (cluster-scoped and the namespaced .m. group)", () => {
  const both = [
    ...types,
    t("Queue", "sqs.aws.m.driftless.dev", ["sqsq"], true),
    t("Bucket", "s3.aws.m.driftless.dev", undefined, true),
    t("Bucket", "storage.gcp.m.driftless.dev", undefined, true),
    t("ProviderConfig", "aws.m.driftless.dev", undefined, true),
    t("ClusterProviderConfig", "aws.m.driftless.dev"),
  ];
  const find = (ref: string, namespaced?: boolean) =>
    findKind(ref, both, namespaced === undefined ? {} : { namespaced }).group;

  it("a bare kind or a group prefix means the cluster-scoped shape, as before the namespaced kinds", () => {
    for (const ref of [
      "queue",
      "queues",
      "sqsq",
      "queue.sqs",
      "queue.sqs.aws",
      "Queue.sqs.aws.driftless.dev",
    ])
      expect(find(ref), ref).toBe("sqs.aws.driftless.dev");
    expect(find("providerconfig.aws")).toBe("aws.driftless.dev");
    expect(find("bucket.s3")).toBe("s3.aws.driftless.dev");
  });

  it("the .m group, or a namespace (-n/-A), means the namespaced shape", () => {
    for (const ref of ["queue.sqs.aws.m", "queues.sqs.aws.m.driftless.dev", "sqsq.sqs.aws.m"])
      expect(find(ref), ref).toBe("sqs.aws.m.driftless.dev");
    for (const ref of ["queue", "queue.sqs.aws", "queue.sqs.aws.m"])
      expect(find(ref, true), ref).toBe("sqs.aws.m.driftless.dev");
    expect(find("providerconfig.aws", true)).toBe("aws.m.driftless.dev");
    expect(find("providerconfig.aws.m")).toBe("aws.m.driftless.dev");
  });

  it("a name that picks one shape is not overridden by the namespace preference", () => {
    expect(find("Queue.sqs.aws.driftless.dev", true)).toBe("sqs.aws.driftless.dev");
    expect(find("clusterproviderconfig.aws")).toBe("aws.m.driftless.dev");
    expect(find("clusterproviderconfig", true)).toBe("aws.m.driftless.dev");
  });

  it("stays ambiguous across clouds, listing both shapes of every candidate", () => {
    expect(() => find("bucket")).toThrow(
      '"bucket" is ambiguous: Bucket.s3.aws.driftless.dev, Bucket.storage.gcp.driftless.dev, Bucket.s3.aws.m.driftless.dev, Bucket.storage.gcp.m.driftless.dev — add the group',
    );
    expect(() => find("bucket", true)).toThrow(UsageError);
    expect(find("bucket.storage.gcp.m")).toBe("storage.gcp.m.driftless.dev");
  });

  it("resolves the registry's kinds: every managed kind and ProviderConfig kind in both shapes", () => {
    const all = [...managedKinds.map((k) => k.definition), ...providerConfigKinds.map((k) => k.type)];
    const label = (ref: string, namespaced?: boolean) => {
      const k = findKind(ref, all, namespaced === undefined ? {} : { namespaced });
      return `${k.kind}.${k.group}`;
    };
    expect(label("queue")).toBe("Queue.sqs.aws.driftless.dev");
    expect(label("queue", true)).toBe("Queue.sqs.aws.m.driftless.dev");
    expect(label("queue.sqs.aws.m")).toBe("Queue.sqs.aws.m.driftless.dev");
    expect(label("dbinstance.rds.aws.m")).toBe("DBInstance.rds.aws.m.driftless.dev");
    expect(label("providerconfig.aws")).toBe("ProviderConfig.aws.driftless.dev");
    expect(label("providerconfig.aws", true)).toBe("ProviderConfig.aws.m.driftless.dev");
    expect(label("providerconfig.gcp.m")).toBe("ProviderConfig.gcp.m.driftless.dev");
    expect(label("clusterproviderconfig.azure")).toBe("ClusterProviderConfig.azure.m.driftless.dev");
    // Every kind is reachable by its plural and full group, whatever the preference.
    for (const k of all)
      for (const namespaced of [false, true])
        expect(label(`${k.plural}.${k.group}`, namespaced)).toBe(`${k.kind}.${k.group}`);
  });
});

describe("namespaceOf", () => {
  const queue = t("Queue", "sqs.aws.m.driftless.dev", undefined, true);
  const clusterQueue = t("Queue", "sqs.aws.driftless.dev");

  it("reads namespaced kinds in -n, else the kubeconfig context's namespace, else default; -A in all", () => {
    expect(namespaceOf(queue, { namespace: "team-a" }, "ctx")).toBe("team-a");
    expect(namespaceOf(queue, {}, "ctx")).toBe("ctx");
    expect(namespaceOf(queue, {})).toBe("default");
    expect(namespaceOf(queue, { allNamespaces: true }, "ctx")).toBeUndefined();
  });

  it("cluster-scoped kinds have no namespace: -A is fine, -n is a usage error", () => {
    expect(namespaceOf(clusterQueue, {}, "ctx")).toBeUndefined();
    expect(namespaceOf(clusterQueue, { allNamespaces: true })).toBeUndefined();
    expect(() => namespaceOf(clusterQueue, { namespace: "team-a" })).toThrow(
      "Queue.sqs.aws.driftless.dev is cluster-scoped: -n/--namespace does not apply",
    );
    expect(() => namespaceOf(queue, { namespace: "a", allNamespaces: true })).toThrow(UsageError);
  });
});

describe("parseKindName", () => {
  it("splits KIND/NAME and refuses anything else", () => {
    expect(parseKindName("queue/orders")).toEqual({ kind: "queue", name: "orders" });
    for (const bad of ["queue", "/orders", "queue/", "a/b/c"])
      expect(() => parseKindName(bad)).toThrow(UsageError);
  });
});
