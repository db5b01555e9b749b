// Area 5 — bad input. Every manifest of test/faults/corpus/*.yaml (its first line says what must happen)
// is applied to the real API server the way kubectl does, and everything accepted is reconciled by one
// `driftless run` together with a valid neighbour: each invalid manifest gets a clear error — a 4xx from
// the API server or Synced=False naming the field — and the neighbour still becomes Ready.
// Then malformed queue messages through the memory queue and the Pub/Sub push core:
// each is dead-lettered (or refused at send) with one clear log line and no crash. Last, a
// fast-check fuzz of the whole Lambda SQS core's input.

import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { awsKinds, awsProviderConfigKinds } from "../../functions/aws/kinds.ts";
import { Subnet, VPC } from "../../shared/api/aws/ec2.ts";
import { DBInstance } from "../../shared/api/aws/rds.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef, ManagedResource } from "../../shared/api/managed.ts";
import { startRun } from "../../shared/pipeline/run.ts";
import { MemoryQueue } from "../../shared/queue/memory.ts";
import { encodeMessage, makeMessage, type ReconcileMessage } from "../../shared/queue/message.ts";
import type { QueueEvent } from "../../shared/queue/port.ts";
import type { PubSubPublisher } from "../../shared/queue/pubsub-rest.ts";
import { MalformedMessageError, ReconcileFailedError } from "../../shared/worker/errors.ts";
import { reconcileHandler } from "../../shared/worker/memory.ts";
import { handlePubSubPush } from "../../shared/worker/pubsub.ts";
import { handleSqsBatch } from "../../shared/worker/sqs.ts";
import { TEST_LABEL } from "../integration/pipeline/helpers.ts";
import { createAwsProviderConfig, ensureCrds } from "../support/aws.ts";
import { eventually, kubeConfig, newKube, uniqueName } from "../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import { pushEvent, recordingLogger, recordingSqs, sqsRecord } from "../unit/worker/factories.ts";
import { bufferLogger, eventsFor, forceDelete, Tally } from "./support.ts";

const kube = newKube();
const PC = uniqueName("pc-bad");
const RUN = uniqueName("fbad");
const tally = new Tally("5 bad input");
const CORPUS = join(import.meta.dirname, "corpus");
const MIB = 1024 * 1024;
const KINDS: ManagedKindDef[] = [Queue, VPC, Subnet, DBInstance];
const accepted: Array<{ def: ManagedKindDef; name: string }> = [];

interface Case {
  file: string;
  expect: string;
  pattern: string | undefined;
  object: KubernetesObject;
  missing: string;
}

function loadCorpus(): Case[] {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
    .map((file) => {
      const missing = uniqueName("missing");
      const name = `${RUN}-${basename(file, ".yaml")}`.slice(0, 63).replace(/-+$/, "");
      const fill = (s: string) =>
        s
          .replaceAll("__NAME__", name)
          .replaceAll("__LABEL__", RUN)
          .replaceAll("__PC__", PC)
          .replaceAll("__MISSING__", missing)
          .replaceAll("__HUGE_1MIB__", "h".repeat(MIB))
          .replaceAll("__HUGE_4MIB__", "h".repeat(4 * MIB));
      const text = readFileSync(join(CORPUS, file), "utf8");
      const header = /^# expect: ([a-z-]+)(?::\s*(.*))?$/m.exec(text);
      if (!header?.[1]) throw new Error(`${file}: first line must be "# expect: …"`);
      const pattern = header[2] ? header[2].replaceAll("__MISSING__", missing) : undefined;
      return { file, expect: header[1], pattern, object: parse(fill(text)) as KubernetesObject, missing };
    });
}

const defOf = (o: KubernetesObject) => KINDS.find((d) => d.apiVersion === o.apiVersion && d.kind === o.kind);

/** What the API server (or the client, before it) said about a refused object. */
function errorText(err: unknown): string {
  const e = err as { message?: string; body?: unknown; code?: number };
  const body = typeof e.body === "string" ? e.body : JSON.stringify(e.body ?? "");
  return `${e.code ?? ""} ${e.message ?? ""} ${body}`.slice(0, 4000);
}

const get = (def: ManagedKindDef, name: string) => getMr(kube, def, name);

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
});

