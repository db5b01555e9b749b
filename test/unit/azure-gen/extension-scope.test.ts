// Extension types (locks, role assignments, diagnostic settings…): written under any ARM id, the scope. The
// generator makes a kind of every type ARM writes at extension scope; the kind's scope is an ARM id set
// directly or filled from any driftless Azure managed resource (hand-written or generated) by scopeRef /
// scopeSelector; the provider never writes under a scope of another subscription than the ProviderConfig's.
import { beforeAll, describe, expect, it } from "vitest";
import { ArmScope, loadArmData } from "../../../infra/azure/types-data.ts";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import { armIdKindOf, parseArmScope } from "../../../shared/api/azure-gen/scope.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { InvalidSpecError } from "../../../shared/api/external.ts";
import { type ManagedResource, namespacedTypeOf, namespacedVariantOf } from "../../../shared/api/managed.ts";
import { resourceIdOf, scopeOf } from "../../../shared/providers/azure/arm-generic/provider.ts";
import { ReferenceNotReadyError, resolveReferences } from "../../../shared/reconciler/references.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";

const SUB = "00000000-0000-0000-0000-0000000000aa";
let lock: AzureKindSpec;
const specOf = (type: string) => loadAzureSpec(loadAzureCatalog().kinds.find((k) => k.type === type)!);

beforeAll(() => {
  generateAzure();
  lock = specOf("Microsoft.Authorization/locks");
}, 120_000);

