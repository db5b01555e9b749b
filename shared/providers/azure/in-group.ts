// The Azure kinds that live directly in a resource group (VirtualNetwork, FlexibleServer): their batched
// observe (one list per group the items name) and their `driftless import` listing (group by group).
import type { ExternalListing, ExternalObservation, ObserveManyItem } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { ArmRest } from "./arm-rest.ts";
import { azure, normaliseLocation } from "./config.ts";
import { listEach } from "./network-client.ts";

type InGroup = { resourceGroupName?: string | undefined };
type Listed = { name?: string; location?: string };

/** The cloud's location in the spec's spelling when both name the same region ("West Europe" is "westeurope"). */
export const observedLocation = (spec: string | undefined, cloud: string | undefined) =>
  spec && cloud && normaliseLocation(spec) === cloud ? spec : cloud;

/**
 * The list of each resource group the items name, one request per page (a group that is gone has no
 * resources), then each item's observation from its group's list (`found` undefined: not listed). A
 * group's failure is its items' own; each item's failure is its own.
 */
export async function observeInGroups<F extends InGroup, A, T extends Listed>(
  items: ReadonlyArray<ObserveManyItem<F, A>>,
  list: (rg: string) => AsyncIterable<T[]>,
  observation: (
    mr: ManagedResource<F, A>,
    rg: string,
    found: T | undefined,
  ) => ExternalObservation<F, A> | Promise<ExternalObservation<F, A>>,
): Promise<Array<ExternalObservation<F, A> | Error>> {
  const groups = new Map<string, string>();
  for (const { mr } of items) {
    const rg = mr.spec.forProvider.resourceGroupName;
    if (rg) groups.set(rg.toLowerCase(), rg);
  }
  const lists = await listEach(groups, list);
  return Promise.all(
    items.map(async ({ mr, externalName }) => {
      const rg = mr.spec.forProvider.resourceGroupName;
      const listed = rg ? lists.get(rg.toLowerCase()) : undefined;
      if (!rg || listed === undefined) return { resourceExists: false };
      if (listed instanceof Error) return listed;
      try {
        return await observation(mr, rg, listed.get(externalName.toLowerCase()));
      } catch (err) {
        return err as Error;
      }
    }),
  );
}

/** Every resource of a collection in the subscription, group by group, with its group and location (`driftless import`). */
export async function listInGroups(
  arm: ArmRest,
  collection: (rg: string) => string,
  apiVersion: string,
): Promise<ExternalListing[]> {
  const out: ExternalListing[] = [];
  await azure(async () => {
    for await (const { group, item } of arm.eachInGroups<Listed>(collection, apiVersion))
      if (item.name)
        out.push({
          externalName: item.name,
          forProvider: { resourceGroupName: group, ...(item.location ? { location: item.location } : {}) },
          // Unique only in its resource group: named and matched with it.
          parent: "resourceGroupName",
        });
  });
  return out;
}
