// 9. Cloud event → drift corrected (docs/cloud-events.md): a queue's VisibilityTimeout is changed out of
// band on moto, then the documented CloudTrail-via-EventBridge event for that call is sent to the work
// queue on moto (what the EventBridge rule does) and Lambda's event source (emulated, two containers)
// hands it to the handler core, which resolves it (one label-selected LIST) and reconciles the queue.
// t0: just before the event is sent; t1: driftless's SetQueueAttributes reaching the wire (the recording
// proxy). CloudTrail's own delivery delay to EventBridge is not part of it (AWS: best effort, typically
// seconds to a few minutes).
import {
  CreateQueueCommand,
  GetQueueUrlCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from "@aws-sdk/client-sqs";
import { awsKinds } from "../../functions/aws/kinds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { Annotations, MANAGED_FINALIZER } from "../../shared/api/meta.ts";
import { Kube, type KubeObject } from "../../shared/kube/client.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { fixture } from "../../test/support/cloud-events.ts";
import { inParallel } from "../../test/support/env.ts";
import { Reconciler } from "../../test/support/routed.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, createObjects, reconcileUntil, WRITE_CONCURRENCY } from "../lib/fixtures.ts";
import { benchWorkQueue, LambdaEventSource, lambdaContainers } from "../lib/lambda.ts";
import type { Row } from "../lib/report.ts";
import { percentiles, sleep } from "../lib/stats.ts";
import { deleteQueues } from "./latency.ts";

const CORRECTION_TIMEOUT_MS = 15_000;
const SET_LABEL = "driftless.dev/bench-set";
/** Spec value of every queue here; the out-of-band change moves it away. */
const SPEC_VISIBILITY = 30;

const queueObject = (name: string, run: string, providerConfig: string): KubeObject => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: {
    name,
    labels: { [BENCH_LABEL]: run, [SET_LABEL]: "cloud-events" },
    annotations: { [Annotations.externalName]: name },
    finalizers: [MANAGED_FINALIZER],
  },
  spec: {
    forProvider: { region: "us-east-1", visibilityTimeoutSeconds: SPEC_VISIBILITY },
    providerConfigRef: { name: providerConfig },
  },
});