afterAll(async () => {
  const r = newReconciler(kube);
  await Promise.all(
    accepted.map(async ({ def, name }) => {
      await kube.delete(def, name);
      await settle(r, keyOf(def, name), 6);
    }),
  );
  for (const { def, name } of accepted) await forceDelete(kube, def, [name]);
  tally.report();
  expect(tally.lost).toBe(0);
});

// The tests of this file are independent (own objects, own queues): they run at once.
describe.concurrent("bad input", () => {
  it("each invalid manifest of the corpus gets a clear error; the valid neighbour becomes Ready in the same run", async () => {
    const mine = tally.scope("bad-input#1");
    const cases = loadCorpus();
    const api = KubernetesObjectApi.makeApiClient(kubeConfig());
    const refused = new Map<string, string>();
    const stored = new Map<string, KubernetesObject>();
    for (const c of cases) {
      try {
        const out = await api.create(c.object);
        stored.set(c.file, out);
        const def = defOf(c.object);
        if (def) accepted.push({ def, name: c.object.metadata?.name ?? "" });
      } catch (err) {
        refused.set(c.file, errorText(err));
      }
    }
    const { logger, lines } = bufferLogger("info");
    const run = await startRun({
      kubeConfig: kubeConfig(),
      logger,
      kinds: awsKinds,
      providerConfigKinds: awsProviderConfigKinds,
      labelSelector: `${TEST_LABEL}=${RUN}`,
      sweepIntervalMs: 5_000,
      workers: 8,
    });
    try {
      await Promise.all(
        cases.map(async (c) => {
          const def = defOf(c.object);
          const name = c.object.metadata?.name ?? "";
          const label = `${c.file} (${c.expect})`;
          if (c.expect === "rejected") {
            const text = refused.get(c.file);
            const named = text !== undefined && new RegExp(c.pattern ?? ".").test(text);
            const status = /^(\d{3})/.exec(text ?? "")?.[1];
            mine.record(
              label,
              named,
              text ? `refused (${status || "client"}): ${text.slice(0, 300)}` : "accepted!",
            );
            return;
          }
          if (!def || refused.has(c.file)) {
            mine.record(label, false, `refused: ${refused.get(c.file)?.slice(0, 300)}`);
            return;
          }
          if (c.expect === "ready" || c.expect === "pruned") {
            let detail = "";
            if (c.expect === "pruned") {
              const spec = (stored.get(c.file) as { spec?: Record<string, unknown> })?.spec ?? {};
              const fp = (spec.forProvider ?? {}) as Record<string, unknown>;
              const gone = !("bogus" in spec) && !("colour" in fp) && !("nested" in fp);
              detail = `stored spec: ${JSON.stringify(spec)}; `;
              if (!gone) return void mine.record(label, false, `${detail}unknown fields kept`);
            }
            const ok = await eventually(
              async () => conditionOf(await get(def, name), "Ready")?.status === "True" || undefined,
              { timeoutMs: 40_000, what: `${name} Ready` },
            ).catch(() => false);
            mine.record(label, ok === true, `${detail}Ready ${ok}`);
            return;
          }
          if (c.expect === "synced-false") {
            const re = new RegExp(c.pattern ?? ".");
            const synced = await eventually(
              async () => {
                const s = conditionOf(await get(def, name), "Synced");
                return s?.status === "False" && re.test(s.message ?? "") ? s : undefined;
              },
              { timeoutMs: 40_000, what: `${name} Synced=False` },
            ).catch(async () => conditionOf(await get(def, name), "Synced"));
            const ok = synced?.status === "False" && re.test(synced.message ?? "");
            // The Warning Event follows the status write.
            const warned = await eventually(
              async () => (await eventsFor(kube, name)).some((e) => e.type === "Warning") || undefined,
              { timeoutMs: 10_000, what: `a Warning Event about ${name}` },
            ).catch(() => false);
            mine.record(
              label,
              ok && warned,
              `Synced=${synced?.status}: ${synced?.message}; Warning event ${warned}`,
            );
            return;
          }
          if (c.expect === "bounded") {
            // Accepted by the API server; whatever the cloud says, nothing may carry the huge value.
            const mr = await eventually(
              async () => {
                const o = await get(def, name);
                return conditionOf(o, "Synced") ? o : undefined;
              },
              { timeoutMs: 40_000, what: `${name} reconciled` },
            ).catch(() => undefined);
            const statusBytes = JSON.stringify(mr?.status ?? {}).length;
            const eventBytes = Math.max(
              0,
              ...(await eventsFor(kube, name)).map((e) => (e.message ?? "").length),
            );
            const longest = Math.max(0, ...lines().map((l) => l.length));
            const synced = conditionOf(mr as ManagedResource | undefined, "Synced");
            mine.record(
              label,
              mr !== undefined && statusBytes < 64 * 1024 && eventBytes <= 1024 && longest < 64 * 1024,
              `stored (${Math.round(JSON.stringify(stored.get(c.file) ?? {}).length / 1024)} KiB); Synced=${synced?.status} ${synced?.message ?? ""}; status ${statusBytes} B, longest event ${eventBytes} B, longest log line ${longest} B — no maxLength on tag values in the CRD: the cloud decides (moto accepts, AWS allows 256)`,
            );
            return;
          }
          mine.record(label, false, `unknown expectation ${c.expect}`);
        }),
      );
      const crashed = run.readiness().find((c) => c.name === "queue" && !c.ok);
      mine.record("the run survived the corpus", !crashed, crashed?.detail);
    } finally {
      await run.stop();
    }
    expect(mine.lost()).toEqual([]);
  }, 120_000);

  it("malformed messages in the memory queue: refused at send (naming the rule) or dead-lettered, never a crash", async () => {
    const mine = tally.scope("bad-input#2");
    const valid = makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: "x" }, "watch");
    const bad: Array<[string, unknown]> = [
      ["wrong version", { ...valid, v: 2 }],
      ["no name", { ...valid, name: undefined }],
      ["name not DNS-1123", { ...valid, name: "Not_Valid" }],
      ["256 KB name", { ...valid, name: "n".repeat(256 * 1024) }],
      ["reason not in the contract", { ...valid, reason: "because" }],
      ["at not RFC 3339", { ...valid, at: "yesterday" }],
    ];
    const events: QueueEvent[] = [];
    const dead: string[] = [];
    const queue = new MemoryQueue({
      workers: 2,
      maxReceiveCount: 2,
      retryBackoff: { baseMs: 50, maxMs: 100 },
      onEvent: (e) => events.push(e),
      onDeadLetter: (d) => dead.push(d.message.kind),
    });
    const reconciler = newReconciler(kube);
    queue.start(reconcileHandler({ reconcile: (key) => reconciler.reconcile(key) }));
    const sent = await queue.send(bad.map(([, m]) => m as ReconcileMessage));
    bad.forEach(([label], i) => {
      const failure = sent.failed.find((f) => f.index === i);
      mine.record(
        `memory queue: ${label}`,
        failure?.error.name === "InvalidMessageError" && !/n{100}/.test(failure.error.message),
        failure?.error.message.slice(0, 200) ?? "accepted!",
      );
    });
    // Valid shape, but a kind nothing serves: delivered, fails every time, dead-lettered.
    await queue.send([{ ...valid, apiVersion: "nosuch.example.com/v1", kind: "NoSuchKind", name: RUN }]);
    await eventually(async () => dead.length === 1 || undefined, { timeoutMs: 10_000, what: "dead letter" });
    await queue.stop();
    const line = events.filter((e) => e.msg === "message dead-lettered");
    mine.record(
      "memory queue: unknown kind → dead-lettered with one clear line",
      line.length === 1 && /no provider is registered for this kind/.test(String(line[0]?.err)),
      JSON.stringify(line[0]),
    );
    expect(mine.lost()).toEqual([]);
  }, 30_000);

  it("malformed messages through the Pub/Sub push core: copied to the dead-letter topic or nacked, once logged", async () => {
    const mine = tally.scope("bad-input#4");
    const valid = makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: "x" }, "watch");
    const published: Array<{ data: Buffer; attributes: Record<string, string> }> = [];
    const deadLetterTopic: PubSubPublisher = {
      publish: async (messages) => {
        for (const m of messages) published.push({ data: m.data, attributes: m.attributes ?? {} });
        return messages.map(() => "dlq-id");
      },
    };
    const reconcile = async () => ({
      outcome: "error" as const,
      error: new Error("no provider is registered for this kind"),
    });
    const cases: Array<[string, unknown]> = [
      ["data not JSON", { id: "e1", data: "{{{" }],
      ["no message in the envelope", { id: "e2", data: { subscription: "s" } }],
      ["body not JSON", pushEvent("not json at all", { messageId: "e3" })],
      ["wrong version", pushEvent(JSON.stringify({ ...valid, v: 7 }), { messageId: "e4" })],
      [
        "256 KB body",
        pushEvent(JSON.stringify({ ...valid, pad: "p".repeat(256 * 1024) }), { messageId: "e5" }),
      ],
    ];
    for (const [label, event] of cases) {
      const { logger, lines } = recordingLogger();
      const before = published.length;
      const out = await handlePubSubPush({ reconcile, logger, deadLetterTopic }, event).catch(
        (e: Error) => e,
      );
      const dlq = published.slice(before)[0];
      mine.record(
        `Pub/Sub push: ${label}`,
        !(out instanceof Error) &&
          (out as { outcome: string }).outcome === "dead-lettered" &&
          Boolean(dlq?.attributes["driftless-error"]) &&
          lines.filter((l) => l.level === "error").length === 1,
        `${JSON.stringify(out)}; error attribute "${dlq?.attributes["driftless-error"]}"`,
      );
    }
    // Without a dead-letter topic: nacked (MalformedMessageError), the subscription's policy takes it.
    const { logger } = recordingLogger();
    const nacked = await handlePubSubPush(
      { reconcile, logger },
      pushEvent("nope", { messageId: "e6" }),
    ).catch((e: Error) => e);
    mine.record(
      "Pub/Sub push: malformed, no DLQ topic → nacked",
      nacked instanceof MalformedMessageError,
      String(nacked),
    );
    const failing = await handlePubSubPush(
      { reconcile, logger },
      pushEvent({ ...valid, apiVersion: "nosuch.example.com/v1", kind: "NoSuchKind" }, { messageId: "e7" }),
    ).catch((e: Error) => e);
    mine.record(
      "Pub/Sub push: unknown kind → nacked for the retry and dead-letter policy",
      failing instanceof ReconcileFailedError,
      String(failing),
    );
    expect(mine.lost()).toEqual([]);
  });

  it("fuzz: the Lambda SQS core never throws, and settles every record exactly once", async () => {
    const mine = tally.scope("bad-input#5");
    const valid = makeMessage({ apiVersion: Queue.apiVersion, kind: Queue.kind, name: "q" }, "watch");
    const body = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      fc.constant(encodeMessage(valid)),
      fc
        .record({ name: fc.stringMatching(/^[a-z0-9]{1,20}$/), kind: fc.constantFrom("Queue", "VPC", "X") })
        .map((r) => encodeMessage({ ...valid, ...r })),
      fc.constant("x".repeat(20_000)),
    );
    const record = fc.record({
      body,
      receiveCount: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.constant(Number.NaN)),
      outcome: fc.constantFrom("in-sync", "creating", "error", "throw"),
      sqsFails: fc.boolean(),
    });
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 10 }), async (recs) => {
        runs++;
        const { sqs: client } = recordingSqs(() => recs.some((r) => r.sqsFails));
        const { logger } = recordingLogger();
        const records = recs.map((r, i) => {
          const rec = sqsRecord(r.body, { messageId: `m${i}` });
          rec.attributes.ApproximateReceiveCount = String(r.receiveCount);
          return rec;
        });
        const byName = new Map(recs.map((r) => [r.body, r.outcome]));
        const out = await handleSqsBatch(
          {
            sqs: client,
            logger,
            queueUrl: "http://sqs.test/1/q",
            deadLetterQueueUrl: recs.length % 2 ? "http://sqs.test/1/q-dlq" : undefined,
            maxReceiveCount: 3,
            reconcile: async (key) => {
              const outcome =
                [...byName.entries()].find(([b]) => b.includes(`"name":"${key.name}"`))?.[1] ?? "in-sync";
              if (outcome === "throw") throw new Error("boom");
              if (outcome === "error")
                return { outcome: "error", error: new Error("failed"), requeueAfterMs: 1000 };
              if (outcome === "creating") return { outcome: "creating", requeueAfterMs: 2000 };
              return { outcome: "in-sync" };
            },
          },
          { Records: records },
        );
        const ids = out.batchItemFailures.map((f) => f.itemIdentifier);
        return (
          new Set(ids).size === ids.length &&
          ids.every((id) => records.some((r) => r.messageId === id)) &&
          out.summary.records === records.length
        );
      }),
      { numRuns: 300 },
    );
    mine.record("fuzz: 300 random batches through handleSqsBatch", true, `${runs} batches`);
  }, 60_000);
});
