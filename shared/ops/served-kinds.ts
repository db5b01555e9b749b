// What a serverless function serves, decided at run time: the hand-written kinds it was built with and the
// generated kinds (AWS, Google) DRIFTLESS_ACTIVATE or the cluster's activation policies name, built from the
// specs shipped as data beside the bundle (dist/awscc, dist/gcp-kinds). Read at cold start and again once
// `refreshMs` has passed (the sweep: every invocation), so a kind activated later is served without a
// rebuild or a redeploy.
import { loadAwsccCatalog } from "../api/awscc/catalog.ts";
import { loadAzureCatalog } from "../api/azure-gen/catalog.ts";
import type { ManagedKindProvider } from "../api/external.ts";
import { generatedCloudOf, isGeneratedGroup } from "../api/generated-catalog.ts";
import { loadGoogleCatalog } from "../api/googleapis/catalog.ts";
import { API_DOMAIN, apiVersionOf } from "../api/meta.ts";
import type { Kube, KubeObject } from "../kube/client.ts";
import type {
  EventRecorder,
  EventSubject,
  ReconcileFn,
  ReconcileLogger,
  ResourceKey,
} from "../reconciler/contract.ts";
import { NOT_ACTIVATED, notActivatedMessage, readActivationPolicies } from "./activation-policy.ts";

export interface Served {
  kinds: readonly ManagedKindProvider[];
  /** The generated kinds among them, by CRD name, sorted: what tells one activation from the next. */
  generated: readonly string[];
}

export interface ServedSetup {
  kube: Kube;
  /** The kinds the function was built with; generated ones among them are left to the policies. */
  handWritten: readonly ManagedKindProvider[];
  /** DRIFTLESS_ACTIVATE at run time. */
  envPatterns: readonly string[];
  /**
   * The providers (both shapes) of the generated kinds these activation patterns select — DRIFTLESS_ACTIVATE's
   * and the policies' —, from the entry point: its cloud's generic provider over its catalog.
   */
  generatedFor(patterns: readonly string[]): ManagedKindProvider[];
}

const crdNameOf = (k: ManagedKindProvider) => `${k.definition.plural}.${k.definition.group}`;

/** What is served now: one read of the activation policies (three LISTs) and the activated kinds' specs. */
export async function readServed(setup: ServedSetup): Promise<Served> {
  const policies = await readActivationPolicies(setup.kube);
  const kinds = [
    ...setup.handWritten.filter((k) => !isGeneratedGroup(k.definition.group)),
    ...setup.generatedFor([...setup.envPatterns, ...policies.patterns]),
  ];
  return {
    kinds,
    generated: kinds
      .filter((k) => isGeneratedGroup(k.definition.group))
      .map(crdNameOf)
      .sort(),
  };
}

/**
 * The served kinds and what is built from them (a worker), kept per container: read again when older
 * than `refreshMs` or when asked to (`force`); the built value is made again only when the generated
 * kinds changed. Concurrent callers share one read.
 */
export class ServedKinds<W> {
  readonly #read: () => Promise<Served>;
  readonly #build: (served: Served) => W | Promise<W>;
  readonly #refreshMs: number;
  readonly #now: () => number;
  #at = Number.NEGATIVE_INFINITY;
  #state: { served: Served; value: W } | undefined;
  #pending: Promise<{ served: Served; value: W }> | undefined;

  constructor(
    read: () => Promise<Served>,
    build: (served: Served) => W | Promise<W>,
    opts: { refreshMs: number; now?: () => number },
  ) {
    this.#read = read;
    this.#build = build;
    this.#refreshMs = opts.refreshMs;
    this.#now = opts.now ?? Date.now;
  }

  /** When the served kinds were last read (ms, the clock given), for a caller that rate-limits `force`. */
  get readAt(): number {
    return this.#at;
  }