export async function measureCloudEvents(ctx: BenchContext) {
  const n = ctx.quick ? 30 : 100;
  const names = Array.from({ length: n }, (_, i) => `${ctx.run}-ce${i}`);
  const kube = new Kube(ctx.kc);
  const { sqs, work } = await benchWorkQueue(ctx.env, `${ctx.run}-ce-work`);
  const cloudUrls: string[] = [];
  const source = new LambdaEventSource({ sqs, queueUrl: work.queueUrl, queueArn: work.queueArn });
  const workerKubes: Kube[] = [];
  try {
    // Adopted queues (made in moto first), reconciled once: each gets its index label.
    ctx.log(`cloud events: ${n} queues …`);
    await inParallel(names, 8, async (QueueName) => {
      const out = await sqs.send(
        new CreateQueueCommand({ QueueName, Attributes: { VisibilityTimeout: String(SPEC_VISIBILITY) } }),
      );
      cloudUrls.push(out.QueueUrl ?? "");
    });
    await createObjects(
      kube,
      names.map((name) => queueObject(name, ctx.run, ctx.providerConfig)),
    );
    const setup = new Reconciler(kube, new KindRegistry(awsKinds), { rateLimit: false });
    await reconcileUntil(setup, names, (o) => o === "in-sync", { concurrency: 16 });

    // Two emulated Lambda containers, each with the worker the entry point builds.
    const { handlers: containers, kubes } = lambdaContainers({ kc: ctx.kc, sqs, queueUrl: work.queueUrl });
    workerKubes.push(...kubes);
    source.start(containers);
    await sleep(1_000);
    for (const k of workerKubes) k.resetStats();

    const samplesMs: number[] = [];
    let timeouts = 0;
    for (const [i, name] of names.entries()) {
      const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl ?? "";
      // The console user's change: straight to moto, not through the recording proxy.
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: String(60 + i) } }),
      );
      const mark = ctx.proxy.mark();
      const t0 = Date.now();
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: work.queueUrl,
          MessageBody: fixture("aws-sqs-set-queue-attributes.json", { "orders-queue": name }),
        }),
      );
      const call = await ctx.proxy.waitFor(
        (c) => c.action === "SQS.SetQueueAttributes" && (c.resource?.endsWith(`/${name}`) ?? false),
        mark,
        CORRECTION_TIMEOUT_MS,
      );
      if (call) samplesMs.push(call.at - t0);
      else timeouts++;
      await sleep(20 + Math.random() * 60);
    }
    await source.drained(2_000, 60_000);
    const lists = workerKubes.reduce((a, k) => a + k.stats.lists, 0);
    const markReads = (ks: Kube[]) => ks.reduce((a, k) => a + (k.stats.byOperation["get ConfigMap"] ?? 0), 0);
    const managedMarkReads = markReads(workerKubes);

    // Events about queues driftless does not manage (most of a real account's): dropped after their LISTs.
    // The kind's namespaced shape has no object here: once checked and recorded unused, it is not asked.
    const unmanaged = Array.from({ length: n }, (_, i) => `${ctx.run}-ce-unmanaged${i}`);
    for (const k of workerKubes) k.resetStats();
    for (const name of unmanaged) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: work.queueUrl,
          MessageBody: fixture("aws-sqs-set-queue-attributes.json", { "orders-queue": name }),
        }),
      );
      await sleep(20 + Math.random() * 60);
    }
    await source.drained(2_000, 60_000);
    const unmanagedLists = workerKubes.reduce((a, k) => a + k.stats.lists, 0);
    const result = {
      events: n,
      samplesMs,
      timeouts,
      percentiles: percentiles(samplesMs),
      listsPerEvent: lists / n,
      markReadsPerEvent: managedMarkReads / n,
      unmanagedEvents: unmanaged.length,
      listsPerUnmanagedEvent: unmanagedLists / unmanaged.length,
      markReadsPerUnmanagedEvent: markReads(workerKubes) / unmanaged.length,
      invocations: source.invocations.length,
    };
    ctx.log(
      `cloud events: ${JSON.stringify(result.percentiles)} ms, ${timeouts} timeouts, ${result.listsPerEvent} LISTs/event (managed), ${result.listsPerUnmanagedEvent} LISTs/event (unmanaged), marks read ${managedMarkReads} + ${markReads(workerKubes)} times`,
    );
    const p = result.percentiles;
    const rows: Row[] = [
      {
        section: "9 cloud events",
        metric: `CloudTrail event on SQS → drift corrected (update call), Lambda core (p50/p95/p99, ${samplesMs.length} events)`,
        value: `${Math.round(p.p50 ?? 0)} / ${Math.round(p.p95 ?? 0)} / ${Math.round(p.p99 ?? 0)} ms`,
        target: "p99 < 5 s",
        pass: timeouts === 0 && (p.p99 ?? Number.POSITIVE_INFINITY) < 5_000,
        range: samplesMs.length > 0 ? `${Math.min(...samplesMs)}–${Math.max(...samplesMs)} ms` : "—",
      },
      {
        section: "9 cloud events",
        metric: "API-server LISTs per event (index label lookup)",
        value: result.listsPerEvent.toFixed(2),
        target: "1",
        pass: result.listsPerEvent === 1,
        range: "—",
      },
      {
        section: "9 cloud events",
        metric: `API-server LISTs per event about an unmanaged queue (${unmanaged.length} events; the namespaced shape checked once)`,
        value: result.listsPerUnmanagedEvent.toFixed(2),
        target: "1",
        // The one check of the never-asked namespaced shape is its 1 extra LIST in the first event.
        pass: unmanagedLists <= unmanaged.length + 1,
        range: "—",
      },
      {
        section: "9 cloud events",
        metric: "reads of the shapes' marks per event, managed / unmanaged (2 containers, cached 30 s)",
        value: `${result.markReadsPerEvent.toFixed(2)} / ${result.markReadsPerUnmanagedEvent.toFixed(2)}`,
        target: "—",
        pass: undefined,
        range: "—",
      },
    ];
    return { rows, result };
  } finally {
    await source.stop();
    await inParallel(names, WRITE_CONCURRENCY, (name) =>
      kube.patch(Queue, name, { metadata: { finalizers: null } }).catch(() => undefined),
    );
    await inParallel(names, WRITE_CONCURRENCY, (name) => kube.delete(Queue, name).catch(() => undefined));
    await deleteQueues(sqs, [...cloudUrls, work.queueUrl, work.dlqUrl]);
    sqs.destroy();
  }
}
