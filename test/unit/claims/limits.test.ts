// A class caps what its claims may ask for: a claim over the cap gets a clear condition and nothing is made.
import { describe, expect, it } from "vitest";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { PostgreSQLInstance } from "../../../shared/api/claims/claims.ts";
import { RDSInstanceClass } from "../../../shared/api/claims/classes.ts";
import { DEFAULT_CLASS_ANNOTATION } from "../../../shared/api/claims/meta.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { ClaimReconciler } from "../../support/routed.ts";

const NS = "team-a";
const conditionOf = (o: { status?: unknown } | undefined, type: string) =>
  ((o?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  );

/** A server with one default RDS class capped at `limits`, and one PostgreSQLInstance claim. */
function setup(limits: Record<string, unknown> | undefined, claim: Record<string, unknown>) {
  const server = new MemoryApiServer();
  server.seed(RDSInstanceClass, {
    apiVersion: RDSInstanceClass.apiVersion,
    kind: RDSInstanceClass.kind,
    metadata: { name: "capped", annotations: { [DEFAULT_CLASS_ANNOTATION]: "true" } },
    spec: {
      reclaimPolicy: "Delete",
      allowedNamespaces: ["*"],
      providerConfigRef: { name: "default" },
      forProvider: { region: "us-east-1" },
      ...(limits ? { limits } : {}),
    },
  });
  server.seed(PostgreSQLInstance, {
    apiVersion: PostgreSQLInstance.apiVersion,
    kind: PostgreSQLInstance.kind,
    metadata: { name: "db", namespace: NS },
    spec: { size: "small", storageGB: 20, ...claim },
  });
  const reconciler = new ClaimReconciler(server.kube(), { random: () => 0.5 });
  const key = {
    apiVersion: PostgreSQLInstance.apiVersion,
    kind: PostgreSQLInstance.kind,
    namespace: NS,
    name: "db",
  };
  return { server, reconcile: () => reconciler.reconcile(key) };
}

const dbInstances = (server: MemoryApiServer) =>
  server.list(`${DBInstance.group}/${DBInstance.version}/${DBInstance.plural}`);
const forProviderOf = (server: MemoryApiServer) =>
  ((dbInstances(server)[0]?.spec ?? {}) as { forProvider?: Record<string, unknown> }).forProvider ?? {};

describe("class limits", () => {
  it("a claim asking for more storage than the class allows is refused with a clear message; nothing is created", async () => {
    const { server, reconcile } = setup({ maxStorageGB: 500 }, { storageGB: 65536 });
    const res = await reconcile();
    expect(res.outcome).toBe("blocked");
    expect(dbInstances(server)).toHaveLength(0);
    expect(server.writes().filter((w) => w.method === "POST" && w.plural === DBInstance.plural)).toHaveLength(
      0,
    );
    const claim = server.get(PostgreSQLInstance, "db", NS);
    const synced = conditionOf(claim, "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "LimitExceeded" });
    expect(synced?.message).toMatch(/storageGB 65536 .*RDSInstanceClass "capped" allows at most 500/);
    expect(conditionOf(claim, "Ready")).toMatchObject({ status: "False" });
  });

  it("a size the class does not offer is refused the same way", async () => {
    const { server, reconcile } = setup({ allowedSizes: ["small", "medium"] }, { size: "large" });
    expect((await reconcile()).outcome).toBe("blocked");
    expect(dbInstances(server)).toHaveLength(0);
    expect(conditionOf(server.get(PostgreSQLInstance, "db", NS), "Synced")?.message).toMatch(
      /size large .*allows small, medium/,
    );
  });

  it("a claim within the limits binds", async () => {
    const { server, reconcile } = setup({ maxStorageGB: 500, allowedSizes: ["small"] }, { storageGB: 500 });
    await reconcile();
    expect(dbInstances(server)).toHaveLength(1);
    expect(forProviderOf(server)).toMatchObject({
      allocatedStorage: 500,
    });
  });

  it("growing a bound claim past the limit is refused; the resource keeps its size", async () => {
    const { server, reconcile } = setup({ maxStorageGB: 500 }, { storageGB: 100 });
    await reconcile();
    expect(dbInstances(server)).toHaveLength(1);
    server.mutate(
      PostgreSQLInstance,
      "db",
      (o) => {
        (o.spec as Record<string, unknown>).storageGB = 4096;
      },
      NS,
    );
    expect((await reconcile()).outcome).toBe("blocked");
    const fp = forProviderOf(server);
    expect(fp.allocatedStorage).toBe(100);
    expect(conditionOf(server.get(PostgreSQLInstance, "db", NS), "Synced")).toMatchObject({
      reason: "LimitExceeded",
    });
  });

  it("is part of the class schema (so the CRD carries it)", () => {
    const spec = RDSInstanceClass.spec.parse({ limits: { maxStorageGB: 1000, allowedSizes: ["small"] } });
    expect(spec.limits).toEqual({ maxStorageGB: 1000, allowedSizes: ["small"] });
    expect(() => RDSInstanceClass.spec.parse({ limits: { maxStorageGB: 5 } })).toThrow();
  });
});
