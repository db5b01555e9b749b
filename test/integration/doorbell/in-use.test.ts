// The in-use guard against the real kube-apiserver: `driftless run` in doorbell mode registers its webhook
// configuration (objectSelector: this test's label, so no other test's deletes are asked about), and a
// DELETE of a managed resource a ClusterUsage holds is refused by the API server itself, naming the Usage —
// the object keeps no deletionTimestamp, the queue stays in moto. The refused attempt is recorded, and with
// replayDeletion the deletion is made again when the Usage goes. A resource nothing uses deletes as ever.
import { randomBytes } from "node:crypto";
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import {
  ClusterUsageType,
  DELETION_ATTEMPT_ANNOTATION,
  IN_USE_LABEL,
} from "../../../shared/api/protection/usage.ts";
import { deleteWebhookConfiguration, WEBHOOK_CONFIGURATION_TYPE } from "../../../shared/doorbell/webhook.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import type { Running } from "../../../shared/pipeline/run.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { startDoorbellRun, untilRinging } from "../../support/doorbell-run.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, getMr } from "../../support/reconcile.ts";
import { TEST_LABEL } from "../pipeline/helpers.ts";

const kube = newKube();
const sqs = motoSqs();
const label = uniqueName("in-use");
const PC = uniqueName("pc-in-use");
const webhookName = `driftless-doorbell-${label}`;
const names: string[] = [];
const usages: string[] = [];
let run: Running;

const queueObject = (name: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: label } },
  spec: { forProvider: {}, providerConfigRef: { name: PC } },
});
const inMoto = async (name: string) =>
  sqs.send(new GetQueueUrlCommand({ QueueName: name })).then(
    () => true,
    () => false,
  );
const isReady = async (name: string) =>
  conditionOf(await getMr(kube, Queue, name), "Ready")?.status === "True";

async function readyQueue(): Promise<string> {
  const name = uniqueName("in-use-q");
  names.push(name);
  await kube.create(Queue, queueObject(name));
  await eventually(() => isReady(name), { timeoutMs: 30_000, what: `Queue ${name} Ready` });
  return name;
}

/** A ClusterUsage of a queue for a reason, reconciled by the running process until the queue is labelled. */
async function useQueue(queue: string, replayDeletion: boolean): Promise<string> {
  const usage = uniqueName("uses-q");
  usages.push(usage);
  await kube.create(ClusterUsageType, {
    apiVersion: "protection.crossplane.io/v1beta1",
    kind: "ClusterUsage",
    metadata: { name: usage, labels: { [TEST_LABEL]: label } },
    spec: {
      of: { apiVersion: Queue.apiVersion, kind: "Queue", resourceRef: { name: queue } },
      reason: "holds the orders of the shop",
      replayDeletion,
    },
  } as unknown as KubeObject);
  await eventually(
    async () => (await getMr(kube, Queue, queue))?.metadata.labels?.[IN_USE_LABEL] === "true",
    {
      timeoutMs: 30_000,
      what: "the in-use label on the used queue",
    },
  );
  return usage;
}

/** What the API server answers a DELETE (the error's message, or "deleted"). */
async function attemptDelete(name: string): Promise<string> {
  try {
    await kube.delete(Queue, name);
    return "deleted";
  } catch (err) {
    return (err as Error).message;
  }
}

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  const secret = randomBytes(24).toString("hex");
  ({ run } = await startDoorbellRun(kube, { label, secret, webhookName, name: "in-use-test" }));
  // The guard is in the same configuration as the doorbell: once it rings, the guard is asked too.
  const probe = uniqueName("in-use-probe");
  names.push(probe);
  await untilRinging(kube, run, { name: probe, label, providerConfig: PC });
}, 120_000);

afterAll(async () => {
  await run?.stop();
  await deleteWebhookConfiguration(kube, webhookName).catch(() => {});
  for (const u of usages) {
    await kube.patch(ClusterUsageType, u, { metadata: { finalizers: null } }).catch(() => {});
    await kube.delete(ClusterUsageType, u).catch(() => {});
  }
  for (const n of names) {
    await kube.patch(Queue, n, { metadata: { finalizers: null } }).catch(() => {});
    await kube.delete(Queue, n).catch(() => {});
  }
});

describe("the in-use guard on the real API server", () => {
  it("registers a fail-closed DELETE webhook for in-use objects beside the doorbell", async () => {
    const config = (await kube.get(WEBHOOK_CONFIGURATION_TYPE, webhookName)) as unknown as {
      webhooks: Array<{ name: string; failurePolicy: string; objectSelector?: { matchLabels?: object } }>;
    };
    const guard = config.webhooks.find((w) => w.name === "in-use.doorbell.driftless.dev");
    expect(guard?.failurePolicy).toBe("Fail");
    expect(guard?.objectSelector?.matchLabels).toEqual({ [TEST_LABEL]: label, [IN_USE_LABEL]: "true" });
  });

  it("refuses the DELETE of a queue a ClusterUsage holds, naming it; replays it when the Usage goes", async () => {
    const queue = await readyQueue();
    const usage = await useQueue(queue, true);

    const answer = await attemptDelete(queue);
    expect(answer).toContain("denied the request");
    expect(answer).toContain(
      `including the ClusterUsage "${usage}" with reason: "holds the orders of the shop"`,
    );
    // Refused means refused: no deletionTimestamp, the queue still in the cloud, and asked again, refused again.
    const held = await getMr(kube, Queue, queue);
    expect(held?.metadata.deletionTimestamp).toBeUndefined();
    expect(held?.metadata.annotations?.[DELETION_ATTEMPT_ANNOTATION]).toBe("Background");
    expect(await inMoto(queue)).toBe(true);
    expect(await attemptDelete(queue)).toContain(`ClusterUsage "${usage}"`);

    // The Usage goes: the label goes with it and the refused deletion is made again (replayDeletion).
    await kube.delete(ClusterUsageType, usage);
    await eventually(async () => !(await getMr(kube, Queue, queue)) && !(await inMoto(queue)), {
      timeoutMs: 60_000,
      what: "the replayed deletion reaching moto",
    });
  });

  it("a queue nothing uses any more deletes as ever (no replay without replayDeletion: the user deletes it)", async () => {
    const queue = await readyQueue();
    const usage = await useQueue(queue, false);
    expect(await attemptDelete(queue)).toContain(`ClusterUsage "${usage}"`);
    await kube.delete(ClusterUsageType, usage);
    await eventually(
      async () => (await getMr(kube, Queue, queue))?.metadata.labels?.[IN_USE_LABEL] === undefined,
      {
        timeoutMs: 30_000,
        what: "the in-use label gone with the Usage",
      },
    );
    expect((await getMr(kube, Queue, queue))?.metadata.deletionTimestamp).toBeUndefined();
    expect(await attemptDelete(queue)).toBe("deleted");
    await eventually(async () => !(await getMr(kube, Queue, queue)) && !(await inMoto(queue)), {
      timeoutMs: 30_000,
      what: "the queue deleted in moto",
    });
  });
});
