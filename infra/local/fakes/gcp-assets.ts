// What the Google fakes tell the Cloud Asset fake: each fake reports the resources it holds, from its own
// state, as Cloud Asset Inventory indexes them (full resource name, asset type, project, location, labels,
// the resource's JSON). In one process a fake is read directly; the local stack runs the fakes as separate
// processes, so each also answers `GET /__fake/assets` (beside `/__fake/stats`, outside any Google API).

type Json = Record<string, unknown>;

/** One resource as Cloud Asset Inventory indexes it. */
export interface FakeAsset {
  /** The full resource name: `//compute.googleapis.com/projects/p/regions/r/addresses/a`. */
  name: string;
  /** `compute.googleapis.com/Address`, `storage.googleapis.com/Bucket`, … */
  assetType: string;
  /** The project's id (Google answers its number; the fakes know no numbers). */
  project: string;
  /** A region, zone, multi-region or `global`, lower-case. */
  location: string;
  labels: Record<string, string>;
  /** The resource as its own API returns it (listAssets' `resource.data`). */
  data: Json;
}

/** A fake whose resources the Cloud Asset fake indexes. */
export interface AssetSource {
  assets(): FakeAsset[] | Promise<FakeAsset[]>;
}

export const ASSETS_PATH = "/__fake/assets";

/** A fake in another process, read at its `/__fake/assets` each time the index is searched. */
export function assetSourceAt(url: string): AssetSource {
  return {
    async assets() {
      const res = await fetch(`${url}${ASSETS_PATH}`, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`${url}${ASSETS_PATH} answered ${res.status}`);
      return ((await res.json()) as { assets: FakeAsset[] }).assets;
    },
  };
}

/** A resource's `labels` map (none: empty). */
export const labelsOf = (v: unknown): Record<string, string> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : {};

/**
 * A Compute resource's asset from its path or selfLink (`…/compute/v1/projects/p/regions/r/addresses/a`) and its service's resource kind (`Address`, `GlobalAddress`): Cloud Asset
 * names the type after the Compute service (`compute.googleapis.com/GlobalAddress`).
 */
export function computeAsset(path: string, kind: string, doc: Json): FakeAsset {
  const rel = path.slice(path.indexOf("projects/"));
  const [, project = "", scope = "", where = ""] = rel.split("/");
  return {
    name: `//compute.googleapis.com/${rel}`,
    assetType: `compute.googleapis.com/${kind}`,
    project,
    location: scope === "global" ? "global" : where,
    labels: labelsOf(doc.labels),
    data: doc,
  };
}

/** A resource-oriented API's resource (AIP-122 name `projects/p/locations/l/…`) as its asset. */
export function namedAsset(host: string, assetType: string, name: string, doc: Json): FakeAsset {
  const segs = name.split("/");
  const at = (coll: string) => {
    const i = segs.indexOf(coll);
    return i >= 0 ? segs[i + 1] : undefined;
  };
  return {
    name: `//${host}/${name}`,
    assetType,
    project: at("projects") ?? "",
    location: at("locations") ?? at("regions") ?? at("zones") ?? "global",
    labels: labelsOf(doc.labels),
    data: doc,
  };
}
