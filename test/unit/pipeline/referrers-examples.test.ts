// The referrer index over the examples `npm start` applies: every hop of the longest reference chains (Azure
// ResourceGroup → VirtualNetwork → Subnet → FlexibleServer → FlexibleServerDatabase; the Cloud SQL private
// network chain) is indexed, so a referrer waiting for its target is forwarded the moment the target turns
// Ready instead of at the end of its backoff.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { managedTypes } from "../../../functions/forwarder-kinds.ts";
import { apiVersionOf } from "../../../shared/api/meta.ts";
import { ReferrerIndex, type SeenObject } from "../../../shared/pipeline/referrers.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

const root = join(import.meta.dirname, "../../..");
const defs = managedKinds.map((k) => k.definition);
const examples = readdirSync(join(root, "examples"))
  .filter((f) => f.endsWith(".yaml"))
  .flatMap((f) => parseAllDocuments(readFileSync(join(root, "examples", f), "utf8")).map((d) => d.toJS()))
  .filter((o): o is SeenObject & { apiVersion: string; kind: string } => !!o?.apiVersion)
  .filter((o) => defs.some((d) => d.apiVersion === o.apiVersion && d.kind === o.kind));
const label = (o: { kind?: string; name: string }) => `${o.kind}/${o.name}`;

/** Every referrer → target edge the index forwards on: each example seen unresolved, then each turned Ready. */
function forwardedEdges(index: ReferrerIndex): string[] {
  for (const o of examples) index.seen(o, o);
  const edges: string[] = [];
  for (const o of examples) {
    const ready = { ...o, status: { conditions: [{ type: "Ready", status: "True" }] } };
    for (const r of index.seen(o, ready))
      edges.push(`${label(r)} → ${label({ ...o, name: o.metadata.name })}`);
  }
  return edges;
}

/** The in-cluster forwarder's index: from the generated data, loading no provider (functions/forwarder.ts). */
const forwarderIndex = () =>
  new ReferrerIndex(
    managedTypes.map((t) => ({ apiVersion: apiVersionOf(t), kind: t.kind, references: t.references })),
  );

describe.each([
  ["driftless run", () => new ReferrerIndex(defs)],
  ["the in-cluster forwarder", forwarderIndex],
])("the referrer index of %s over examples/", (_, newIndex) => {
  it("forwards every hop of the Azure PostgreSQL and Cloud SQL chains", () => {
    expect(forwardedEdges(newIndex())).toEqual(
      expect.arrayContaining([
        "VirtualNetwork/app-network-pg → ResourceGroup/driftless-example-pg",
        "Subnet/app-postgres → ResourceGroup/driftless-example-pg",
        "Subnet/app-postgres → VirtualNetwork/app-network-pg",
        "FlexibleServer/app-postgres-example → ResourceGroup/driftless-example-pg",
        "FlexibleServer/app-postgres-example → Subnet/app-postgres",
        "FlexibleServerDatabase/app → ResourceGroup/driftless-example-pg",
        "FlexibleServerDatabase/app → FlexibleServer/app-postgres-example",
        "GlobalAddress/sql-private-range → Network/sql-private-network",
        "Connection/sql-private-connection → Network/sql-private-network",
        "Connection/sql-private-connection → GlobalAddress/sql-private-range",
        "DatabaseInstance/orders-db → Network/sql-private-network",
        "Database/orders → DatabaseInstance/orders-db",
        "User/orders-app → DatabaseInstance/orders-db",
      ]),
    );
  });
});
