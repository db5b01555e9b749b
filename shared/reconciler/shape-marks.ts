// Which shapes of a kind hold objects with the external-key index label (api/cloud-events.ts): one ConfigMap,
// driftless-system/driftless-shapes, one key per shape (its CRD name, e.g. `queues.sqs.aws.m.driftless.dev`).
// A cloud event's resolver (cloud-events/resolve.ts) LISTs only the shapes that may hold its resource.
//
// A shape's value, and who writes it:
// - absent: nothing known. A resolver asks it, checking first whether it holds any labelled object (one
//   LIST, `limit=1`), and records the answer: `unused` or `in-use`. Deleting the ConfigMap is therefore
//   safe: every shape is asked again.
// - `unused`: no labelled object when it was written. Resolvers skip the shape, caching that for less than
//   SHAPE_MARKS_CACHE_MS from when they asked.
// - `pending <time>`: the engine wants to label an object in an `unused` shape. Resolvers ask the shape again.
// - `in-use`: labelled objects may exist; written by the engine before the first label of a shape (from
//   absent at once, from `pending` only SHAPE_MARK_WAIT_MS after it saw `pending`: longer than any resolver
//   trusts an `unused`), or by a resolver that found labelled objects. Never changes again.
//
// Every change is a write guarded by the ConfigMap's resourceVersion (or its create), so of an engine and a
// resolver racing on one shape, the second re-reads and decides again: `unused` is written only over an
// absent value that no engine changed meanwhile. Hence no resolver skips a shape that holds a labelled object
// when it asks: the label was written after `in-use`, `in-use` at least SHAPE_MARK_WAIT_MS after `pending`,
// and `pending` after the resolver read `unused` — later than its cache lasts.
import { SYSTEM_NAMESPACE } from "../api/claims/meta.ts";
import type { ResourceType } from "../api/meta.ts";
import { isConflict, isNotFound, type Kube, type KubeObject } from "../kube/client.ts";

export const SHAPE_MARKS: ResourceType = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};
export const SHAPE_MARKS_REF = { namespace: SYSTEM_NAMESPACE, name: "driftless-shapes" } as const;

/** How long a resolver trusts the marks it read (from when it sent the read). */
export const SHAPE_MARKS_CACHE_MS = 30_000;
/** How long a shape stays `pending` before the engine marks it `in-use`: longer than SHAPE_MARKS_CACHE_MS. */
export const SHAPE_MARK_WAIT_MS = 60_000;
/**
 * A `pending` written by another container counts from its written time less this: the bound assumed on the
 * functions' clock skew plus a write's latency. A container that saw `pending` itself counts from then.
 */
export const SHAPE_MARK_CLOCK_MARGIN_MS = 60_000;

export type ShapeMarkValue = "in-use" | "unused" | `pending ${string}`;

/** A shape's mark as read. */
export type ShapeUse =
  | { state: "absent" }
  | { state: "unused" }
  | { state: "pending"; since: string }
  | { state: "in-use" };

/** A shape's key in the marks: its CRD's name. */
export const shapeKeyOf = (def: Pick<ResourceType, "group" | "plural">) => `${def.plural}.${def.group}`;

export function shapeUseOf(value: string | undefined): ShapeUse {
  if (value === undefined) return { state: "absent" };
  if (value === "unused") return { state: "unused" };
  if (value.startsWith("pending ")) return { state: "pending", since: value.slice("pending ".length) };
  // "in-use", or anything this version does not know: asking the shape is always safe.
  return { state: "in-use" };
}

/** The marks as read: the ConfigMap's data and resourceVersion (none: it does not exist). */
export interface ShapeMarks {
  data: Readonly<Record<string, string>>;
  resourceVersion: string | undefined;
}

interface MarksObject extends KubeObject {
  data?: Record<string, string>;
}

export async function readShapeMarks(kube: Pick<Kube, "get">): Promise<ShapeMarks> {
  const cm = await kube.get<MarksObject>(SHAPE_MARKS, SHAPE_MARKS_REF.name, SHAPE_MARKS_REF.namespace);
  return { data: cm?.data ?? {}, resourceVersion: cm?.metadata.resourceVersion };
}

/**
 * Writes one shape's mark over the marks as `read` (guarded by their resourceVersion; created when `read`
 * found none). Returns the marks as written, or undefined when another writer came first (read again).
 */
