// Provider objects on the real kube-apiserver: the CRD installs, a function's start registers its version,
// the drift sweep writes health (the dead-letter depth read from moto's SQS), and the API server renders
// the printer columns `kubectl get providers` shows. A shard label keeps this suite's Provider and objects
// apart from every other suite's on the shared API server.
import { CreateQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { providerConfigType } from "../../../shared/api/managed.ts";
import { Provider, type ProviderObject, providerCrd } from "../../../shared/api/pkg/provider.ts";
import { allCrds } from "../../../shared/crds.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { applyCrds } from "../../../shared/kube/crds.ts";
import { CRD_TYPE } from "../../../shared/ops/activation.ts";
import {
  DRIFTLESS_VERSION,
  lambdaIdentity,
  providerName,
  registerProvider,
} from "../../../shared/ops/provider.ts";
import { sweepWithProviderHealth } from "../../../shared/ops/provider-health.ts";
import { runScheduledSweep } from "../../../shared/pipeline/functions.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import type { ReconcileMessage } from "../../../shared/queue/message.ts";
import { sqsQueueDepth } from "../../../shared/queue/sqs-depth.ts";
import { typesOf } from "../../../shared/worker/worker.ts";
import { motoSqs } from "../../support/aws.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { tableRow } from "../../support/table.ts";

const kube = newKube();
const kc = kubeConfig();
const PC = providerConfigType("aws");
const SHARD = "driftless.dev/test-provider";
const shard = uniqueName("p");
const selector = `${SHARD}=${shard}`;
const name = providerName("aws", selector);
const sqs = motoSqs();
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const created: Array<[typeof Queue | typeof PC, string]> = [];

/** What `kubectl get providers.pkg.driftless.dev NAME` shows: the server renders the printer columns. */
const providerRow = () =>
  tableRow(kc, `/apis/${Provider.group}/${Provider.version}/${Provider.plural}/${name}`);

/** An object of this suite's shard, with the status a reconcile would have written. */
async function seed(t: typeof Queue | typeof PC, objName: string, spec: object, conditions: object[]) {
  await kube.create<KubeObject>(t, {
    apiVersion: `${t.group}/${t.version}`,
    kind: t.kind,
    metadata: { name: objName, labels: { [SHARD]: shard } },
    spec,
  });
  created.push([t, objName]);
  await kube.patchStatus(t, objName, { conditions });
}

const condition = (type: string, status: string, reason: string, message?: string) => ({
  type,
  status,
  reason,
  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  ...(message ? { message } : {}),
});

const kinds = awsKinds.filter((k) => !k.definition.namespaced);
const pcKinds = awsProviderConfigKinds.filter(
  (k) => k.type.group === PC.group && k.type.kind === "ProviderConfig",
);

/** The AWS sweep function's path: runScheduledSweep through sweepWithProviderHealth, DLQ depth from SQS. */
async function sweepOnce(dlqUrl: string): Promise<ReconcileMessage[]> {
  const sent: ReconcileMessage[] = [];
  await sweepWithProviderHealth(
    kube,
    {
      kinds,
      providerConfigKinds: pcKinds,
      labelSelector: selector,
      logger: quiet,
      deadLetters: () => sqsQueueDepth(sqs, dlqUrl),
    },
    (k) =>
      runScheduledSweep({
        kube: k,
        types: typesOf(kinds, pcKinds),
        producer: {
          send: async (m) => {
            sent.push(...m);
            return { sent: m.length, failed: [] };
          },
        },
        scheduleMs: 60_000,
        defaultPollMs: 300_000,
        logger: quiet,
        labelSelector: selector,
      }),
  );
  return sent;
}

const lambda = (version: string) =>
  lambdaIdentity({
    AWS_LAMBDA_FUNCTION_NAME: "driftless-it-reconcile",
    AWS_LAMBDA_FUNCTION_VERSION: version,
  });

let dlqUrl = "";

beforeAll(async () => {
  // Only the CRDs this suite uses: the Provider's, the Queue's and the AWS ProviderConfig's.
  const used = new Set([`${Queue.plural}.${Queue.group}`, `${PC.plural}.${PC.group}`]);
  await applyCrds(kc, [...allCrds().filter((c) => used.has(c.metadata.name)), providerCrd()]);
  const q = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("provider-dlq") }));
  dlqUrl = q.QueueUrl ?? "";
});

