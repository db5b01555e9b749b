// A fake cloud and a test kind for engine table tests: resources in a map, reads that can lag behind
// writes (eventual consistency), creates that can be held mid-flight, and failures on demand. It plays
// the part of crossplane-runtime's mock ExternalClient, with enough state to count leaks and duplicates.
import { z } from "zod";
import type {
  ConnectionDetails,
  ExternalClient,
  ExternalObservation,
  ManagedKindProvider,
} from "../../shared/api/external.ts";
import {
  defineManagedKind,
  type ManagedKindOptions,
  type ManagedResource,
} from "../../shared/api/managed.ts";

export const WidgetForProvider = z.object({
  region: z.string().default("eu-west-1"),
  size: z.number().int().min(1).max(100).optional(),
  color: z.string().optional(),
  version: z.string().optional(),
  password: z.string().optional(),
  passwordSecretRef: z.object({ namespace: z.string(), name: z.string(), key: z.string() }).optional(),
  tags: z.record(z.string(), z.string()).optional(),
  redrive: z.object({ target: z.string().optional(), maxReceives: z.number().optional() }).optional(),
  parentId: z.string().optional(),
  parentRef: z.object({ name: z.string(), policy: z.any().optional() }).optional(),
  parentSelector: z
    .object({
      matchLabels: z.record(z.string(), z.string()).optional(),
      matchControllerRef: z.boolean().optional(),
      policy: z.any().optional(),
    })
    .optional(),
  memberIds: z.array(z.string()).optional(),
  memberRefs: z.array(z.object({ name: z.string(), policy: z.any().optional() })).optional(),
  memberSelector: z.any().optional(),
});
export type Widget = z.infer<typeof WidgetForProvider>;

const WidgetAtProvider = z.object({ id: z.string().optional(), state: z.string().optional() }).passthrough();

type Extra = Partial<ManagedKindOptions<typeof WidgetForProvider, typeof WidgetAtProvider>>;

/** A test kind; `extra` sets the definition options a row needs (providerChosen, fields, settle …). */
export function widgetKind(extra: Extra = {}) {
  return defineManagedKind({
    group: "widgets.fake",
    kind: extra.kind ?? "Widget",
    cloud: "aws",
    description: "A fake widget for engine tests.",
    forProvider: WidgetForProvider,
    atProvider: WidgetAtProvider,
    immutable: ["region"],
    fields: {
      password: { writeOnly: true },
      passwordSecretRef: { writeOnly: true },
      version: { compare: "version", lateInitialize: false },
    },
    references: [
      { field: "parentId", refField: "parentRef", selectorField: "parentSelector", to: parentType() },
      {
        field: "memberIds",
        refField: "memberRefs",
        selectorField: "memberSelector",
        to: parentType(),
        list: true,
      },
    ],
    ...extra,
  });
}

/** The kind references point at (itself a Widget kind under another name). */
export function parentType() {
  return {
    group: "widgets.fake.driftless.dev",
    version: "v1alpha1",
    kind: "Parent",
    plural: "parents",
    namespaced: false,
    apiVersion: "widgets.fake.driftless.dev/v1alpha1",
  };
}

export interface CloudResource {
  id: string;
  name: string;
  spec: Record<string, unknown>;
  tags: Record<string, string>;
  state: string;
  /** Where it lives (account and region); a resource put without one is found from anywhere. */
  home?: { account: string; region: string };
}

type Verb = "observe" | "observeMany" | "create" | "update" | "delete";

