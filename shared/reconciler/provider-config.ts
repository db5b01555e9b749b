import type { ProviderConfigKind } from "../api/external.ts";
import {
  type ManagedResource,
  type ProviderConfigTarget,
  providerConfigKey,
  providerConfigOf,
} from "../api/managed.ts";
import { API_DOMAIN, PROVIDER_CONFIG_FINALIZER } from "../api/meta.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { type Kube, secretKeyValue } from "../kube/client.ts";
import type { NewCondition, ReconcileResult, Reconciles, ResourceKey } from "./contract.ts";
import { Lifecycle } from "./lifecycle.ts";
import type { KindRegistry } from "./registry.ts";
import {
  checkNamespacedProviderConfig,
  TenancyError,
  type TenancyOptions,
  withProviderConfigNamespace,
} from "./tenancy.ts";

export interface ProviderConfigResult
  extends ReconcileResult<"gone" | "ready" | "unready" | "in-use" | "released"> {
  users: number;
}

const RECHECK_FAILED_MS = 30_000;

/**
 * What a process that already lists and watches the managed resources knows of their ProviderConfigs
 * (`driftless run`: shared/pipeline/provider-config-users.ts): the users of `target` among the objects of
 * one kind, or undefined when it does not know them (that kind is then listed).
 */
export interface KnownUsers {
  count(def: { apiVersion: string; kind: string }, target: ProviderConfigTarget): number | undefined;
}

/**
 * Keeps each ProviderConfig's status honest: Ready after a credential check, the number of managed
 * resources using it, and a finalizer that holds its deletion while any resource still uses it. It serves
 * the three kinds of each cloud: the v1 shape's cluster-scoped ProviderConfig, and the namespaced
 * ProviderConfig and ClusterProviderConfig the namespaced kinds use (a namespaced one is also held to
 * the tenancy rules of shared/reconciler/tenancy.ts before its credentials are tried).
 */
export class ProviderConfigReconciler implements Reconciles {
  readonly #kube: Kube;
  readonly #registry: KindRegistry;
  readonly #kinds: Map<string, ProviderConfigKind>;
  readonly #lifecycle: Lifecycle;
  readonly #tenancy: TenancyOptions;
  readonly #known: KnownUsers | undefined;

  constructor(
    kube: Kube,
    registry: KindRegistry,
    kinds: ProviderConfigKind[],
    opts: { now?: () => Date; tenancy?: TenancyOptions; knownUsers?: KnownUsers } = {},
  ) {
    this.#known = opts.knownUsers;
    this.#kube = kube;
    this.#registry = registry;
    this.#kinds = new Map(kinds.map((k) => [`${k.type.group}/${k.type.version}/${k.type.kind}`, k]));
    this.#lifecycle = new Lifecycle(kube, opts.now ? { now: opts.now } : {});
    this.#tenancy = opts.tenancy ?? {};
  }

  handles(apiVersion: string, kind: string): boolean {
    return this.#kinds.has(`${apiVersion}/${kind}`);
  }

  /** One ProviderConfig by key (the contract); `(apiVersion, name)` is the older call form, still served. */
  reconcile(key: ResourceKey): Promise<ProviderConfigResult>;
  reconcile(apiVersion: string, name: string): Promise<ProviderConfigResult>;
  reconcile(key: ResourceKey | string, name?: string): Promise<ProviderConfigResult> {
    return typeof key === "string"
      ? this.#reconcile({ apiVersion: key, kind: "ProviderConfig", name: name ?? "" })
      : this.#reconcile(key);
  }

  async #reconcile(key: ResourceKey): Promise<ProviderConfigResult> {
    const kind = this.#kinds.get(`${key.apiVersion}/${key.kind}`);
    if (!kind) throw new Error(`no ProviderConfig kind ${key.apiVersion} ${key.kind}`);
    const { name } = key;
    const namespace = kind.type.namespaced ? key.namespace : undefined;
    if (kind.type.namespaced && !namespace) throw new Error(`${key.kind} ${name}: no namespace`);
    type KubePc = ProviderConfig & { [k: string]: unknown };
    const read = await this.#lifecycle.read<KubePc>(kind.type, {
      ...key,
      ...(namespace ? { namespace } : {}),
    });
    if (!read) return { outcome: "gone", users: 0 };
    const pc = withProviderConfigNamespace(read);
    const target: ProviderConfigTarget = { type: kind.type, name, ...(namespace ? { namespace } : {}) };
    // Before a finalizer is released, every kind is listed: the deletion protection never rests on a cache.
    const users = await this.#countUsers(kind.cloud, target, !pc.metadata.deletionTimestamp);
    const status = (ready: NewCondition) => this.#lifecycle.writeStatus(kind.type, pc, [ready], { users });

    if (pc.metadata.deletionTimestamp) {
      if (users > 0) {
        await status({
          type: "Ready",
          status: "False",
          reason: "InUse",
          message: `deletion waits: ${users} managed resource(s) still use this ProviderConfig; delete them or point them at another ProviderConfig`,
        });
        return { outcome: "in-use", users, requeueAfterMs: RECHECK_FAILED_MS };
      }
      await this.#lifecycle.removeFinalizer(kind.type, pc, PROVIDER_CONFIG_FINALIZER);
      return { outcome: "released", users };
    }

    await this.#lifecycle.addFinalizer(kind.type, pc, PROVIDER_CONFIG_FINALIZER);
    try {
      if (kind.type.namespaced) await checkNamespacedProviderConfig(pc, this.#tenancy);
      const identity = await kind.check({
        providerConfig: pc,
        readSecretKey: async (ref) => {
          const found = secretKeyValue(await this.#kube.getSecret(ref.namespace, ref.name), ref);
          if ("missing" in found) throw new Error(found.missing);
          return found.value;
        },
      });
      await status({
        type: "Ready",
        status: "True",
        reason: "Available",
        message: `credentials accepted (${identity})`,
      });
      return { outcome: "ready", users };
    } catch (err) {
      const refused = err instanceof TenancyError;
      await status({
        type: "Ready",
        status: "False",
        reason: refused ? "NotAllowed" : "CredentialsRefused",
        message: refused ? (err as Error).message : `credential check failed: ${(err as Error).message}`,
      });
      return { outcome: "unready", users, requeueAfterMs: RECHECK_FAILED_MS };
    }
  }

  /**
   * Managed resources naming this ProviderConfig: of the shape that can name it, in its namespace if it has
   * one. With `known`, a kind the KnownUsers know is counted from there, not listed.
   */
  async #countUsers(cloud: string, target: ProviderConfigTarget, known: boolean): Promise<number> {
    const key = providerConfigKey(target);
    // The `.m.` group's ProviderConfigs serve the namespaced kinds; the v1 one the cluster-scoped kinds.
    const scope = target.type.group.endsWith(`.m.${API_DOMAIN}`) ? "Namespaced" : "Cluster";
    let users = 0;
    for (const def of this.#registry.definitions.filter((d) => d.cloud === cloud && d.scope === scope)) {
      const counted = known ? this.#known?.count(def, target) : undefined;
      if (counted !== undefined) {
        users += counted;
        continue;
      }
      // A kind whose CRD is not installed has no page, so no users.
      for await (const page of this.#kube.listPages<ManagedResource & { [k: string]: unknown }>(def, {
        limit: 500,
        ...(target.namespace ? { namespace: target.namespace } : {}),
      }))
        users += page.filter((mr) => providerConfigKey(providerConfigOf(def, mr)) === key).length;
    }
    return users;
  }
}
