// The IAM names an API's permissions take where Google's roles spell them otherwise than its host and its
// collections: read from the roles themselves (google-iam-permissions.json.gz), never guessed. Translation's
// host is translate.googleapis.com, and Google's predefined roles hold `cloudtranslate.glossaries.get`,
// `cloudtranslate.models.get`, `cloudtranslate.datasets.get`…: the one prefix holding several of the API's
// collections is the API's. Its glossary entries are `cloudtranslate.glossaryentries.*` in the roles: the one
// spelling of that collection (case and number aside) under the prefix.

/** A collection as Google's names spell it in several ways: lowercase and singular (`glossaryEntries`, `glossaryentries`; `policies`, `policy`). */
export function collectionKey(c: string): string {
  const l = c.toLowerCase();
  if (l.endsWith("ies")) return `${l.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/.test(l)) return l.slice(0, -2);
  return l.endsWith("s") && !l.endsWith("ss") ? l.slice(0, -1) : l;
}

/** The roles' names by `service.collectionKey.verb`: every spelling Google uses for that one thing. */
export type IamIndex = ReadonlyMap<string, readonly string[]>;

const indexes = new WeakMap<ReadonlySet<string>, IamIndex>();

export function iamIndexOf(known: ReadonlySet<string>): IamIndex {
  const cached = indexes.get(known);
  if (cached) return cached;
  const index = new Map<string, string[]>();
  for (const name of known) {
    const [s, c, v] = name.split(".");
    if (!s || !c || !v || name.split(".").length !== 3) continue;
    const key = `${s}.${collectionKey(c)}.${v}`;
    index.set(key, [...(index.get(key) ?? []), name]);
  }
  indexes.set(known, index);
  return index;
}

/**
 * The one name the roles hold for this service, verb and any of the collection's spellings (case and number
 * aside), or none where they hold none or several (the data does not decide).
 */
export function spelledByRoles(
  index: IamIndex,
  service: string,
  spellings: readonly string[],
  verb: string,
): string | undefined {
  const names = new Set(spellings.flatMap((c) => index.get(`${service}.${collectionKey(c)}.${verb}`) ?? []));
  return names.size === 1 ? [...names][0] : undefined;
}

/** An API's resource collections (each as its spellings) and the prefixes derived from its own names. */
export interface ApiCollections {
  /** The API's host (translate.googleapis.com). */
  api: string;
  /** The service prefixes its own names give (host, package): never a derived one. */
  standard: readonly string[];
  /** Each resource's collection, as the spellings the generator tries (`glossaries`, `Glossaries`…). */
  collections: ReadonlyArray<readonly string[]>;
}

/** How many of an API's collections a prefix must hold (`get`) before it is taken as the API's. */
export const MIN_COLLECTIONS = 2;

/**
 * Per API, the prefix other than its standard ones under which Google's roles hold `get` of at least
 * MIN_COLLECTIONS and more than half of its collections, strictly more than any other prefix does, its own
 * included: the API's IAM service name (`cloudtranslate` for translate.googleapis.com, 5 of its 6). None where
 * two prefixes tie (Edge Network's collections are as many `compute.*` as `edgenetwork.*`) or none holds most
 * (Ad Manager's `sites` and `orders` are a hardware service's).
 */
export function iamServicesOf(
  apis: readonly ApiCollections[],
  known: ReadonlySet<string>,
): Map<string, string> {
  const index = iamIndexOf(known);
  // Which prefixes hold `get` of a collection key.
  const holders = new Map<string, Set<string>>();
  for (const key of index.keys()) {
    const [s, c, v] = key.split(".") as [string, string, string];
    if (v !== "get") continue;
    const set = holders.get(c) ?? new Set<string>();
    set.add(s);
    holders.set(c, set);
  }
  const out = new Map<string, string>();
  for (const a of apis) {
    const held = new Map<string, number>();
    const seen = new Set<string>();
    for (const spellings of a.collections) {
      const own = collectionKey(spellings[0] ?? "");
      if (seen.has(own)) continue;
      seen.add(own);
      const prefixes = new Set(spellings.flatMap((c) => [...(holders.get(collectionKey(c)) ?? [])]));
      for (const p of prefixes) held.set(p, (held.get(p) ?? 0) + 1);
    }
    const [first, second] = [...held].sort((x, y) => y[1] - x[1]);
    if (
      first &&
      !a.standard.includes(first[0]) &&
      first[1] >= MIN_COLLECTIONS &&
      first[1] * 2 > seen.size &&
      (!second || second[1] < first[1])
    )
      out.set(a.api, first[0]);
  }
  return out;
}
