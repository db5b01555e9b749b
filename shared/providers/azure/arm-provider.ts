// The provider of a hand-written kind over Resource Manager: what every such kind declares the same way —
// its cloud events (ARM's write and delete of its resource type) and a batched observe of one ARM list call
// — around its own client, built on the ProviderConfig's ARM access (arm-rest.ts).
import type { z } from "zod";
import { byResourceUri, type CloudEventsDeclaration } from "../../api/cloud-events.ts";
import { type ConnectContext, defineProvider, type ExternalClient } from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { type ArmRest, armRest } from "./arm-rest.ts";

/** Resources one batched observe covers (one list call, paged; ARM chooses the page size). */
const MAX_ITEMS = 1000;

/**
 * The cloud events of an ARM resource type (`Microsoft.Network/virtualNetworks/subnets`): its write and
 * delete operations; the external name is the name after the type's last segment in the resourceUri.
 */
export const armEvents = (resourceType: string): CloudEventsDeclaration => ({
  azure: {
    operations: [`${resourceType}/write`, `${resourceType}/delete`],
    externalNames: byResourceUri(resourceType.slice(resourceType.lastIndexOf("/") + 1)),
  },
});

/**
 * A Resource Manager kind's provider: its definition, its resource type (the cloud events), its list
 * call's name in Azure's REST reference (the batched observe) and its client over the ARM access.
 */
export function armProvider<FS extends AnyObjectSchema, AS extends AnyObjectSchema>(o: {
  definition: ManagedKindDef<FS, AS>;
  resourceType: string;
  listCall: string;
  homeParents?: Readonly<Record<string, string>>;
  client(
    arm: ArmRest,
    ctx: ConnectContext<AzureProviderConfigSpec>,
  ): ExternalClient<z.infer<FS>, z.infer<AS>>;
}) {
  return defineProvider({
    definition: o.definition,
    cloudEvents: armEvents(o.resourceType),
    ...(o.homeParents ? { homeParents: o.homeParents } : {}),
    observeMany: { calls: o.listCall, maxItems: MAX_ITEMS },
    async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
      return o.client(await armRest(ctx), ctx);
    },
  });
}
