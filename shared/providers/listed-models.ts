// Batched drift checks of generated kinds from a cloud's list calls, where no published source says a list
// answers a type's whole model (Cloud Control ListResources, ARM's collection GET): a listed model is used
// for an object only if it carries everything the plan compares; otherwise the object is read alone, and a
// type whose read carried what its list left out is read per resource from then on.
// Decisions: docs/adr/0012-awscc-batched-drift-checks.md, docs/adr/0013-azure-batched-drift-checks.md.
import type { ExternalObservation, ObserveManyItem } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";

type Json = Record<string, unknown>;
type MR = ManagedResource<Json, Json>;
const isPlainObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The paths (`a.b`, `atProvider.c`) of what the plan compares for `mr` that `obs` lacks: its forProvider's
 * set members at any depth for which `compared(topLevelName)` holds (references and their selectors never
 * are), and what its status.atProvider holds, at any depth.
 */
export function uncarried(
  mr: MR,
  obs: ExternalObservation<Json, Json>,
  compared: (member: string) => boolean,
): string[] {
  const out: string[] = [];
  const walk = (want: unknown, have: unknown, at: string) => {
    // A null wanted value (a status attribute the cloud answered null) asks for nothing to be carried.
    if (want === null) return;
    if (have === undefined || have === null) return void out.push(at);
    if (!isPlainObject(want) || !isPlainObject(have)) return;
    for (const [k, v] of Object.entries(want))
      if (v !== undefined && !/(Ref|Refs|Selector)$/.test(k)) walk(v, have[k], `${at}.${k}`);
  };
  const observed = obs.observed ?? {};
  for (const [k, v] of Object.entries(mr.spec.forProvider))
    if (v !== undefined && !/(Ref|Refs|Selector)$/.test(k) && compared(k)) walk(v, observed[k], k);
  // What the status holds at any depth: a list without a read-only member (an instanceView) would make the
  // plan rewrite the status, and a GET put it back, at every check.
  const atProvider = obs.atProvider ?? {};
  for (const [k, v] of Object.entries(mr.status?.atProvider ?? {}))
    if (v !== undefined) walk(v, atProvider[k], `atProvider.${k}`);
  return out;
}

/** Runs `f` over `items`, `n` at a time, results in order. */
export async function lanes<T, R>(items: readonly T[], n: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await f(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  return out;
}

/**
 * What `pages` shows of `wanted` (keys), by key. Paging stops once every wanted one was seen, or when the
 * pages already read outnumber the wanted ones still unseen (reading those alone is then cheaper).
 */
export async function listedAmong<T>(
  pages: AsyncIterable<ReadonlyMap<string, T>>,
  wanted: ReadonlySet<string>,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  let read = 0;
  for await (const page of pages) {
    read++;
    for (const [key, model] of page) if (wanted.has(key)) found.set(key, model);
    if (found.size >= wanted.size || read >= wanted.size - found.size) break;
  }
  return found;
}

/**
 * Each item's observation from its listed model when that carries what the plan compares, else from its
 * own read (`observe`): an absence or a difference the list suggests is only ever concluded from a read.
 * `incomplete` is told when a read carried what the list left out (the type's list is not whole).
 */
export function observeListed(
  items: ReadonlyArray<ObserveManyItem<Json, Json>>,
  o: {
    listed: (item: ObserveManyItem<Json, Json>) => Promise<ExternalObservation<Json, Json> | undefined>;
    observe: (item: ObserveManyItem<Json, Json>) => Promise<ExternalObservation<Json, Json>>;
    compared: (member: string) => boolean;
    incomplete: (omitted: string[]) => void;
    concurrency: number;
  },
): Promise<Array<ExternalObservation<Json, Json> | Error>> {
  return lanes(items, o.concurrency, async (item) => {
    try {
      const mr = item.mr as MR;
      const fromList = await o.listed(item);
      const missing = fromList ? uncarried(mr, fromList, o.compared) : [];
      if (fromList && missing.length === 0) return fromList;
      const read = await o.observe(item);
      if (fromList && read.resourceExists) {
        const still = new Set(uncarried(mr, read, o.compared));
        const omitted = missing.filter((m) => !still.has(m));
        if (omitted.length > 0) o.incomplete(omitted);
      }
      return read;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  });
}
