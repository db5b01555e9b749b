// Wire-protocol fake of Cloud Asset Inventory (v1): searchAllResources, the call `driftless orphans` makes on
// Google, and listAssets. No emulator of Cloud Asset exists. It indexes every Google fake it is given (the
// generic fake of the generated kinds, Compute, Cloud SQL, GCS: gcp-assets.ts), each read from its own state
// at the moment of the call — Google's index follows writes within minutes. The local stack runs it with
// the other fakes' URLs (`--source`, repeated). What it keeps of the real API:
// - `GET /v1/{scope}:searchAllResources` with scope `projects/{p}`; results as ResourceSearchResult (name
//   `//compute.googleapis.com/…`, assetType, project, displayName, location, labels, parentFullResourceName,
//   parentAssetType), `nextPageToken`; `assetTypes` (repeated; a regular expression matches whole types).
// - `GET /v1/{parent}/assets` (listAssets) with parent `projects/{p}`: Asset (name, assetType, updateTime,
//   ancestors, and with `contentType=RESOURCE` the resource: version, discoveryName, parent, data, location),
//   `readTime`, `nextPageToken`; `assetTypes` as above. Other content types and `readTime` are refused.
// - `pageSize` default 100, capped at 500 (search) and 1000 (listAssets) (a larger one is not an error),
//   negative refused; a page token is bound to its query and scope, another one answered 400 INVALID_ARGUMENT.
// - The search query: empty (everything), or one label comparison, as the search query syntax has it —
//   `labels.<key>=<value>` (exact, case-sensitive), `labels.<key>:<value>` (the value's words, tokenized on
//   characters other than letters, digits, `_` and `&`, case-folded, found in order and consecutive) and
//   `labels.<key>:*` (has the label). Any other query, or an `orderBy`, is answered 400 INVALID_ARGUMENT in
//   Google's error body, never with an unfiltered or unordered list.
import { parseArgs } from "node:util";
import { type AssetSource, assetSourceAt, type FakeAsset } from "./gcp-assets.ts";
import {
  type FakeHttpServer,
  type FakeRequest,
  GoogleApiError,
  type Json,
  now,
  startFakeHttp,
} from "./gcp-fake-http.ts";

export interface CloudAssetFakeOptions {
  port?: number;
  /** The largest page it answers (Google caps searchAllResources at 500; a lower cap makes a short list page). */
  maxPageSize?: number;
}

