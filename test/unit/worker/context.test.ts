// Every reconcile log line carries the message's reason and correlation id; the worker reports queue age.
import { describe, expect, it } from "vitest";
import { makeMessage } from "../../../shared/queue/message.ts";
import { contextLogger, reconcileContext } from "../../../shared/worker/context.ts";
import { reconcileHandler } from "../../../shared/worker/memory.ts";
import { contextOf, queueAgeMs } from "../../../shared/worker/message.ts";
import { recordingLogger } from "../../support/reconcile.ts";

const recording = recordingLogger;

describe("reconcile context", () => {
  it("adds reason and correlationId to every line inside the context, and nothing outside it", async () => {
    const { lines, logger } = recording();
    const log = contextLogger(logger);
    log.info({ key: "Queue/a" }, "outside");
    await reconcileContext.run({ reason: "watch", correlationId: "m-1" }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      log.info({ key: "Queue/a", outcome: "in-sync", durationMs: 3 }, "reconciled");
    });
    expect(lines).toEqual([
      { level: "info", key: "Queue/a", msg: "outside" },
      {
        level: "info",
        reason: "watch",
        correlationId: "m-1",
        key: "Queue/a",
        outcome: "in-sync",
        durationMs: 3,
        msg: "reconciled",
      },
    ]);
  });

  it("uses the message's correlation id, else the queue's id for it", () => {
    const ref = { apiVersion: "sqs.aws.driftless.dev/v1alpha1", kind: "Queue", name: "a" };
    expect(
      contextOf({ message: makeMessage(ref, "drift", { id: "chain-7" }), id: "sqs-1", receiveCount: 2 }),
    ).toEqual({
      reason: "drift",
      correlationId: "chain-7",
      receiveCount: 2,
    });
    expect(
      contextOf({ message: makeMessage(ref, "manual"), id: "sqs-2", receiveCount: 1 }).correlationId,
    ).toBe("sqs-2");
  });

  it("the handler reports queue age and runs the reconcile inside the message's context", async () => {
    const { lines, logger } = recording();
    const log = contextLogger(logger);
    const ages: number[] = [];
    const fake = async () => {
      log.info({ key: "Queue/a" }, "reconciled");
      return { outcome: "in-sync" as const };
    };
    const handler = reconcileHandler({
      reconcile: fake,
      metrics: { reconciled() {}, externalCall() {}, queueAge: (ms) => ages.push(ms) },
    });
    const at = new Date(Date.now() - 1_500);
    const outcome = await handler({
      message: makeMessage(
        { apiVersion: "sqs.aws.driftless.dev/v1alpha1", kind: "Queue", name: "a" },
        "watch",
        { at },
      ),
      id: "q-9",
      receiveCount: 1,
    });
    expect(outcome).toEqual({ kind: "done" });
    expect(ages[0]).toBeGreaterThanOrEqual(1_500);
    expect(lines[0]).toMatchObject({ reason: "watch", correlationId: "q-9", msg: "reconciled" });
    expect(queueAgeMs({ at: "not a time" })).toBeUndefined();
  });
});