describe("extension-scope Azure kinds", () => {
  it("every type ARM writes at extension scope has a kind with a scope, unless its body is no object", () => {
    const data = loadArmData();
    const catalog = loadAzureCatalog();
    const byType = new Map(catalog.kinds.map((k) => [k.type.toLowerCase(), k]));
    const extension = data.resources.filter((r) => r.ws & ArmScope.Extension);
    const made = extension.filter((r) => byType.has(r.type.toLowerCase()));
    for (const r of made) expect(loadAzureSpec(byType.get(r.type.toLowerCase())!).scope).toBe("extension");
    const missing = extension.filter((r) => !byType.has(r.type.toLowerCase()));
    // What is not generated is not an object body (no PUT body a kind can hold), never its scope.
    for (const r of missing) expect(data.files[r.file]?.types[r.body]?.k).not.toBe("o");
    expect(catalog.skipped["extension scope only"]).toBeUndefined();
    expect(made.length).toBeGreaterThan(90);
  });

  it("schema: scope (immutable) with scopeRef / scopeSelector that name any kind, both shapes", () => {
    const def = azureGenKindOf(lock);
    expect(def.immutable).toContain("scope");
    const ref = def.references.find((r) => r.field === "scope")!;
    expect(ref.to.kind).toBe("ResourceGroup");
    const fp = def.forProvider.parse({
      scopeRef: { apiVersion: "network.azure.gen.driftless.dev/v1alpha1", kind: "VirtualNetwork", name: "v" },
      properties: { level: "CanNotDelete" },
    }) as Record<string, unknown>;
    expect(fp.scopeRef).toEqual({
      apiVersion: "network.azure.gen.driftless.dev/v1alpha1",
      kind: "VirtualNetwork",
      name: "v",
    });
    // Hand-written and generated kinds with an ARM id; nothing else.
    expect(armIdKindOf(ResourceGroup.apiVersion, "ResourceGroup")?.plural).toBe("resourcegroups");
    expect(armIdKindOf("network.azure.gen.driftless.dev/v1alpha1", "VirtualNetwork")?.plural).toBe(
      "virtualnetworks",
    );
    expect(armIdKindOf("storage.azure.driftless.dev/v1alpha1", "Container")).toBeUndefined();
    expect(armIdKindOf("s3.aws.driftless.dev/v1alpha1", "Bucket")).toBeUndefined();
    // A namespaced resource names namespaced kinds only.
    const nsRef = namespacedVariantOf(def).references.find((r) => r.field === "scope")!;
    expect(nsRef.anyKind?.("resources.azure.m.driftless.dev/v1alpha1", "ResourceGroup")).toEqual(
      namespacedTypeOf(ResourceGroup),
    );
    expect(nsRef.anyKind?.(ResourceGroup.apiVersion, "ResourceGroup")).toBeUndefined();
  });

  it("ids: {scope}/providers/{type}/{name} under a subscription, a group or any resource", () => {
    const rg = `/subscriptions/${SUB}/resourceGroups/rg1`;
    const vnet = `${rg}/providers/Microsoft.Network/virtualNetworks/v1`;
    for (const scope of [`/subscriptions/${SUB}`, rg, vnet])
      expect(resourceIdOf(lock, SUB, { scope }, "l1")).toBe(
        `${scope}/providers/Microsoft.Authorization/locks/l1`,
      );
    expect(parseArmScope(vnet)).toEqual({ subscription: SUB, resourceGroup: "rg1" });
    expect(parseArmScope(`/subscriptions/${SUB}/resourcegroups/RG1`)).toEqual({
      subscription: SUB,
      resourceGroup: "RG1",
    });
    for (const bad of [
      "rg1",
      "/subscriptions",
      `${rg}/providers`,
      `${rg}/providers/Microsoft.Network`,
      `${rg}/`,
    ])
      expect(parseArmScope(bad)).toHaveProperty("invalid");
  });

  it("safety: a scope in another subscription, a malformed or a missing scope is refused with what to do", () => {
    const foreign = "/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg1";
    expect(() => scopeOf(lock, SUB, { scope: foreign })).toThrow(InvalidSpecError);
    expect(() => scopeOf(lock, SUB, { scope: foreign })).toThrow(
      /subscription 11111111-1111-1111-1111-111111111111, but the ProviderConfig's subscription is 0{8}-0{4}-0{4}-0{4}-0{10}aa: .*providerConfigRef/,
    );
    expect(() => resourceIdOf(lock, SUB, { scope: foreign }, "l1")).toThrow(InvalidSpecError);
    expect(() => scopeOf(lock, SUB, { scope: "rg1" })).toThrow(/not an Azure Resource Manager id/);
    expect(() => scopeOf(lock, SUB, {})).toThrow(/scopeRef or scopeSelector/);
    // The subscription compares as ARM does: case-insensitively.
    expect(scopeOf(lock, SUB.toUpperCase(), { scope: `/subscriptions/${SUB}` })).toBe(
      `/subscriptions/${SUB}`,
    );
  });

  it("references: scopeRef fills scope with the named kind's ARM id; the default kind is ResourceGroup", async () => {
    const api = new MemoryApiServer();
    const kube = api.kube();
    const def = azureGenKindOf(lock);
    const vnetDef = azureGenKindOf(specOf("Microsoft.Network/virtualNetworks"));
    const ready = { conditions: [{ type: "Ready", status: "True" }] };
    const rgId = `/subscriptions/${SUB}/resourceGroups/rg-a`;
    const vnetId = `${rgId}/providers/Microsoft.Network/virtualNetworks/v1`;
    api.seed(ResourceGroup, {
      apiVersion: ResourceGroup.apiVersion,
      kind: "ResourceGroup",
      metadata: { name: "rg-a", labels: { team: "a" } },
      spec: { forProvider: {} },
      status: { ...ready, atProvider: { id: rgId } },
    });
    api.seed(vnetDef, {
      apiVersion: vnetDef.apiVersion,
      kind: vnetDef.kind,
      metadata: { name: "v1", labels: { team: "a" } },
      spec: { forProvider: {} },
      status: { ...ready, atProvider: { id: vnetId } },
    });
    const mr = (forProvider: Record<string, unknown>) =>
      ({
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name: "l" },
        spec: { forProvider },
      }) as unknown as ManagedResource;

    expect((await resolveReferences(kube, def, mr({ scopeRef: { name: "rg-a" } })))?.scope).toBe(rgId);
    const named = { apiVersion: vnetDef.apiVersion, kind: "VirtualNetwork" };
    expect((await resolveReferences(kube, def, mr({ scopeRef: { ...named, name: "v1" } })))?.scope).toBe(
      vnetId,
    );
    // A selector records its choice with the kind it named.
    const selected = await resolveReferences(
      kube,
      def,
      mr({ scopeSelector: { ...named, matchLabels: { team: "a" } } }),
    );
    expect(selected).toMatchObject({ scope: vnetId, scopeRef: { ...named, name: "v1" } });
    // A kind it may not name: a clear spec error; a target not there yet: wait.
    await expect(
      resolveReferences(
        kube,
        def,
        mr({ scopeRef: { apiVersion: "s3.aws.driftless.dev/v1alpha1", kind: "Bucket", name: "b" } }),
      ),
    ).rejects.toThrow(InvalidSpecError);
    await expect(
      resolveReferences(kube, def, mr({ scopeRef: { apiVersion: vnetDef.apiVersion, name: "v1" } })),
    ).rejects.toThrow(/not a kind scope may be filled from/);
    await expect(resolveReferences(kube, def, mr({ scopeRef: { name: "rg-b" } }))).rejects.toThrow(
      ReferenceNotReadyError,
    );
  });
});