const QUERY = /^labels\.([a-z][a-z0-9_-]{0,62})([:=])([A-Za-z0-9_-]{1,63}|\*|"(?:[^"\\]|\\.)*")$/;
const words = (v: string) =>
  v
    .split(/[^A-Za-z0-9_&]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
/** The has operator: the query's words appear in the value's, in order and consecutive. */
const has = (value: string, query: string) => {
  const [v, q] = [words(value), words(query)];
  return q.length > 0 && v.some((_, i) => q.every((w, j) => v[i + j] === w));
};

const invalid = (message: string) => new GoogleApiError(400, "badRequest", message, "INVALID_ARGUMENT");

/** A label query as a predicate over an asset's labels (empty: every asset). */
function labelMatcher(query: string): (labels: Record<string, string>) => boolean {
  if (query === "") return () => true;
  const q = QUERY.exec(query);
  if (!q)
    throw invalid(
      `Invalid query: '${query}'. The fake answers an empty query or one labels.<key>=<value>, labels.<key>:<value> or labels.<key>:* only.`,
    );
  const [, key = "", op, rawValue = ""] = q;
  if (op === "=" && rawValue === "*")
    throw invalid(`Invalid query: '${query}'. An exact match cannot hold a wildcard.`);
  const value = rawValue.startsWith('"') ? (JSON.parse(rawValue) as string) : rawValue;
  return (labels) => {
    const v = labels[key];
    return v !== undefined && (op === "=" ? v === value : value === "*" || has(v, value));
  };
}

/** `assetTypes` (repeated): each an exact type or a regular expression over the whole type. */
function typeMatcher(req: FakeRequest): (type: string) => boolean {
  const types = req.query.getAll("assetTypes").flatMap((t) => t.split(","));
  if (types.length === 0) return () => true;
  const res = types.map((t) => {
    try {
      return new RegExp(`^(?:${t})$`);
    } catch {
      throw invalid(`Invalid asset type: '${t}'.`);
    }
  });
  return (type) => res.some((re) => re.test(type));
}

/** One page of `all` from the request's pageSize and pageToken, the token bound to `binding`. */
function paged<T>(req: FakeRequest, all: T[], binding: string, cap: number): { page: T[]; next?: string } {
  const size = Number(req.query.get("pageSize") ?? 0);
  if (!Number.isInteger(size) || size < 0) throw invalid(`Invalid page size: ${req.query.get("pageSize")}`);
  const pageSize = Math.min(size || 100, cap);
  const token = req.query.get("pageToken");
  let offset = 0;
  if (token) {
    const [bound, at] = Buffer.from(token, "base64url").toString("utf8").split("\n");
    offset = Number(at);
    if (bound !== binding || !Number.isInteger(offset) || offset < 0)
      throw invalid("Invalid page token, it does not match the request.");
  }
  const next = offset + pageSize < all.length;
  return {
    page: all.slice(offset, offset + pageSize),
    ...(next ? { next: Buffer.from(`${binding}\n${offset + pageSize}`).toString("base64url") } : {}),
  };
}

const projectParent = (project: string) => `//cloudresourcemanager.googleapis.com/projects/${project}`;

export async function startCloudAssetFake(
  sources: readonly AssetSource[],
  opts: CloudAssetFakeOptions = {},
): Promise<FakeHttpServer> {
  /** Every asset of the project the sources hold now, by name. */
  const index = async (project: string): Promise<FakeAsset[]> => {
    let all: FakeAsset[][];
    try {
      all = await Promise.all(sources.map((s) => s.assets()));
    } catch (err) {
      throw new GoogleApiError(
        503,
        "backendError",
        `The index cannot be read: ${String(err)}`,
        "UNAVAILABLE",
      );
    }
    return all
      .flat()
      .filter((a) => a.project === project)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  };

  const search = async (req: FakeRequest, project: string): Promise<Json> => {
    const query = req.query.get("query") ?? "";
    const matches = labelMatcher(query);
    const typed = typeMatcher(req);
    if (req.query.get("orderBy")) throw invalid("The fake does not answer orderBy.");
    const results = (await index(project))
      .filter((a) => typed(a.assetType) && matches(a.labels))
      .map((a) => ({
        name: a.name,
        assetType: a.assetType,
        project: `projects/${project}`,
        displayName: a.name.split("/").at(-1),
        location: a.location,
        labels: a.labels,
        parentFullResourceName: projectParent(project),
        parentAssetType: "cloudresourcemanager.googleapis.com/Project",
      }));
    const binding = `projects/${project}|${query}|${req.query.getAll("assetTypes").join(",")}`;
    const { page, next } = paged(req, results, binding, opts.maxPageSize ?? 500);
    return { results: page, ...(next ? { nextPageToken: next } : {}) };
  };

  const listAssets = async (req: FakeRequest, project: string): Promise<Json> => {
    const contentType = req.query.get("contentType") ?? "CONTENT_TYPE_UNSPECIFIED";
    if (contentType !== "CONTENT_TYPE_UNSPECIFIED" && contentType !== "RESOURCE")
      throw invalid(`The fake answers contentType RESOURCE or none, not ${contentType}.`);
    if (req.query.get("readTime")) throw invalid("The fake keeps no history: readTime is not answered.");
    const typed = typeMatcher(req);
    const readTime = now();
    const assets = (await index(project))
      .filter((a) => typed(a.assetType))
      .map((a) => ({
        name: a.name,
        assetType: a.assetType,
        updateTime: readTime,
        ancestors: [`projects/${project}`],
        ...(contentType === "RESOURCE"
          ? {
              resource: {
                version: "v1",
                discoveryName: a.assetType.split("/").at(-1),
                parent: projectParent(project),
                data: a.data,
                location: a.location,
              },
            }
          : {}),
      }));
    const binding = `projects/${project}|${contentType}|${req.query.getAll("assetTypes").join(",")}`;
    const { page, next } = paged(req, assets, binding, Math.min(opts.maxPageSize ?? 1000, 1000));
    return { readTime, assets: page, ...(next ? { nextPageToken: next } : {}) };
  };

  const route = (req: FakeRequest): Promise<Json> | undefined => {
    if (req.method !== "GET" || req.seg[0] !== "projects") return undefined;
    const search_ = /^(.+):searchAllResources$/.exec(req.seg[1] ?? "");
    if (search_ && req.seg.length === 2) return search(req, search_[1] ?? "");
    if (req.seg.length === 3 && req.seg[2] === "assets") return listAssets(req, req.seg[1] ?? "");
    return undefined;
  };
  return startFakeHttp({
    name: "Cloud Asset Inventory",
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: ["/v1"],
    keyOf: (r) => `${r.method} ${(r.seg[1] ?? "").split(":")[1] ?? r.seg[2] ?? "unknown"}`,
    route,
  });
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      /** A Google fake's URL whose `/__fake/assets` is indexed; repeated. */
      source: { type: "string", multiple: true, default: [] },
    },
  });
  const fake = await startCloudAssetFake((values.source ?? []).map(assetSourceAt), {
    port: Number(values.port),
  });
  process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url })}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
