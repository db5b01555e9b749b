// What the generated kinds' lazy-schema tests share (AWS, Azure, Google): whether a definition's schema is
// built yet, and the engine's refusal of a bad spec of a kind whose schema was not yet built, in both shapes.
import { expect } from "vitest";
import type { ManagedKindProvider } from "../../shared/api/external.ts";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { MemoryApiServer } from "./memory-apiserver.ts";
import { Reconciler } from "./routed.ts";

export type SchemaKey = "forProvider" | "atProvider" | "spec" | "status";

/** Whether the kind's schema exists yet (a lazy one is a getter until first read). */
export const built = (def: ManagedKindDef, key: SchemaKey = "forProvider") =>
  !Object.getOwnPropertyDescriptor(def, key)?.get;

/**
 * Seeds `bad` and `good` specs of each shape's kind (none built yet) and reconciles them: `bad` is refused
 * as an invalid spec with each of `badPaths` named, building the schema; `good` passes validation and
 * fails only at connect (the ProviderConfig `providerConfig` seeds names no usable credentials).
 */
export async function expectBadSpecRefusedUnbuilt(opts: {
  providers: readonly ManagedKindProvider[];
  providerConfig: { type: ResourceType; spec: Record<string, unknown> };
  bad: Record<string, unknown>;
  badPaths: RegExp[];
  good: Record<string, unknown>;
}): Promise<void> {
  const api = new MemoryApiServer();
  const defs = opts.providers.map((p) => p.definition);
  for (const def of defs) expect(built(def)).toBe(false);
  const pc = opts.providerConfig.type;
  api.seed(pc, {
    apiVersion: `${pc.group}/${pc.version}`,
    kind: "ProviderConfig",
    metadata: { name: "default" },
    spec: opts.providerConfig.spec,
  });
  const reconciler = new Reconciler(api.kube(), new KindRegistry(opts.providers), {
    rateLimit: false,
    retryBaseMs: 0,
    random: () => 0.5,
  });
  for (const def of defs) {
    const namespace = def.scope === "Namespaced" ? "team-a" : undefined;
    const key = (name: string) => ({
      apiVersion: def.apiVersion,
      kind: def.kind,
      name,
      ...(namespace ? { namespace } : {}),
    });
    const seed = (name: string, forProvider: Record<string, unknown>) =>
      api.seed(def, {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name, ...(namespace ? { namespace } : {}) },
        spec: { forProvider: structuredClone(forProvider) },
      });
    const synced = (name: string) =>
      api.get<ManagedResource>(def, name, namespace)?.status?.conditions?.find((c) => c.type === "Synced");
    seed("bad", opts.bad);
    await reconciler.reconcile(key("bad"));
    expect(synced("bad"), def.group).toMatchObject({ status: "False", reason: "ReconcileError" });
    expect(synced("bad")?.message).toMatch(/^invalid spec: /);
    for (const p of opts.badPaths) expect(synced("bad")?.message).toMatch(p);
    expect(built(def)).toBe(true);
    seed("good", opts.good);
    await reconciler.reconcile(key("good"));
    await reconciler.reconcile(key("good"));
    expect(synced("good")?.message, def.group).toMatch(/^cannot connect to the provider: /);
  }
}

/**
 * The activated kinds are built once per process: with `DRIFTLESS_ACTIVATE` naming the kind's pattern, the
 * registry's provider at load (`activated`) and the functions' served kinds (`served`, twice) carry the same
 * definition object.
 */
export async function expectActivatedBuiltOnce(opts: {
  entry: { plural: string; group: string; kind: string };
  activated: () => readonly ManagedKindProvider[];
  served: (
    kube: ReturnType<MemoryApiServer["kube"]>,
    patterns: string[],
  ) => Promise<{ kinds: readonly ManagedKindProvider[]; generated: readonly string[] }>;
}): Promise<void> {
  const { plural, group, kind } = opts.entry;
  const pattern = `${plural}.${group}.driftless.dev`;
  const before = process.env.DRIFTLESS_ACTIVATE;
  process.env.DRIFTLESS_ACTIVATE = pattern;
  try {
    const [atLoad] = opts.activated();
    const served = await opts.served(new MemoryApiServer().kube(), [pattern]);
    const again = await opts.served(new MemoryApiServer().kube(), [pattern]);
    const mine = (ks: readonly ManagedKindProvider[]) =>
      ks.filter((k) => k.definition.kind === kind && k.definition.group === `${group}.driftless.dev`);
    expect(served.generated).toContain(pattern);
    expect(mine(served.kinds)[0]?.definition).toBe(atLoad?.definition);
    expect(mine(again.kinds)[0]?.definition).toBe(atLoad?.definition);
  } finally {
    if (before === undefined) delete process.env.DRIFTLESS_ACTIVATE;
    else process.env.DRIFTLESS_ACTIVATE = before;
  }
}
