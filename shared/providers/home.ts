// A kind's client told where its resources live (api/external.ts Home), added in one place per cloud's
// registry (its kinds.ts) from the cloud's home function, for kinds whose client does not say it itself.
import type { ConnectContext, Home, ManagedKindProvider } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";

/**
 * How a cloud finds a resource's home from the ProviderConfig (spec S), the resource's spec and the
 * fields its kind names as parents (ManagedKindProvider.homeParents: field → key in the home).
 */
export type HomeOf<S> = (
  ctx: ConnectContext<S>,
  mr: ManagedResource<Record<string, unknown>, unknown>,
  parents: Readonly<Record<string, string>>,
) => Promise<Home>;

/**
 * The provider, its clients answering `home` with `homeOf` and the kind's own `homeParents` (a client's
 * own `home` wins).
 */
export function withHome<S>(provider: ManagedKindProvider, homeOf: HomeOf<S>): ManagedKindProvider {
  return {
    ...provider,
    async connect(ctx: ConnectContext<S>) {
      const client = await provider.connect(ctx);
      if (client.home) return client;
      // connect makes a fresh client each time: adding to it changes no other ProviderConfig's.
      return Object.assign(client, {
        home: (mr: ManagedResource<unknown, unknown>) =>
          homeOf(ctx, mr as ManagedResource<Record<string, unknown>, unknown>, provider.homeParents ?? {}),
      });
    },
  };
}

/** The string fields of a spec.forProvider, by name, that hold a piece of the home (empty ones left out). */
export function homeFields(
  forProvider: Record<string, unknown>,
  fields: Readonly<Record<string, string>>,
  normalise: (key: string, value: string) => string = (_k, v) => v,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, key] of Object.entries(fields)) {
    const v = forProvider[field];
    if (typeof v === "string" && v !== "") out[key] = normalise(key, v);
  }
  return out;
}
