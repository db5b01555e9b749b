// The namespaced (Crossplane v2) shape, on the in-memory API server and the fake cloud: the same engine
// and provider as the cluster-scoped kind, with everything a namespaced object touches kept in its own
// namespace (ProviderConfig, Secrets, references, the connection Secret) and the tenancy rules of
// shared/reconciler/tenancy.ts: no ambient identity, no metadata endpoints, ClusterProviderConfigs only
// where they allow.
import { describe, expect, it } from "vitest";
import {
  clusterProviderConfigType,
  type ManagedResource,
  namespacedProviderConfigType,
  namespacedTypeOf,
  namespacedVariantOf,
} from "../../../shared/api/managed.ts";
import { Annotations, SecretKeySelector } from "../../../shared/api/meta.ts";
import { ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import type { ReconcilerOptions } from "../../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { forbiddenAddress, hostOf } from "../../../shared/reconciler/tenancy.ts";
import { FakeCloud, parentType, WidgetForProvider, widgetKind } from "../../support/fake-cloud.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { Reconciler } from "../../support/routed.ts";

const clusterDef = widgetKind();
const def = namespacedVariantOf(clusterDef);
const parent = namespacedTypeOf(parentType());
const cpcType = clusterProviderConfigType("aws");
const npcType = namespacedProviderConfigType("aws");

function setup(opts: ReconcilerOptions = {}) {
  const api = new MemoryApiServer();
  const kube = api.kube();
  const cloud = new FakeCloud();
  cloud.details = { endpoint: "widget.example", password: "s3cret-value" };
  const clock = new Date("2026-01-01T00:00:00.000Z");
  const registry = new KindRegistry([cloud.provider(clusterDef), cloud.provider(def)]);
  const reconciler = new Reconciler(kube, registry, {
    now: () => clock,
    random: () => 0.5,
    rateLimit: false,
    retryBaseMs: 0,
    throttleBackoffMs: 0,
    ...opts,
  });
  const clusterPc = (name: string, spec: Record<string, unknown> = {}) =>
    api.seed(cpcType, {
      apiVersion: `${cpcType.group}/${cpcType.version}`,
      kind: "ClusterProviderConfig",
      metadata: { name },
      spec: { credentials: { source: "InjectedIdentity" }, region: "eu-west-1", ...spec },
    });
  const pc = (namespace: string, name: string, spec: Record<string, unknown> = {}) =>
    api.seed(npcType, {
      apiVersion: `${npcType.group}/${npcType.version}`,
      kind: "ProviderConfig",
      metadata: { name, namespace },
      spec: { credentials: { source: "Secret", secretRef: { name: "creds", key: "k" } }, ...spec },
    });
  const apply = (namespace: string, name: string, spec: Record<string, unknown> = {}) =>
    api.seed(def, {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: { name, namespace },
      spec: { forProvider: { region: "eu-west-1", size: 1 }, ...spec },
    });
  const get = (namespace: string, name: string) =>
    api.get<ManagedResource>(def, name, namespace) as ManagedResource | undefined;
  const settle = async (namespace: string, name: string) => {
    for (let i = 0; i < 10; i++) {
      const r = await reconciler.reconcile({ apiVersion: def.apiVersion, kind: def.kind, name, namespace });
      if (r.outcome === "gone" || r.requeueAfterMs === undefined) return r;
    }
    return undefined;
  };
  const synced = (namespace: string, name: string) =>
    get(namespace, name)?.status?.conditions?.find((c) => c.type === "Synced");
  return { api, kube, cloud, registry, reconciler, clusterPc, pc, apply, get, settle, synced };
}

describe("the namespaced shape", () => {
  it("is the same kind in a .m. group, without deletionPolicy, with local Secrets and a typed ProviderConfig reference", () => {
    expect(def.apiVersion).toBe("widgets.fake.m.driftless.dev/v1alpha1");
    expect(def.namespaced).toBe(true);
    const spec = def.spec.shape as Record<string, unknown>;
    expect(Object.keys(spec).sort()).toEqual([
      "forProvider",
      "managementPolicies",
      "providerConfigRef",
      "writeConnectionSecretToRef",
    ]);
    expect(def.spec.parse({ forProvider: {} }).providerConfigRef).toEqual({
      kind: "ClusterProviderConfig",
      name: "default",
    });
    expect(def.references.map((r) => r.to.apiVersion)).toEqual([parent.apiVersion, parent.apiVersion]);
    // The cluster-scoped kind is unchanged.
    expect(clusterDef.apiVersion).toBe("widgets.fake.driftless.dev/v1alpha1");
    expect(Object.keys(clusterDef.spec.shape)).toContain("deletionPolicy");
  });

  it("creates through the default ClusterProviderConfig and writes the connection Secret in its own namespace only", async () => {
    const t = setup();
    t.clusterPc("default");
    // A namespace in writeConnectionSecretToRef is not part of the schema; were it stored, it is ignored.
    t.apply("team-a", "w1", { writeConnectionSecretToRef: { name: "w1-conn", namespace: "team-b" } });
    await t.settle("team-a", "w1");
    expect(t.synced("team-a", "w1")?.status).toBe("True");
    expect(t.cloud.resources.size).toBe(1);
    expect(t.api.secret("team-a", "w1-conn")).toBeDefined();
    expect(t.api.secret("team-b", "w1-conn")).toBeUndefined();
  });

  it("an in-sync reconcile of a namespaced object writes nothing (its own-namespace view is never written back)", async () => {
    const t = setup();
    t.clusterPc("default");
    t.apply("team-a", "w-sync", { writeConnectionSecretToRef: { name: "w-sync-conn" } });
    await t.settle("team-a", "w-sync");
    expect(t.synced("team-a", "w-sync")?.status).toBe("True");
    const before = t.api.writes().length;
    await t.reconciler.reconcile({
      apiVersion: def.apiVersion,
      kind: def.kind,
      name: "w-sync",
      namespace: "team-a",
    });
    expect(t.api.writes().length - before).toBe(0);
  });

  it("a Secret key selector has no namespace in the namespaced schema: it is read from the object's own, and never written back", async () => {
    const withRef = widgetKind({
      kind: "SecretWidget",
      forProvider: WidgetForProvider.extend({ passwordSecretRef: SecretKeySelector.optional() }),
    });
    const nsDef = namespacedVariantOf(withRef);
    expect(nsDef.secretRefPaths).toEqual(["passwordSecretRef"]);
    expect(nsDef.forProvider.safeParse({ passwordSecretRef: { name: "pw", key: "k" } }).success).toBe(true);
    const api = new MemoryApiServer();
    const cloud = new FakeCloud();
    const r = new Reconciler(api.kube(), new KindRegistry([cloud.provider(nsDef)]), {
      random: () => 0.5,
      rateLimit: false,
      retryBaseMs: 0,
    });
    api.seed(cpcType, {
      apiVersion: `${cpcType.group}/${cpcType.version}`,
      kind: "ClusterProviderConfig",
      metadata: { name: "default" },
      spec: { credentials: { source: "InjectedIdentity" }, region: "eu-west-1" },
    });
    api.seedSecret("team-a", "pw", { k: "s3cret" });
    api.seed(nsDef, {
      apiVersion: nsDef.apiVersion,
      kind: nsDef.kind,
      metadata: { name: "sw", namespace: "team-a" },
      spec: { forProvider: { region: "eu-west-1", passwordSecretRef: { name: "pw", key: "k" } } },
    });
    const key = { apiVersion: nsDef.apiVersion, kind: nsDef.kind, name: "sw", namespace: "team-a" };
    for (let i = 0; i < 10; i++) if ((await r.reconcile(key)).requeueAfterMs === undefined) break;
    expect(cloud.calls.create).toBe(1);
    const stored = api.get<ManagedResource>(nsDef, "sw", "team-a");
    expect(stored?.status?.conditions?.find((c) => c.type === "Synced")?.status).toBe("True");
    const fp = stored?.spec.forProvider as { passwordSecretRef?: unknown } | undefined;
    expect(fp?.passwordSecretRef).toEqual({ name: "pw", key: "k" });
  });

  it("uses a ProviderConfig of its own namespace only: another namespace's of the same name is never found", async () => {
    const t = setup();
    t.pc("team-b", "shared");
    t.apply("team-a", "w2", { providerConfigRef: { kind: "ProviderConfig", name: "shared" } });
    await t.settle("team-a", "w2");
    const synced = t.synced("team-a", "w2");
    expect(synced?.status).toBe("False");
    expect(synced?.message).toContain('ProviderConfig "shared"');
    expect(synced?.message).toContain('in namespace "team-a" not found');
    expect(t.cloud.calls.create).toBe(0);
    t.pc("team-a", "shared");
    await t.settle("team-a", "w2");
    expect(t.synced("team-a", "w2")?.status).toBe("True");
  });

  it("refuses a ClusterProviderConfig from a namespace its allowedNamespaces leaves out", async () => {
    const t = setup();
    t.clusterPc("prod", { allowedNamespaces: ["prod-*"] });
    t.apply("team-a", "w3", { providerConfigRef: { kind: "ClusterProviderConfig", name: "prod" } });
    t.apply("prod-payments", "w3", { providerConfigRef: { kind: "ClusterProviderConfig", name: "prod" } });
    await t.settle("team-a", "w3");
    await t.settle("prod-payments", "w3");
    expect(t.synced("team-a", "w3")?.message).toContain(
      'ClusterProviderConfig "prod" may not be used from namespace "team-a"',
    );
    expect(t.synced("prod-payments", "w3")?.status).toBe("True");
    expect(t.cloud.calls.create).toBe(1);
  });

  it("the batched check holds a ClusterProviderConfig's allowedNamespaces for every object, not the first of a batch", async () => {
    const t = setup({ providerConfigTtlMs: 0 });
    t.clusterPc("prod", { allowedNamespaces: ["prod-*", "team-a"] });
    const ref = { providerConfigRef: { kind: "ClusterProviderConfig", name: "prod" } };
    t.apply("prod-payments", "w5", ref);
    t.apply("team-a", "w5", ref);
    await t.settle("prod-payments", "w5");
    await t.settle("team-a", "w5");
    expect(t.synced("team-a", "w5")?.status).toBe("True");
    // The platform revokes team-a; one batch holds both objects, an allowed one first.
    t.api.mutate(cpcType, "prod", (o) => {
      (o.spec as Record<string, unknown>).allowedNamespaces = ["prod-*"];
    });
    const listed = [t.get("prod-payments", "w5"), t.get("team-a", "w5")] as ManagedResource[];
    const observes = t.cloud.calls.observe;
    const verdicts = await t.reconciler.checkMany(listed, { connectionSecret: () => "unknown" });
    expect(verdicts[1]).toEqual({
      inSync: false,
      why: expect.stringContaining('may not be used from namespace "team-a"'),
    });
    // Only the allowed object was read with the platform's credentials.
    expect(t.cloud.calls.observe - observes).toBe(1);
  });

  it("refuses a namespaced ProviderConfig that borrows the functions' own identity, unless the platform allows the namespace", async () => {
    const refused = setup();
    refused.pc("team-a", "mine", { credentials: { source: "InjectedIdentity" } });
    refused.apply("team-a", "w4", { providerConfigRef: { kind: "ProviderConfig", name: "mine" } });
    await refused.settle("team-a", "w4");
    expect(refused.synced("team-a", "w4")?.message).toContain("uses InjectedIdentity");
    expect(refused.cloud.calls.observe + refused.cloud.calls.create).toBe(0);

    const allowed = setup({ tenancy: { ambientIdentityNamespaces: ["team-*"] } });
    allowed.pc("team-a", "mine", { credentials: { source: "InjectedIdentity" } });
    allowed.apply("team-a", "w4", { providerConfigRef: { kind: "ProviderConfig", name: "mine" } });
    await allowed.settle("team-a", "w4");
    expect(allowed.synced("team-a", "w4")?.status).toBe("True");
  });

  it.each([
    ["an instance-metadata address", "http://169.254.169.254/latest"],
    ["a name for the metadata service", "http://metadata.google.internal"],
    ["IPv6 link-local", "http://[fe80::1]:8080"],
    ["an IPv4-mapped metadata address", "http://[::ffff:169.254.169.254]"],
    ["a name resolving to link-local", "https://innocent.example.com"],
  ])("refuses a namespaced ProviderConfig whose endpoint reaches %s", async (_, url) => {
    const t = setup({
      tenancy: { lookup: async (h) => (h === "innocent.example.com" ? ["169.254.170.2"] : ["203.0.113.7"]) },
    });
    t.pc("team-a", "mine", { endpoint: { url } });
    t.apply("team-a", "w5", { providerConfigRef: { kind: "ProviderConfig", name: "mine" } });
    await t.settle("team-a", "w5");
    const message = t.synced("team-a", "w5")?.message ?? "";
    expect(message).toMatch(
      /spec\.endpoint\.url points at a (link-local or cloud-metadata address|cloud-metadata host name)/,
    );
    expect(t.cloud.calls.observe + t.cloud.calls.create).toBe(0);
  });

  it("accepts a namespaced ProviderConfig whose endpoint is an ordinary host", async () => {
    const t = setup({ tenancy: { lookup: async () => ["203.0.113.7"] } });
    t.pc("team-a", "mine", { endpoint: { url: "https://aws-proxy.example.com" } });
    t.apply("team-a", "w6", { providerConfigRef: { kind: "ProviderConfig", name: "mine" } });
    await t.settle("team-a", "w6");
    expect(t.synced("team-a", "w6")?.status).toBe("True");
  });

  it("resolves references within its namespace only", async () => {
    const t = setup();
    t.clusterPc("default");
    const readyParent = (namespace: string, externalName: string) => {
      t.api.seed(parent, {
        apiVersion: parent.apiVersion,
        kind: parent.kind,
        metadata: { name: "p", namespace, annotations: { [Annotations.externalName]: externalName } },
        spec: {},
      });
      t.api.mutate(
        parent,
        "p",
        (o) => {
          o.status = {
            conditions: [{ type: "Ready", status: "True", reason: "Available", lastTransitionTime: "x" }],
          };
        },
        namespace,
      );
    };
    readyParent("team-b", "parent-of-b");
    t.apply("team-a", "w7", { forProvider: { region: "eu-west-1", parentRef: { name: "p" } } });
    await t.settle("team-a", "w7");
    expect(t.synced("team-a", "w7")?.message).toContain('referenced Parent "p" does not exist');
    expect(t.cloud.calls.create).toBe(0);
    readyParent("team-a", "parent-of-a");
    await t.settle("team-a", "w7");
    const fp = t.get("team-a", "w7")?.spec.forProvider as { parentId?: string } | undefined;
    expect(fp?.parentId).toBe("parent-of-a");
  });

  it("selects references by label within its namespace only", async () => {
    const t = setup();
    t.clusterPc("default");
    t.api.seed(parent, {
      apiVersion: parent.apiVersion,
      kind: parent.kind,
      metadata: { name: "p", namespace: "team-b", labels: { app: "x" } },
      spec: {},
    });
    t.apply("team-a", "w8", {
      forProvider: { region: "eu-west-1", parentSelector: { matchLabels: { app: "x" } } },
    });
    await t.settle("team-a", "w8");
    expect(t.get("team-a", "w8")?.spec.forProvider).not.toHaveProperty("parentRef");
    expect(t.cloud.calls.create).toBe(0);
  });

  it("reads a Secret it names only from its own namespace", async () => {
    const t = setup();
    t.clusterPc("default");
    t.api.seedSecret("team-b", "pw", { k: "theirs" });
    t.apply("team-a", "w9", {
      forProvider: { region: "eu-west-1", passwordSecretRef: { namespace: "team-b", name: "pw", key: "k" } },
    });
    await t.settle("team-a", "w9");
    expect(t.synced("team-a", "w9")?.message).toContain(
      'Secret team-b/pw is not in namespace "team-a": a namespaced resource reads Secrets only from its own namespace',
    );
    expect(t.cloud.calls.create).toBe(0);
  });
});

describe("the namespaced ProviderConfigs", () => {
  const pcReconciler = (t: ReturnType<typeof setup>, tenancy = {}) =>
    new ProviderConfigReconciler(
      t.kube,
      t.registry,
      ["ProviderConfig", "ClusterProviderConfig"].map((kind) => ({
        cloud: "aws",
        type: kind === "ProviderConfig" ? npcType : cpcType,
        check: async (ctx) => {
          const ref = (ctx.providerConfig.spec as { credentials: { secretRef?: never } }).credentials
            .secretRef;
          if (ref) await ctx.readSecretKey(ref);
          return "arn:aws:iam::123456789012:user/test";
        },
      })),
      { tenancy },
    );

  it("count the users that name them, each in its own scope, and check credentials from their own namespace", async () => {
    const t = setup();
    t.clusterPc("default");
    t.pc("team-a", "default");
    t.api.seedSecret("team-a", "creds", { k: "v" });
    t.apply("team-a", "a1");
    t.apply("team-a", "a2", { providerConfigRef: { kind: "ProviderConfig", name: "default" } });
    t.apply("team-b", "b1");
    const r = pcReconciler(t);
    const cluster = await r.reconcile({
      apiVersion: `${cpcType.group}/v1alpha1`,
      kind: "ClusterProviderConfig",
      name: "default",
    });
    const local = await r.reconcile({
      apiVersion: `${npcType.group}/v1alpha1`,
      kind: "ProviderConfig",
      name: "default",
      namespace: "team-a",
    });
    expect([cluster.users, local.users]).toEqual([2, 1]);
    expect(local.outcome).toBe("ready");
  });

  it("report a namespaced ProviderConfig the tenancy rules refuse as Ready=False NotAllowed, without trying its credentials", async () => {
    const t = setup();
    t.pc("team-a", "mine", { credentials: { source: "InjectedIdentity" } });
    const r = pcReconciler(t);
    const res = await r.reconcile({
      apiVersion: `${npcType.group}/v1alpha1`,
      kind: "ProviderConfig",
      name: "mine",
      namespace: "team-a",
    });
    expect(res.outcome).toBe("unready");
    const pc = t.api.get<{ status?: { conditions?: Array<{ reason: string; message?: string }> } }>(
      npcType,
      "mine",
      "team-a",
    );
    expect(pc?.status?.conditions?.[0]?.reason).toBe("NotAllowed");
    expect(pc?.status?.conditions?.[0]?.message).toContain("uses InjectedIdentity");
  });
});

describe("tenant endpoint addresses", () => {
  it.each([
    ["169.254.169.254", true],
    ["169.254.170.2", true],
    ["100.100.100.200", true],
    ["168.63.129.16", true],
    ["fd00:ec2::254", true],
    ["fe80::1", true],
    ["::ffff:169.254.169.254", true],
    ["0.0.0.0", true],
    ["127.0.0.1", false],
    ["10.0.0.1", false],
    ["203.0.113.7", false],
  ])("%s forbidden: %s", (address, forbidden) => {
    expect(forbiddenAddress(address) !== undefined).toBe(forbidden);
  });

  it.each([
    ["http://[::1]:9000", "::1"],
    ["localhost:8085", "localhost"],
    ["https://Example.COM/path", "example.com"],
  ])("the host of %s is %s", (value, host) => {
    expect(hostOf(value)).toBe(host);
  });
});
