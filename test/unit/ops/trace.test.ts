// The trace tree's drawing and its "not Ready" rule, on hand-built trees (the API side is in
// test/integration/cli/trace.test.ts).
import { describe, expect, it } from "vitest";
import { traceText } from "../../../functions/cli/output.ts";
import { notReady, type TraceNode } from "../../../shared/ops/trace.ts";

const node = (o: Partial<TraceNode> & Pick<TraceNode, "role" | "kind" | "name">): TraceNode => ({
  group: "",
  exists: true,
  synced: "True",
  ready: "True",
  status: "Available",
  children: [],
  ...o,
});

const tree = (): TraceNode =>
  node({
    role: "Managed",
    kind: "DBInstance",
    group: "rds.aws.driftless.dev",
    name: "app-db",
    externalName: "app-db",
    children: [
      node({
        role: "Managed",
        kind: "DBSubnetGroup",
        group: "rds.aws.driftless.dev",
        name: "app-db-subnets",
        children: [
          node({
            role: "ProviderConfig",
            kind: "ProviderConfig",
            group: "aws.driftless.dev",
            name: "default",
            synced: "-",
            ready: "-",
          }),
        ],
      }),
      node({
        role: "Secret",
        kind: "Secret",
        name: "app-db",
        namespace: "default",
        synced: "-",
        status: "4 keys",
        keys: ["endpoint", "password", "port", "username"],
      }),
    ],
  });

describe("traceText", () => {
  it("draws children with ├─ └─ and continues a parent's line with │", () => {
    const lines = traceText(tree()).trimEnd().split("\n");
    expect(lines.map((l) => l.split(/\s{3,}/)[0])).toEqual([
      "NAME",
      "DBInstance.rds/app-db",
      "├─ DBSubnetGroup.rds/app-db-subnets",
      "│  └─ ProviderConfig.aws/default",
      "└─ Secret/default/app-db",
    ]);
  });

  it("shortens a long status unless wide, and wide shows EXTERNAL-NAME and Secret key names", () => {
    const t = tree();
    t.status = `ReconcileError: ${"x".repeat(200)}`;
    expect(traceText(t)).not.toContain("x".repeat(100));
    const wide = traceText(t, { wide: true });
    expect(wide).toContain("x".repeat(200));
    expect(wide).toMatch(/^NAME\s+SYNCED\s+READY\s+EXTERNAL-NAME\s+STATUS$/m);
    expect(wide).toContain("4 keys (endpoint,password,port,username)");
  });
});

describe("notReady", () => {
  it("counts a missing, never-reconciled or not-Ready line, not an unchecked ProviderConfig", () => {
    const t = tree();
    expect(notReady(t)).toEqual([]);
    const group = t.children[0] as TraceNode;
    group.ready = "-";
    group.status = "never reconciled";
    const secret = t.children[1] as TraceNode;
    secret.exists = false;
    secret.ready = "False";
    expect(notReady(t).map((n) => n.name)).toEqual(["app-db-subnets", "app-db"]);
  });
});
