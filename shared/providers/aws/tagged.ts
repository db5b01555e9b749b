// AWS's tag search for `driftless orphans`: the Resource Groups Tagging API's GetResources, one filter per
// call (AWS ANDs the TagFilters of one call), 100 per page, in the ProviderConfig's region (or --region).
// It returns what supports tagging through it; resources of services outside it are not seen (docs/cli.md).
import {
  GetResourcesCommand,
  type GetResourcesCommandOutput,
  ResourceGroupsTaggingAPIClient,
} from "@aws-sdk/client-resource-groups-tagging-api";
import type { TaggedResource, TagSearch } from "../../api/tagged.ts";
import { awsClientConfig, ClientCache, sdkOptions } from "./config.ts";

const clients = new ClientCache((c) => new ResourceGroupsTaggingAPIClient(sdkOptions(c)));

/** `ec2:vpc` from `arn:aws:ec2:us-east-1:123456789012:vpc/vpc-1`; `sqs` from an ARN with no resource type. */
export function typeOfArn(arn: string): string {
  const [, , service = "", , , ...rest] = arn.split(":");
  const resource = rest.join(":");
  const slash = resource.search(/[/:]/);
  return slash > 0 ? `${service}:${resource.slice(0, slash)}` : service;
}

export const searchAwsTags: TagSearch = async (ctx, filters, opts) => {
  const cfg = await awsClientConfig(ctx, opts.region);
  const client = clients.get(cfg);
  const found = new Map<string, TaggedResource>();
  for (const f of filters) {
    let token: string | undefined;
    do {
      const page: GetResourcesCommandOutput = await client.send(
        new GetResourcesCommand({
          TagFilters: [{ Key: f.key, ...(f.value !== undefined ? { Values: [f.value] } : {}) }],
          ResourcesPerPage: 100,
          ...(token ? { PaginationToken: token } : {}),
        }),
      );
      for (const m of page.ResourceTagMappingList ?? []) {
        if (!m.ResourceARN) continue;
        found.set(m.ResourceARN, {
          id: m.ResourceARN,
          type: typeOfArn(m.ResourceARN),
          tags: Object.fromEntries((m.Tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""])),
          location: m.ResourceARN.split(":")[3] || cfg.region,
        });
      }
      token = page.PaginationToken || undefined;
    } while (token);
  }
  return [...found.values()];
};