  async current(opts: { force?: boolean } = {}): Promise<{ served: Served; value: W }> {
    const fresh = this.#state && this.#now() - this.#at < this.#refreshMs;
    if (fresh && !opts.force && this.#state) return this.#state;
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #refresh(): Promise<{ served: Served; value: W }> {
    const served = await this.#read();
    this.#at = this.#now();
    if (this.#state && this.#state.served.generated.join() === served.generated.join()) return this.#state;
    this.#state = { served, value: await this.#build(served) };
    return this.#state;
  }
}

/** Whether a key is of a generated kind the served kinds do not include. */
export function unservedGenerated(served: Served, key: ResourceKey): boolean {
  const group = key.apiVersion.split("/")[0] ?? "";
  if (!isGeneratedGroup(group)) return false;
  return !served.kinds.some(
    (k) => apiVersionOf(k.definition) === key.apiVersion && k.definition.kind === key.kind,
  );
}

export interface ServedReconcileSetup<W extends { reconcile: ReconcileFn }> {
  served: ServedKinds<W>;
  kube: Kube;
  events: EventRecorder;
  logger: ReconcileLogger;
  /** A key of an unserved generated kind reads the policies again, at most this often (it may just have been activated). */
  recheckMs: number;
  now?: () => number;
}

/**
 * The reconcile of a function that serves what is activated: a key of a served kind goes to the current
 * worker; a key of a generated kind that is not served reads the policies again (a kind activated since
 * the container started), and if it is still not served, its object gets the `KindNotActivated` Warning
 * event saying how to activate it, and the message is settled (retrying cannot help until a policy names it).
 */
export function servedReconcile<W extends { reconcile: ReconcileFn }>(
  setup: ServedReconcileSetup<W>,
): ReconcileFn {
  const now = setup.now ?? Date.now;
  return async (key) => {
    let { served, value } = await setup.served.current();
    if (unservedGenerated(served, key) && now() - setup.served.readAt >= setup.recheckMs)
      ({ served, value } = await setup.served.current({ force: true }));
    if (!unservedGenerated(served, key)) return value.reconcile(key);
    await tellNotActivated(setup, key);
    return { outcome: "blocked" };
  };
}

/** The Warning event on the key's object (read for its uid; without it when the function may not read it). */
async function tellNotActivated(
  setup: Pick<ServedReconcileSetup<never>, "kube" | "events" | "logger">,
  key: ResourceKey,
): Promise<void> {
  const [group = "", version = ""] = key.apiVersion.split("/");
  const base = group.slice(0, -`.${API_DOMAIN}`.length).replace(/\.m$/, "");
  let plural = `${key.kind.toLowerCase()}s`;
  try {
    const cloud = generatedCloudOf(group);
    const catalog =
      cloud === "aws" ? loadAwsccCatalog() : cloud === "gcp" ? loadGoogleCatalog() : loadAzureCatalog();
    const kinds: ReadonlyArray<{ group: string; kind: string; plural: string }> = catalog.kinds;
    plural = kinds.find((e) => e.group === base && e.kind === key.kind)?.plural ?? plural;
  } catch {
    // not generated here: the kind's plural as Kubernetes would guess it
  }
  setup.logger.warn(
    { key: `${key.apiVersion}/${key.kind}/${key.namespace ?? ""}/${key.name}`, reason: NOT_ACTIVATED },
    "a key of a generated kind that is not activated: told, not reconciled",
  );
  const type = { group, version, kind: key.kind, plural, namespaced: key.namespace !== undefined };
  let stored: KubeObject | undefined;
  try {
    stored = await setup.kube.get(type, key.name, key.namespace);
    if (!stored) return; // gone: nobody to tell
  } catch {
    // not readable by this identity (RBAC grants only activated kinds): the event names it without its uid
  }
  const subject: EventSubject = {
    apiVersion: key.apiVersion,
    kind: key.kind,
    metadata: stored?.metadata ?? { name: key.name, ...(key.namespace ? { namespace: key.namespace } : {}) },
  };
  await setup.events.record(
    subject,
    "Warning",
    NOT_ACTIVATED,
    notActivatedMessage(key.kind, group, `${plural}.${group}`),
  );
}