afterAll(async () => {
  for (const [t, n] of created) {
    await kube.patch(t, n, { metadata: { finalizers: null } }).catch(() => undefined);
    await kube.delete(t, n);
  }
  await kube.delete(Provider, name);
});

describe("Provider objects on the real API server", () => {
  it("the CRD is accepted and stored unchanged (no field pruned), with Crossplane's columns", async () => {
    const crd = providerCrd();
    const stored = await kube.get<KubeObject & { spec: typeof crd.spec }>(CRD_TYPE, crd.metadata.name);
    expect(stored?.spec.versions[0]?.schema).toEqual(crd.spec.versions[0]?.schema);
    expect(stored?.spec.versions[0]?.additionalPrinterColumns).toEqual(
      crd.spec.versions[0]?.additionalPrinterColumns,
    );
    expect(stored?.spec.names.shortNames).toEqual(["dlprovider"]);
  });

  it("registration, health from the sweep, revisions, and the columns kubectl shows", async () => {
    // A function of version 7 starts: the Provider appears with revision 1.
    expect(
      await registerProvider(kube, { cloud: "aws", identity: lambda("7"), labelSelector: selector }),
    ).toEqual({
      outcome: "created",
      name,
      revision: 1,
    });
    expect(await providerRow()).toMatchObject({
      Name: name,
      INSTALLED: "True",
      HEALTHY: "Unknown",
      VERSION: DRIFTLESS_VERSION,
      REVISION: 1,
    });

    // Two synced Queues and a ProviderConfig whose credentials work: healthy.
    await seed(PC, `${shard}-pc`, { credentials: { source: "InjectedIdentity" } }, [
      condition("Ready", "True", "Available", "credentials accepted (arn:aws:iam::123456789012:role/x)"),
    ]);
    for (const q of ["a", "b"])
      await seed(Queue, `${shard}-${q}`, { forProvider: { region: "us-east-1" } }, [
        condition("Ready", "True", "Available"),
        condition("Synced", "True", "ReconcileSuccess"),
      ]);
    await sweepOnce(dlqUrl);
    let p = await kube.get<ProviderObject>(Provider, name);
    expect(p?.status?.resources).toMatchObject({ total: 2, synced: 2, failing: 0 });
    expect(p?.status?.activatedKinds).toContain("queues.sqs.aws.driftless.dev");
    expect(p?.status?.deadLetters).toBe(0);
    expect(await providerRow()).toMatchObject({ INSTALLED: "True", HEALTHY: "True", REVISION: 1 });

    // Nothing changed: the next sweep leaves the object alone (same resourceVersion).
    const rv = p?.metadata.resourceVersion;
    await sweepOnce(dlqUrl);
    expect((await kube.get<ProviderObject>(Provider, name))?.metadata.resourceVersion).toBe(rv);

    // Two messages land in the dead-letter queue: unhealthy, and the reason says why.
    for (const body of ["x", "y"])
      await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: body }));
    await sweepOnce(dlqUrl);
    p = await kube.get<ProviderObject>(Provider, name);
    expect(p?.status?.conditions?.find((c) => c.type === "Healthy")).toMatchObject({
      status: "False",
      reason: "DeadLetters",
      message: "2 dead-lettered messages",
    });
    expect(await providerRow()).toMatchObject({ HEALTHY: "False" });

    // Version 8 is deployed: revision 2, the history keeps revision 1.
    expect(
      await registerProvider(kube, { cloud: "aws", identity: lambda("8"), labelSelector: selector }),
    ).toMatchObject({
      outcome: "revision",
      revision: 2,
    });
    p = await kube.get<ProviderObject>(Provider, name);
    expect(p?.status?.revisions?.map((r) => r.identifier)).toEqual([
      "aws-lambda driftless-it-reconcile:8",
      "aws-lambda driftless-it-reconcile:7",
    ]);
    const row = await providerRow();
    expect(row).toMatchObject({
      INSTALLED: "True",
      HEALTHY: "False",
      VERSION: DRIFTLESS_VERSION,
      REVISION: 2,
    });
    expect(row.DEPLOYMENT).toBe("aws-lambda driftless-it-reconcile:8");
    expect(typeof row.AGE).toBe("string");
  });
});
