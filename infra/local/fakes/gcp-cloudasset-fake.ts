// Wire-protocol fake of Cloud Asset Inventory's searchAllResources (v1), the one call `driftless orphans`
// makes on Google. No emulator of Cloud Asset exists. It indexes what the Compute fake holds (networks,
// global addresses: the only GCP fake resources with labels besides the Pub/Sub emulator and the GCS fake,
// which it does not read), at the moment of the search — Google's index follows writes within minutes.
// What it keeps of the real API:
// - `GET /v1/{scope}:searchAllResources` with scope `projects/{p}`; results as ResourceSearchResult (name
//   `//compute.googleapis.com/…`, assetType, project, displayName, location, labels), `nextPageToken`.
// - `pageSize` default 100, capped at 500 (a larger one is not an error), negative refused; a page token is bound to
//   its query and scope, another one answered 400 INVALID_ARGUMENT.
// - The query: one label comparison, as the search query syntax has it — `labels.<key>=<value>` (exact,
//   case-sensitive), `labels.<key>:<value>` (the value's words, tokenized on characters other than letters,
//   digits, `_` and `&`, case-folded, found in order and consecutive) and `labels.<key>:*` (has the label).
//   Any other query is answered 400 INVALID_ARGUMENT in Google's error body, never with an unfiltered list.
import type { ComputeFake } from "./gcp-compute-fake.ts";
import {
  type FakeHttpServer,
  type FakeRequest,
  GoogleApiError,
  type Json,
  startFakeHttp,
} from "./gcp-fake-http.ts";

export interface CloudAssetFakeOptions {
  port?: number;
  /** The largest page it answers (Google caps pageSize at 500; a lower cap makes a short list page). */
  maxPageSize?: number;
}

const ASSET_TYPES = {
  networks: "compute.googleapis.com/Network",
  addresses: "compute.googleapis.com/GlobalAddress",
};
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

export async function startCloudAssetFake(
  compute: ComputeFake,
  opts: CloudAssetFakeOptions = {},
): Promise<FakeHttpServer> {
  const search = (req: FakeRequest): Json | undefined => {
    const [scopeKind, scopeRest] = req.seg;
    const m = /^(.+):searchAllResources$/.exec(scopeRest ?? "");
    if (req.method !== "GET" || scopeKind !== "projects" || !m) return undefined;
    const project = m[1] ?? "";
    const query = req.query.get("query") ?? "";
    const q = QUERY.exec(query);
    if (!q)
      throw invalid(
        `Invalid query: '${query}'. The fake answers one labels.<key>=<value>, labels.<key>:<value> or labels.<key>:* only.`,
      );
    const [, key = "", op, rawValue = ""] = q;
    if (op === "=" && rawValue === "*")
      throw invalid(`Invalid query: '${query}'. An exact match cannot hold a wildcard.`);
    const value = rawValue.startsWith('"') ? (JSON.parse(rawValue) as string) : rawValue;
    const matches = (v: string | undefined) =>
      v !== undefined && (op === "=" ? v === value : value === "*" || has(v, value));
    const size = Number(req.query.get("pageSize") ?? 0);
    if (!Number.isInteger(size) || size < 0) throw invalid(`Invalid page size: ${req.query.get("pageSize")}`);
    const pageSize = Math.min(size || 100, opts.maxPageSize ?? 500);
    const binding = `projects/${project}|${query}`;
    const token = req.query.get("pageToken");
    let offset = 0;
    if (token) {
      const [bound, at] = Buffer.from(token, "base64url").toString("utf8").split("\n");
      offset = Number(at);
      if (bound !== binding || !Number.isInteger(offset) || offset < 0)
        throw invalid("Invalid page token, it does not match the request.");
    }
    const results = compute
      .list(project)
      .filter(({ doc }) => {
        const labels = (doc.labels ?? {}) as Record<string, string>;
        return matches(labels[key]);
      })
      .map(({ collection, doc }) => ({
        name: `//compute.googleapis.com/projects/${project}/global/${collection}/${String(doc.name)}`,
        assetType: ASSET_TYPES[collection],
        project: `projects/${project}`,
        displayName: doc.name,
        location: "global",
        labels: doc.labels ?? {},
      }));
    const next = offset + pageSize < results.length;
    return {
      results: results.slice(offset, offset + pageSize),
      ...(next
        ? { nextPageToken: Buffer.from(`${binding}\n${offset + pageSize}`).toString("base64url") }
        : {}),
    };
  };
  return startFakeHttp({
    name: "Cloud Asset Inventory",
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: ["/v1"],
    keyOf: (r) => `${r.method} ${(r.seg[1] ?? "").split(":")[1] ?? "unknown"}`,
    route: search,
  });
}
