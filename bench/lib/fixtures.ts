// The objects a benchmark run puts into the shared API server and moto, and how it takes them away again.
// Every object carries `driftless.dev/bench=<run id>` plus a set label, so forwarders and sweeps started by
// the benchmark see only its own objects, test suites running beside it never see them, and cleanup is
// one label-selected delete.
import { CreateQueueCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Annotations, MANAGED_FINALIZER, type ResourceType } from "../../shared/api/meta.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import type { Kube, KubeObject } from "../../shared/kube/client.ts";
import type { Outcome, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { ensureNamespace, MOTO_CREDENTIALS } from "../../test/support/aws.ts";
import { inParallel } from "../../test/support/env.ts";
import type { Reconciler } from "../../test/support/routed.ts";
import { sleep } from "./stats.ts";

export const BENCH_LABEL = "driftless.dev/bench";
export const SET_LABEL = "driftless.dev/bench-set";
/** The API server is shared with running test suites: never more writes in flight than this. */
export const WRITE_CONCURRENCY = 20;
const SECRET_NAMESPACE = "driftless-system";

export type BenchSet = "insync" | "scale";

export const selectorOf = (run: string, set?: BenchSet) =>
  set ? `${BENCH_LABEL}=${run},${SET_LABEL}=${set}` : `${BENCH_LABEL}=${run}`;

export const keyOf = (name: string): ResourceKey => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  name,
});

/** An AWS ProviderConfig with moto credentials in a Secret; `endpoint` is moto or the recording proxy. */
export async function createProviderConfig(kube: Kube, name: string, endpoint: string): Promise<void> {
  await ensureNamespace(kube, SECRET_NAMESPACE);
  const secretName = `${name}-aws-creds`;
  await kube.deleteSecret(SECRET_NAMESPACE, secretName);
  await kube.createSecret({
    metadata: { name: secretName, namespace: SECRET_NAMESPACE },
    stringData: { credentials: MOTO_CREDENTIALS },
  });
  await kube.delete(providerConfigs.aws.type, name);
  await kube.create(providerConfigs.aws.type, {
    apiVersion: `${providerConfigs.aws.type.group}/${providerConfigs.aws.type.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec: {
      credentials: {
        source: "Secret",
        secretRef: { namespace: SECRET_NAMESPACE, name: secretName, key: "credentials" },
      },
      region: "us-east-1",
      endpoint: { url: endpoint },
    },
  });
}

/** Points the ProviderConfig at another endpoint (moto directly, or the proxy). */
export async function setProviderConfigEndpoint(kube: Kube, name: string, endpoint: string): Promise<void> {
  await kube.patch(providerConfigs.aws.type, name, { spec: { endpoint: { url: endpoint } } });
}

export async function deleteProviderConfig(kube: Kube, name: string): Promise<void> {
  await kube.delete(providerConfigs.aws.type, name);
  await kube.deleteSecret(SECRET_NAMESPACE, `${name}-aws-creds`);
}

const FOR_PROVIDER = { visibilityTimeoutSeconds: 30, messageRetentionSeconds: 345_600, delaySeconds: 0 };

/**
 * A Queue managed resource as a user would write it (no connection Secret: the benchmark counts writes).
 * `adopt`: the queue already exists in the cloud under this name, and the object already carries the
 * external name and the finalizer — the state any managed resource reaches after its first reconciles.
 */
export function queueObject(
  name: string,
  run: string,
  set: BenchSet,
  providerConfig: string,
  opts: { adopt?: boolean } = {},
): KubeObject {
  return {
    apiVersion: Queue.apiVersion,
    kind: Queue.kind,
    metadata: {
      name,
      labels: { [BENCH_LABEL]: run, [SET_LABEL]: set, team: "bench" },
      ...(opts.adopt
        ? { annotations: { [Annotations.externalName]: name }, finalizers: [MANAGED_FINALIZER] }
        : {}),
    },
    spec: { forProvider: { ...FOR_PROVIDER }, providerConfigRef: { name: providerConfig } },
  };
}

/** Creates the SQS queues behind adopted objects, with the attributes their spec asks for. */
export async function createCloudQueues(sqs: SQSClient, names: readonly string[]): Promise<void> {
  await inParallel(names, 8, async (QueueName) => {
    await sqs.send(
      new CreateQueueCommand({
        QueueName,
        Attributes: {
          VisibilityTimeout: String(FOR_PROVIDER.visibilityTimeoutSeconds),
          MessageRetentionPeriod: String(FOR_PROVIDER.messageRetentionSeconds),
          DelaySeconds: String(FOR_PROVIDER.delaySeconds),
        },
      }),
    );
  });
}

/** Creates objects with at most WRITE_CONCURRENCY requests in flight; already existing ones are kept. */
export async function createObjects(kube: Kube, objects: readonly KubeObject[]): Promise<void> {
  await inParallel(objects, WRITE_CONCURRENCY, async (o) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await kube.create(Queue, o);
        return;
      } catch (err) {
        const status = (err as { status?: number }).status;
        if (status === 409) return;
        if (attempt >= 4) throw err;
        await sleep(200 * 2 ** attempt);
      }
    }
  });
}

/** How many objects match (pages of 500, names only would need metadata-only lists; counts are enough). */
export async function countObjects(kube: Kube, type: ResourceType, selector: string): Promise<number> {
  let n = 0;
  let cont: string | undefined;
  do {
    const page = await kube.list(type, {
      limit: 500,
      labelSelector: selector,
      ...(cont ? { continue: cont } : {}),
    });
    n += page.items.length;
    cont = page.continue;
  } while (cont);
  return n;
}

/**
 * Reconciles every key until a whole pass is in sync, which is what "N in-sync resources" means: the
 * queues exist in moto, and the objects carry the finalizer, the external name and Ready/Synced status.
 */
export async function reconcileUntil(
  reconciler: Reconciler,
  names: readonly string[],
  done: (o: Outcome) => boolean,
  opts: { concurrency?: number; maxPasses?: number; pauseMs?: number } = {},
): Promise<{ passes: number; outcomes: Record<string, number> }> {
  let pending = [...names];
  let outcomes: Record<string, number> = {};
  for (let pass = 1; pass <= (opts.maxPasses ?? 8); pass++) {
    outcomes = {};
    const left: string[] = [];
    await inParallel(pending, opts.concurrency ?? 8, async (name) => {
      const res = await reconciler.reconcile(keyOf(name));
      outcomes[res.outcome] = (outcomes[res.outcome] ?? 0) + 1;
      if (!done(res.outcome)) left.push(name);
    });
    if (left.length === 0) return { passes: pass, outcomes };
    pending = left;
    await sleep(opts.pauseMs ?? 300);
  }
  throw new Error(
    `${pending.length} objects not settled after ${opts.maxPasses ?? 8} passes: ${JSON.stringify(outcomes)}`,
  );
}