/** A deferred a test resolves when it wants a held call to finish. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

export class FakeCloud {
  /** The truth: what exists in the cloud, by id. */
  readonly resources = new Map<string, CloudResource>();
  /** What reads return: lags behind `resources` while `lagReads` > 0 after a write. */
  #visible = new Map<string, CloudResource>();
  #pendingReads = 0;
  #seq = 0;
  readonly calls: Record<Verb, number> = { observe: 0, observeMany: 0, create: 0, update: 0, delete: 0 };
  /** Rate-limit tokens the client took (observeMany takes one per list call). */
  rateLimitTokens = 0;
  /** Names whose item an observeMany answers with an Error (a per-resource failure inside a list). */
  readonly failItems = new Set<string>();
  readonly #failures: Partial<Record<Verb, Array<() => Error>>> = {};
  /** Reads after each write that still show the state before it (0: strongly consistent). */
  lagReads = 0;
  /** When set, create waits for it before the resource reaches the cloud (a slow create in flight). */
  holdCreate: Promise<void> | undefined;
  /** When set, create waits for it after the resource exists in the cloud but before it returns. */
  holdCreateResult: Promise<void> | undefined;
  /** Called when a create starts (before any hold). */
  onCreateStarted: (() => void) | undefined;
  /** Connection details observe reports. */
  details: ConnectionDetails | undefined;
  /** Another writer in the cloud (an autoscaler, a policy): it changes a resource right after each update. */
  afterUpdate: ((r: CloudResource) => void) | undefined;
  /** Annotations update answers for the engine to record (what it applied that a read cannot show). */
  updateAnnotations: Record<string, string> | undefined;
  /** The state a new resource starts in ("ready", or "creating" to report Ready=False Creating). */
  initialState = "ready";

  /** Fails the next call of `verb` with `error` (queued: several calls fail in order). */
  failNext(verb: Verb, error: () => Error, times = 1): void {
    const list = this.#failures[verb] ?? [];
    this.#failures[verb] = list;
    for (let i = 0; i < times; i++) list.push(error);
  }

  /** Puts a resource in the cloud out of band (import, console edit). */
  put(r: Omit<CloudResource, "id" | "state"> & { id?: string; state?: string }): CloudResource {
    const res = { id: r.id ?? `w-${++this.#seq}`, state: r.state ?? "ready", ...r } as CloudResource;
    this.resources.set(res.id, structuredClone(res));
    this.#visible.set(res.id, structuredClone(res));
    return res;
  }

  /** Edits a resource out of band, visible at once. */
  edit(id: string, change: (r: CloudResource) => void): void {
    const r = this.resources.get(id);
    if (!r) throw new Error(`no ${id}`);
    change(r);
    this.#visible = structuredClone(this.resources);
  }

  byName(name: string) {
    return [...this.resources.values()].filter((r) => r.name === name);
  }

  #wrote() {
    if (this.lagReads > 0) this.#pendingReads = this.lagReads;
    else this.#visible = structuredClone(this.resources);
  }

  #read(): Map<string, CloudResource> {
    if (this.#pendingReads > 0) {
      this.#pendingReads--;
      if (this.#pendingReads === 0) {
        const stale = this.#visible;
        this.#visible = structuredClone(this.resources);
        return stale;
      }
      return this.#visible;
    }
    this.#visible = structuredClone(this.resources);
    return this.#visible;
  }

  #maybeFail(verb: Verb) {
    this.calls[verb]++;
    const next = this.#failures[verb]?.shift();
    if (next) throw next();
  }

  /**
   * A ManagedKindProvider for `definition` backed by this cloud; with `observeManyMaxItems` it is
   * list-capable (observeMany answers up to that many resources per call).
   */
  provider(
    definition: ReturnType<typeof widgetKind>,
    opts: { observeManyMaxItems?: number } = {},
  ): ManagedKindProvider {
    const cloud = this;
    const providerChosen = definition.externalName === "providerChosen";
    // As a real cloud: a client reaches one account (its ProviderConfig's) and one region (the resource's).
    const homeOf = (account: string, mr: ManagedResource) => ({
      account,
      region: String((mr.spec.forProvider as Widget).region ?? "eu-west-1"),
    });
    const find = (
      account: string,
      mr: ManagedResource,
      externalName: string | undefined,
      visible: Map<string, CloudResource> = cloud.#read(),
    ) => {
      const here = homeOf(account, mr);
      const all = [...visible.values()].filter(
        (r) => !r.home || (r.home.account === here.account && r.home.region === here.region),
      );
      if (providerChosen && externalName) return all.find((r) => r.id === externalName);
      if (providerChosen) {
        if (definition.ownershipLookup)
          return all.find((r) => r.tags["driftless.dev/owner"] === mr.metadata.uid);
        return undefined;
      }
      return all.find((r) => r.name === externalName);
    };
    const observation = (
      _mr: ManagedResource,
      externalName: string | undefined,
      r: CloudResource | undefined,
    ): ExternalObservation<Record<string, unknown>, Record<string, unknown>> => {
      if (!r) return { resourceExists: false };
      const { password: _writeOnly, ...reported } = r.spec;
      return {
        resourceExists: true,
        observed: {
          ...reported,
          ...(Object.keys(userTags(r.tags)).length ? { tags: userTags(r.tags) } : {}),
        },
        atProvider: { id: r.id, state: r.state },
        availability: r.state === "creating" ? "Creating" : "Available",
        ...(cloud.details ? { connectionDetails: cloud.details } : {}),
        ...(providerChosen && !externalName ? { externalName: r.id } : {}),
      };
    };
    const clientFor = (
      account: string,
    ): ExternalClient<Record<string, unknown>, Record<string, unknown>> => ({
      async home(mr) {
        return homeOf(account, mr);
      },
      async observe(mr, externalName) {
        cloud.#maybeFail("observe");
        return observation(mr, externalName, find(account, mr, externalName));
      },
      async create(mr, externalName) {
        cloud.#maybeFail("create");
        cloud.onCreateStarted?.();
        if (cloud.holdCreate) await cloud.holdCreate;
        const id = providerChosen ? `w-${++cloud.#seq}` : (externalName ?? mr.metadata.name);
        const spec = structuredClone(mr.spec.forProvider) as Record<string, unknown>;
        const { tags, ...rest } = spec;
        const res: CloudResource = {
          id,
          name: externalName ?? mr.metadata.name,
          spec: rest,
          tags: { ...((tags as Record<string, string>) ?? {}), "driftless.dev/owner": mr.metadata.uid ?? "" },
          state: cloud.initialState,
          home: homeOf(account, mr),
        };
        cloud.resources.set(id, res);
        cloud.#wrote();
        if (cloud.holdCreateResult) await cloud.holdCreateResult;
        return { externalName: id };
      },
      async update(mr, externalName) {
        cloud.#maybeFail("update");
        const r = cloud.resources.get(externalName) ?? cloud.byName(externalName)[0];
        if (!r) throw new Error(`widget ${externalName} not found`);
        const { tags, ...rest } = structuredClone(mr.spec.forProvider) as Record<string, unknown>;
        r.spec = rest;
        r.tags = {
          ...((tags as Record<string, string>) ?? {}),
          "driftless.dev/owner": mr.metadata.uid ?? "",
        };
        cloud.afterUpdate?.(r);
        cloud.#wrote();
        return cloud.updateAnnotations ? { annotations: cloud.updateAnnotations } : {};
      },
      async delete(_mr, externalName) {
        cloud.#maybeFail("delete");
        const r = cloud.resources.get(externalName) ?? cloud.byName(externalName)[0];
        if (!r) return; // already gone: deleting is idempotent
        cloud.resources.delete(r.id);
        cloud.#wrote();
      },
    });
    const max = opts.observeManyMaxItems;
    return {
      definition,
      ...(max ? { observeMany: { calls: "the fake's list call", maxItems: max } } : {}),
      connect: async (ctx) => {
        const account = String((ctx.providerConfig.spec as { account?: string }).account ?? DEFAULT_ACCOUNT);
        const client = clientFor(account);
        return {
          ...client,
          ...(max
            ? {
                // One list call, one rate-limit token, one consistent read for every item.
                async observeMany(items: ReadonlyArray<{ mr: ManagedResource; externalName: string }>) {
                  await ctx.rateLimit?.();
                  cloud.rateLimitTokens++;
                  cloud.#maybeFail("observeMany");
                  if (items.length > max)
                    throw new Error(`observeMany got ${items.length} items, max ${max}`);
                  const visible = cloud.#read();
                  return items.map(({ mr, externalName }) =>
                    cloud.failItems.has(mr.metadata.name)
                      ? new Error(`cannot read ${externalName}`)
                      : observation(mr, externalName, find(account, mr, externalName, visible)),
                  );
                },
              }
            : {}),
          async create(mr, externalName) {
            // A password from a Secret the resource names, read the way real kinds read one.
            const ref = (mr.spec.forProvider as Widget).passwordSecretRef;
            if (ref) await ctx.readSecretKey(ref);
            return client.create(mr, externalName);
          },
        };
      },
    };
  }
}

/** The account a ProviderConfig without `spec.account` reaches in the fake cloud. */
export const DEFAULT_ACCOUNT = "111111111111";

const userTags = (t: Record<string, string>) =>
  Object.fromEntries(Object.entries(t).filter(([k]) => !k.startsWith("driftless.dev/")));
