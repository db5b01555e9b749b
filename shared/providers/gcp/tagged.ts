// Google's label search for `driftless orphans`: Cloud Asset Inventory's searchAllResources over the
// ProviderConfig's project (`labels.<key>=<value>`, 500 per page, followed by pageToken), through the
// project's GoogleRestClient to the checked `spec.endpoint.cloudAsset` (default Google's own). It sees what
// Cloud Asset indexes (most resource types with labels; the index follows writes within minutes) and needs
// cloudasset.assets.searchAllResources on the project. Labels are Google's tag format: lower-case keys of
// letters, digits, `-` and `_`; the ownership tag's key (with `.` and `/`) is on no Google resource.
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import type { TaggedResource, TagSearch } from "../../api/tagged.ts";
import { checkEndpoint } from "../endpoints.ts";
import { gcp, gcpClientConfig } from "./config.ts";
import { authFor, GoogleRestClient } from "./google-rest.ts";

export const CLOUD_ASSET_PRODUCTION_ENDPOINT = "https://cloudasset.googleapis.com";
/** Cloud Asset's largest page of searchAllResources. */
const PAGE_SIZE = 500;
const LABEL_KEY = /^[a-z][a-z0-9_-]{0,62}$/;

interface SearchPage {
  results?: Array<{ name?: string; assetType?: string; location?: string; labels?: Record<string, string> }>;
  nextPageToken?: string;
}

/** A Cloud Asset query value: bare when it holds only letters, digits, `-` and `_` (every label value), else quoted. */
const term = (v: string) => (/^[a-z0-9_-]+$/.test(v) ? v : JSON.stringify(v));

export const searchGcpTags: TagSearch = async (ctx, filters) => {
  const cfg = await gcpClientConfig(ctx);
  const raw = (ctx.providerConfig.spec as GcpProviderConfigSpec).endpoint?.cloudAsset;
  const base = raw
    ? checkEndpoint("gcp", "spec.endpoint.cloudAsset", raw).url
    : CLOUD_ASSET_PRODUCTION_ENDPOINT;
  const client = new GoogleRestClient(`${base}/v1`, authFor(base, cfg.credentials), {
    api: "Cloud Asset Inventory API",
    field: "spec.endpoint.cloudAsset",
  });
  const found = new Map<string, TaggedResource>();
  for (const f of filters) {
    if (!LABEL_KEY.test(f.key)) continue;
    // `=` is the exact, case-sensitive match; `:` would match words of the value (pc-a finds pc-a-b too).
    const query = f.value !== undefined ? `labels.${f.key}=${term(f.value)}` : `labels.${f.key}:*`;
    let token: string | undefined;
    do {
      const page: SearchPage = await gcp(() =>
        client.request<SearchPage>(
          "GET",
          `/projects/${encodeURIComponent(cfg.projectId)}:searchAllResources`,
          {
            query: { query, pageSize: String(PAGE_SIZE), ...(token ? { pageToken: token } : {}) },
            rateLimit: ctx.rateLimit,
          },
        ),
      );
      for (const r of page.results ?? []) {
        if (!r.name) continue;
        found.set(r.name, {
          id: r.name,
          type: r.assetType ?? "",
          tags: r.labels ?? {},
          ...(r.location ? { location: r.location } : {}),
        });
      }
      token = page.nextPageToken || undefined;
    } while (token);
  }
  return [...found.values()];
};