export async function writeShapeMark(
  kube: Pick<Kube, "create" | "patch">,
  read: ShapeMarks,
  key: string,
  value: ShapeMarkValue,
): Promise<ShapeMarks | undefined> {
  try {
    const written = read.resourceVersion
      ? await kube.patch<MarksObject>(
          SHAPE_MARKS,
          SHAPE_MARKS_REF.name,
          { data: { [key]: value } },
          { resourceVersion: read.resourceVersion, namespace: SHAPE_MARKS_REF.namespace },
        )
      : await kube.create<MarksObject>(SHAPE_MARKS, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: SHAPE_MARKS_REF.name,
            namespace: SHAPE_MARKS_REF.namespace,
            labels: { "app.kubernetes.io/part-of": "driftless" },
          },
          data: { [key]: value },
        });
    return { data: written.data ?? {}, resourceVersion: written.metadata.resourceVersion };
  } catch (err) {
    // 409: a stale resourceVersion, or the ConfigMap created meanwhile (AlreadyExists).
    if (isConflict(err)) return undefined;
    throw err;
  }
}

/** What the engine's plan knows of its kind's shape (plan.ts `Known.shape`). */
export type KnownShape =
  | { state: "absent" | "unused" | "in-use" }
  /** `ageMs`: how long it has been pending, as this container can vouch for. */
  | { state: "pending"; ageMs: number }
  /** The marks could not be read or written (e.g. no RBAC for them): labels wait. A missing driftless-system namespace is not this (see mark). */
  | { state: "unreadable" };

/**
 * The engine's side: reads a shape's mark fresh before every label it would write (labels are rare: once
 * per resource, or when its external name changes), and moves it on when the plan says so.
 */
export class EngineShapeMarks {
  readonly #kube: Pick<Kube, "get" | "create" | "patch">;
  readonly #now: () => number;
  readonly #waitMs: number;
  /** When this container first saw a shape's `pending` value (key and value). */
  readonly #pendingSeen = new Map<string, number>();

  constructor(kube: Pick<Kube, "get" | "create" | "patch">, now: () => number, waitMs: number) {
    this.#kube = kube;
    this.#now = now;
    this.#waitMs = waitMs;
  }

  async read(def: Pick<ResourceType, "group" | "plural">): Promise<KnownShape> {
    return this.#known(def, await readShapeMarks(this.#kube));
  }

  /**
   * Moves the shape on: absent → in-use, unused → pending, pending (waited out) → in-use. Reads fresh
   * first: a value someone else changed meanwhile is returned as it is, for the plan to decide again.
   */
  async mark(def: Pick<ResourceType, "group" | "plural">, to: "in-use" | "pending"): Promise<KnownShape> {
    const key = shapeKeyOf(def);
    for (let attempt = 0; attempt < 3; attempt++) {
      const read = await readShapeMarks(this.#kube);
      const known = this.#known(def, read);
      const allowed =
        to === "pending"
          ? known.state === "unused"
          : known.state === "absent" || (known.state === "pending" && known.ageMs >= this.#waitMs);
      if (!allowed) return known;
      const value: ShapeMarkValue =
        to === "pending" ? `pending ${new Date(this.#now()).toISOString()}` : "in-use";
      let written: ShapeMarks | undefined;
      try {
        written = await writeShapeMark(this.#kube, read, key, value);
      } catch (err) {
        // The ConfigMap cannot be created because its namespace does not exist (a cluster `driftless run` was
        // pointed at): no ConfigMap, so no resolver can have recorded this shape `unused`, nor can one now
        // (a resolver that cannot write a mark asks the shape at every event). The label may go.
        if (to === "in-use" && !read.resourceVersion && isNotFound(err)) return { state: "in-use" };
        throw err;
      }
      if (written) return this.#known(def, written);
    }
    return this.read(def);
  }

  #known(def: Pick<ResourceType, "group" | "plural">, marks: ShapeMarks): KnownShape {
    const key = shapeKeyOf(def);
    const use = shapeUseOf(marks.data[key]);
    if (use.state !== "pending") return { state: use.state };
    const now = this.#now();
    const seenKey = `${key}=${use.since}`;
    const seen = this.#pendingSeen.get(seenKey) ?? now;
    this.#pendingSeen.set(seenKey, seen);
    const written = Date.parse(use.since);
    const byWrittenTime = Number.isNaN(written) ? 0 : now - written - SHAPE_MARK_CLOCK_MARGIN_MS;
    return { state: "pending", ageMs: Math.max(now - seen, byWrittenTime) };
  }
}
