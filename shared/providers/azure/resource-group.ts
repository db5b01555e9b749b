import type { z } from "zod";
import {
  ResourceGroup,
  type ResourceGroupAtProvider,
  type ResourceGroupForProvider,
} from "../../api/azure/resources.ts";
import type {
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { deleted } from "../deleted.ts";
import { armProvider } from "./arm-provider.ts";
import { type ArmResource, type ArmRest, RESOURCE_GROUPS_API as RESOURCES_API } from "./arm-rest.ts";
import { availabilityOf, azure, codeIs, isNotFound } from "./config.ts";
import { observedLocation } from "./in-group.ts";

type F = z.infer<typeof ResourceGroupForProvider>;
type A = z.infer<typeof ResourceGroupAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
/** A resource group as ARM's REST API answers it. */
type CloudGroup = ArmResource<{ provisioningState?: string }>;

/**
 * Resource groups one batched observe covers. ARM chooses the size of a list page: the list's only size
 * knob, $top, caps the results ("the number of results to return"), it does not page them.
 */

/** What observe reports of a group as ARM returned it, by a GET or in a list page. */
function observationOf(fp: F, rg: CloudGroup): Observation {
  const observed: Partial<F> = {};
  // ARM stores "westeurope": the user's "West Europe" names the same region and is no drift.
  if (rg.location) observed.location = observedLocation(fp.location, rg.location);
  // An absent tag map is not late-initialized as {} into every spec; a managed or non-empty one is compared.
  const tags = rg.tags ?? {};
  if (fp.tags !== undefined || Object.keys(tags).length > 0) observed.tags = tags;
  const provisioningState = rg.properties?.provisioningState;
  return {
    resourceExists: true,
    observed,
    atProvider: { ...(rg.id ? { id: rg.id } : {}), ...(provisioningState ? { provisioningState } : {}) },
    ...availabilityOf(provisioningState),
  };
}

class ResourceGroupClient implements ExternalClient<F, A> {
  readonly #arm: ArmRest;
  constructor(arm: ArmRest) {
    this.#arm = arm;
  }

  #path(name?: string) {
    return this.#arm.sub(`/resourcegroups${name === undefined ? "" : `/${encodeURIComponent(name)}`}`);
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    return azure(async () => {
      let rg: CloudGroup;
      try {
        rg = await this.#arm.call<CloudGroup>("GET", this.#path(name), RESOURCES_API);
      } catch (err) {
        // A missing subscription is a 404 too, but it is a configuration error, not an absent group.
        if (isNotFound(err) && !codeIs(err, "SubscriptionNotFound")) return { resourceExists: false };
        throw err;
      }
      return observationOf(mr.spec.forProvider, rg);
    });
  }

  /** Resource Groups - List of the subscription, one request per page (ARM names are case-insensitive). */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Observation[]> {
    const listed = new Map<string, CloudGroup>();
    await azure(async () => {
      for await (const page of this.#arm.pages<CloudGroup>(this.#path(), RESOURCES_API)) {
        for (const rg of page) if (rg.name) listed.set(rg.name.toLowerCase(), rg);
      }
    });
    return items.map(({ mr, externalName }) => {
      const rg = listed.get(externalName.toLowerCase());
      return rg ? observationOf(mr.spec.forProvider, rg) : { resourceExists: false };
    });
  }

  /** Every resource group of the subscription, with its location (`driftless import`). */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    await azure(async () => {
      for await (const page of this.#arm.pages<CloudGroup>(this.#path(), RESOURCES_API))
        for (const rg of page)
          if (rg.name)
            out.push({ externalName: rg.name, forProvider: rg.location ? { location: rg.location } : {} });
    });
    return out;
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a resource group needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    if (!fp.location)
      throw new InvalidSpecError("spec.forProvider.location is required to create a resource group");
    const location = fp.location;
    await azure(() =>
      this.#arm.call("PUT", this.#path(name), RESOURCES_API, {
        location,
        ...(fp.tags !== undefined ? { tags: fp.tags } : {}),
      }),
    );
    return {};
  }

  async update(mr: MR, name: string) {
    const tags = mr.spec.forProvider.tags;
    // Location is immutable (the engine refuses it); tags are the one thing a PATCH changes, replaced whole.
    if (tags !== undefined)
      await azure(() => this.#arm.call("PATCH", this.#path(name), RESOURCES_API, { tags }));
    return {};
  }

  async delete(_mr: MR, name: string) {
    // Start the long-running delete and return: the engine requeues (Ready=False, Deleting) until
    // observe no longer finds the group, so no worker waits minutes on a poll.
    await azure(() => deleted(() => this.#arm.call("DELETE", this.#path(name), RESOURCES_API), isNotFound));
  }
}

export const resourceGroupProvider = armProvider({
  definition: ResourceGroup,
  resourceType: "Microsoft.Resources/subscriptions/resourceGroups",
  listCall: "Resource Groups - List of the subscription",
  client: (arm) => new ResourceGroupClient(arm),
});
