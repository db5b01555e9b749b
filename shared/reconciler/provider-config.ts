import type { ProviderConfigKind } from "../api/external.ts";
import type { ManagedResource } from "../api/managed.ts";
import {
  type Condition,
  DEFAULT_PROVIDER_CONFIG,
  PROVIDER_CONFIG_FINALIZER,
  type ResourceType,
} from "../api/meta.ts";
import type { ProviderConfig } from "../api/provider-config.ts";
import { isNotFound, type Kube, secretKeyValue } from "../kube/client.ts";
import { deepEqual } from "./compare.ts";
import { setConditions } from "./conditions.ts";
import type { ReconcileResult, Reconciles, ResourceKey } from "./contract.ts";
import type { KindRegistry } from "./registry.ts";

export interface ProviderConfigResult
  extends ReconcileResult<"gone" | "ready" | "unready" | "in-use" | "released"> {
  users: number;
}

const RECHECK_FAILED_MS = 30_000;

/**
 * Keeps each ProviderConfig's status honest: Ready after a credential check, the number of managed
 * resources using it, and a finalizer that holds its deletion while any resource still uses it.
 */
export class ProviderConfigReconciler implements Reconciles {
  readonly #kube: Kube;
  readonly #registry: KindRegistry;
  readonly #kinds: Map<string, ProviderConfigKind>;
  readonly #now: () => Date;

  constructor(
    kube: Kube,
    registry: KindRegistry,
    kinds: ProviderConfigKind[],
    opts: { now?: () => Date } = {},
  ) {
    this.#kube = kube;
    this.#registry = registry;
    this.#kinds = new Map(kinds.map((k) => [`${k.type.group}/${k.type.version}`, k]));
    this.#now = opts.now ?? (() => new Date());
  }

  handles(apiVersion: string, kind: string): boolean {
    return kind === "ProviderConfig" && this.#kinds.has(apiVersion);
  }

  /** One ProviderConfig by key (the contract); `(apiVersion, name)` is the older call form, still served. */
  reconcile(key: ResourceKey): Promise<ProviderConfigResult>;
  reconcile(apiVersion: string, name: string): Promise<ProviderConfigResult>;
  reconcile(key: ResourceKey | string, name?: string): Promise<ProviderConfigResult> {
    return typeof key === "string"
      ? this.#reconcile(key, name ?? "")
      : this.#reconcile(key.apiVersion, key.name);
  }

  async #reconcile(apiVersion: string, name: string): Promise<ProviderConfigResult> {
    const kind = this.#kinds.get(apiVersion);
    if (!kind) throw new Error(`no ProviderConfig kind ${apiVersion}`);
    const pc = await this.#kube.get<ProviderConfig & { [k: string]: unknown }>(kind.type, name);
    if (!pc) return { outcome: "gone", users: 0 };
    const users = await this.#countUsers(kind.cloud, name);
    const finalizers = pc.metadata.finalizers ?? [];

    if (pc.metadata.deletionTimestamp) {
      if (users > 0) {
        await this.#status(kind.type, pc, users, {
          type: "Ready",
          status: "False",
          reason: "InUse",
          message: `deletion waits: ${users} managed resource(s) still use this ProviderConfig; delete them or point them at another ProviderConfig`,
        });
        return { outcome: "in-use", users, requeueAfterMs: RECHECK_FAILED_MS };
      }
      if (finalizers.includes(PROVIDER_CONFIG_FINALIZER)) {
        await this.#kube.patch(
          kind.type,
          name,
          { metadata: { finalizers: finalizers.filter((f) => f !== PROVIDER_CONFIG_FINALIZER) } },
          { resourceVersion: pc.metadata.resourceVersion ?? "" },
        );
      }
      return { outcome: "released", users };
    }

    if (!finalizers.includes(PROVIDER_CONFIG_FINALIZER)) {
      await this.#kube.patch(
        kind.type,
        name,
        { metadata: { finalizers: [...finalizers, PROVIDER_CONFIG_FINALIZER] } },
        { resourceVersion: pc.metadata.resourceVersion ?? "" },
      );
    }

    try {
      const identity = await kind.check({
        providerConfig: pc,
        readSecretKey: async (ref) => {
          const found = secretKeyValue(await this.#kube.getSecret(ref.namespace, ref.name), ref);
          if ("missing" in found) throw new Error(found.missing);
          return found.value;
        },
      });
      await this.#status(kind.type, pc, users, {
        type: "Ready",
        status: "True",
        reason: "Available",
        message: `credentials accepted (${identity})`,
      });
      return { outcome: "ready", users };
    } catch (err) {
      await this.#status(kind.type, pc, users, {
        type: "Ready",
        status: "False",
        reason: "CredentialsRefused",
        message: `credential check failed: ${(err as Error).message}`,
      });
      return { outcome: "unready", users, requeueAfterMs: RECHECK_FAILED_MS };
    }
  }

  async #countUsers(cloud: string, name: string): Promise<number> {
    let users = 0;
    for (const def of this.#registry.definitions.filter((d) => d.cloud === cloud)) {
      let cont: string | undefined;
      do {
        try {
          const page = await this.#kube.list<ManagedResource & { [k: string]: unknown }>(def, {
            limit: 500,
            ...(cont ? { continue: cont } : {}),
          });
          users += page.items.filter(
            (mr) => (mr.spec?.providerConfigRef?.name ?? DEFAULT_PROVIDER_CONFIG) === name,
          ).length;
          cont = page.continue;
        } catch (err) {
          // A kind whose CRD is not installed has no users.
          if (isNotFound(err)) break;
          throw err;
        }
      } while (cont);
    }
    return users;
  }

  async #status(
    t: ResourceType,
    pc: ProviderConfig,
    users: number,
    ready: Omit<Condition, "lastTransitionTime">,
  ) {
    const conditions = setConditions(pc.status?.conditions, [ready], this.#now(), pc.metadata.generation);
    if (deepEqual(conditions, pc.status?.conditions ?? []) && pc.status?.users === users) return;
    await this.#kube.patchStatus(t, pc.metadata.name, { conditions, users });
  }
}
