// A real worker process for the crash-consistency tests: the real Reconciler, the real Kubernetes client
// and the real AWS providers, reconciling one key in a loop, that SIGKILLs itself at a chosen step
// boundary. The boundaries are made by wrapping the Kube client and each ExternalClient here, in test
// code: the product has no crash hooks.
//
// Usage: node test/faults/worker-child.ts '<json ChildConfig>'   (KUBECONFIG from the environment)
// Prints `CRASH <boundary>` right before it kills itself, else `RESULT <json>` when the key settled.
import { writeSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import type { ExternalClient, ManagedKindProvider } from "../../shared/api/external.ts";
import { Annotations, MANAGED_FINALIZER, type ResourceType } from "../../shared/api/meta.ts";
import { Kube, type KubeObject } from "../../shared/kube/client.ts";
import { vpcProvider } from "../../shared/providers/aws/ec2-vpc.ts";
import { queueProvider } from "../../shared/providers/aws/sqs-queue.ts";
import type { ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { Reconciler } from "../support/routed.ts";

export const BOUNDARIES = [
  "after-finalizer-add",
  "after-create-pending",
  "before-create",
  "during-create",
  "after-create",
  "after-create-succeeded",
  "after-status-write",
  "before-delete",
  "during-delete",
  "after-delete",
  "after-unpublish",
  "during-finalizer-removal",
] as const;
export type Boundary = (typeof BOUNDARIES)[number];

export interface ChildConfig {
  key: ResourceKey;
  crashAt?: Boundary;
  /** Reconciles at most this many times. */
  maxRounds?: number;
  /** An unfinished create older than this is treated as interrupted (product default 60 s). */
  createPendingTimeoutMs?: number;
  creationGracePeriodMs?: number;
}

export interface ChildResult {
  outcomes: string[];
  errors: string[];
  externalCalls: Record<string, number>;
}

const config = JSON.parse(process.argv[2] ?? "{}") as ChildConfig;

function crash(boundary: Boundary): void {
  if (config.crashAt !== boundary) return;
  writeSync(1, `CRASH ${boundary}\n`);
  process.kill(process.pid, "SIGKILL");
}

/**
 * Starts `call` and, at this boundary, kills the process 3 ms later whether or not the request reached
 * the server (or was even answered): the crash lands while it is in flight.
 */
async function crashDuring<T>(boundary: Boundary, call: () => Promise<T>): Promise<T> {
  const p = call();
  if (config.crashAt === boundary) {
    await new Promise((r) => setTimeout(r, 3));
    crash(boundary);
  }
  return p;
}

/** The real client, with crash points after the writes the reconciler makes. */
class CrashingKube extends Kube {
  override async patch<T extends KubeObject>(
    t: ResourceType,
    name: string,
    patch: Record<string, unknown>,
    opts: { resourceVersion?: string; namespace?: string } = {},
  ): Promise<T> {
    const meta = (patch.metadata ?? {}) as { annotations?: Record<string, string>; finalizers?: string[] };
    const removesFinalizer = meta.finalizers !== undefined && !meta.finalizers.includes(MANAGED_FINALIZER);
    const call = () => super.patch<T>(t, name, patch, opts);
    const out = removesFinalizer ? await crashDuring("during-finalizer-removal", call) : await call();
    if (meta.finalizers?.includes(MANAGED_FINALIZER)) crash("after-finalizer-add");
    if (meta.annotations?.[Annotations.createPending]) crash("after-create-pending");
    if (meta.annotations?.[Annotations.createSucceeded]) crash("after-create-succeeded");
    return out;
  }

  override async patchStatus<T extends KubeObject>(
    t: ResourceType,
    name: string,
    status: Record<string, unknown>,
    opts: { namespace?: string } = {},
  ): Promise<T> {
    const out = await super.patchStatus<T>(t, name, status, opts);
    crash("after-status-write");
    return out;
  }

  override async deleteSecret(namespace: string, name: string): Promise<void> {
    await super.deleteSecret(namespace, name);
    crash("after-unpublish");
  }
}

function crashingClient<F, A>(c: ExternalClient<F, A>): ExternalClient<F, A> {
  return {
    observe: (mr, name) => c.observe(mr, name),
    update: (mr, name, obs) => c.update(mr, name, obs),
    async create(mr, name) {
      crash("before-create");
      const out = await crashDuring("during-create", () => c.create(mr, name));
      crash("after-create");
      return out;
    },
    async delete(mr, name) {
      crash("before-delete");
      await crashDuring("during-delete", () => c.delete(mr, name));
      crash("after-delete");
    },
  };
}

// The two kinds the crash tests use (a name the user chose, a name the cloud chose), imported by file:
// every child starts twice per scenario, so it loads one SDK family, not all three clouds'.
const kinds: ManagedKindProvider[] = [queueProvider, vpcProvider].map((p) => ({
  ...p,
  connect: async (ctx) => crashingClient(await p.connect(ctx)),
}));

const kc = new KubeConfig();
kc.loadFromDefault();
const kube = new CrashingKube(kc);
const reconciler = new Reconciler(kube, new KindRegistry(kinds), {
  createPendingTimeoutMs: config.createPendingTimeoutMs ?? 2_000,
  // moto is strongly consistent; the grace period's own proof is never-leak.test.ts and the engine table.
  creationGracePeriodMs: config.creationGracePeriodMs ?? 5_000,
});

const result: ChildResult = { outcomes: [], errors: [], externalCalls: {} };
for (let round = 0; round < (config.maxRounds ?? 40); round++) {
  const res = await reconciler.reconcile(config.key);
  result.outcomes.push(res.outcome);
  if (res.error) result.errors.push(res.error.message);
  if (res.outcome === "blocked") break;
  if (res.requeueAfterMs === undefined && res.outcome !== "error") break;
  await new Promise((r) => setTimeout(r, Math.min(res.requeueAfterMs ?? 500, 1_000)));
}
result.externalCalls = { ...reconciler.externalCalls };
writeSync(1, `RESULT ${JSON.stringify(result)}\n`);
process.exit(0);
