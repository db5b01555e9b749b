import { afterEach, describe, expect, it } from "vitest";
import { ConsumerStateError, InvalidMessageError, QueueFullError } from "../../../shared/queue/errors.ts";
import { type DeadLetter, MemoryQueue, type MemoryQueueOptions } from "../../../shared/queue/memory.ts";
import { messageKey } from "../../../shared/queue/message.ts";
import type { HandlerOutcome, ReceivedMessage } from "../../../shared/queue/port.ts";
import { aMessage, deferred, delay, named } from "./factories.ts";

const queues: MemoryQueue[] = [];
function aQueue(options: MemoryQueueOptions = {}): MemoryQueue {
  const queue = new MemoryQueue({ retryBackoff: { baseMs: 5, maxMs: 20 }, ...options });
  queues.push(queue);
  return queue;
}
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.stop()));
});

/** A handler that records every delivery and answers with `outcome`. */
function recorder(
  outcome: (r: ReceivedMessage) => HandlerOutcome | Promise<HandlerOutcome> = () => ({ kind: "done" }),
) {
  const deliveries: ReceivedMessage[] = [];
  const handler = async (r: ReceivedMessage): Promise<HandlerOutcome> => {
    deliveries.push(r);
    return outcome(r);
  };
  return { deliveries, handler, names: () => deliveries.map((d) => d.message.name) };
}

describe("MemoryQueue", () => {
  it("never runs two handlers for one key at once, and stays within `workers`", async () => {
    const queue = aQueue({ workers: 3 });
    const running = new Map<string, number>();
    let maxPerKey = 0;
    let maxTotal = 0;
    let total = 0;
    let handled = 0;
    queue.start(async (r) => {
      const key = messageKey(r.message);
      running.set(key, (running.get(key) ?? 0) + 1);
      total++;
      maxPerKey = Math.max(maxPerKey, running.get(key) ?? 0);
      maxTotal = Math.max(maxTotal, total);
      await delay(2 + Math.floor(Math.random() * 3));
      running.set(key, (running.get(key) ?? 0) - 1);
      total--;
      handled++;
      return { kind: "done" };
    });

    // Keys keep arriving while their handlers run, so each key is both in flight and waiting at times.
    for (let round = 0; round < 20; round++) {
      await queue.send(["a", "b", "c", "d", "e"].map((n) => named(n)));
      await delay(1);
    }
    await queue.idle();

    expect(maxPerKey).toBe(1);
    expect(maxTotal).toBeLessThanOrEqual(3);
    expect(maxTotal).toBeGreaterThan(1);
    expect(handled).toBeGreaterThanOrEqual(5);
    expect(handled).toBeLessThan(100); // coalesced
  });

  it("coalesces a key that is already waiting", async () => {
    const queue = aQueue();
    const { deliveries, handler } = recorder();

    const result = await queue.send([named("a"), named("a"), named("b"), named("a", { reason: "drift" })]);
    expect(result).toEqual({ sent: 4, failed: [] });
    expect(queue.stats()).toMatchObject({ pending: 2, inFlight: 0 });
    queue.start(handler);
    await queue.idle();

    expect(deliveries.map((d) => d.message.name).sort()).toEqual(["a", "b"]);
  });

  it("lets the earliest due time win when coalescing", async () => {
    const queue = aQueue();
    const { deliveries, handler } = recorder();
    queue.start(handler);

    await queue.send([named("a", { reason: "drift" })], { delayMs: 60_000 });
    expect(queue.stats()).toMatchObject({ pending: 1, delayed: 1 });
    await queue.send([named("a", { reason: "watch" })]);
    await queue.idle();

    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]?.message.reason).toBe("watch");
    expect(queue.stats()).toMatchObject({ pending: 0, delayed: 0 });
  });

  it("runs a key again when a message for it arrives while it is in flight", async () => {
    const queue = aQueue();
    const gate = deferred();
    const { deliveries, handler } = recorder(async (r) => {
      if (r.message.reason === "watch") await gate.promise;
      return { kind: "done" };
    });
    queue.start(handler);

    await queue.send([named("a", { reason: "watch" })]);
    await delay(5);
    await queue.send([named("a", { reason: "drift" }), named("a", { reason: "manual" })]);
    await delay(5);
    expect(deliveries).toHaveLength(1);
    gate.resolve();
    await queue.idle();

    expect(deliveries.map((d) => d.message.reason)).toEqual(["watch", "drift"]);
  });

  it("delivers delayed sends and requeues in due order", async () => {
    const queue = aQueue();
    const firstPass = new Set<string>();
    const { names, handler } = recorder((r) => {
      const afterMs = { slow: 120, mid: 60, fast: 10 }[r.message.name];
      if (afterMs === undefined || firstPass.has(r.message.name)) return { kind: "done" };
      firstPass.add(r.message.name);
      return { kind: "requeue", afterMs };
    });
    queue.start(handler);

    await queue.send([named("slow"), named("mid"), named("fast")]);
    await queue.send([named("late")], { delayMs: 90 });
    await queue.idle();

    expect(names().slice(3)).toEqual(["fast", "mid", "late", "slow"]);
  });

  it("marks requeued messages and keeps their id", async () => {
    const queue = aQueue();
    const { deliveries, handler } = recorder((r) =>
      r.message.reason === "requeue" ? { kind: "done" } : { kind: "requeue", afterMs: 1 },
    );
    queue.start(handler);

    await queue.send([aMessage({ id: "corr-7" })]);
    await queue.idle();

    expect(deliveries.map((d) => [d.message.reason, d.receiveCount])).toEqual([
      ["watch", 1],
      ["requeue", 1],
    ]);
    expect(deliveries[1]?.id).toBe(deliveries[0]?.id);
    expect(deliveries[1]?.message.id).toBe("corr-7");
  });

  it("refuses new keys beyond maxPending with QueueFullError, but still coalesces", async () => {
    const queue = aQueue({ maxPending: 3 });

    const result = await queue.send([named("a"), named("b"), named("c"), named("d"), named("a"), named("e")]);

    expect(result.sent).toBe(4);
    expect(result.failed.map((f) => [f.index, f.message.name, f.error.constructor])).toEqual([
      [3, "d", QueueFullError],
      [5, "e", QueueFullError],
    ]);
    expect(queue.stats().pending).toBe(3);
  });

  it("reports invalid messages as failed sends", async () => {
    const queue = aQueue();

    const result = await queue.send([named("ok"), named("Not_Valid")]);

    expect(result.sent).toBe(1);
    expect(result.failed[0]?.error).toBeInstanceOf(InvalidMessageError);
  });

  it("retries with backoff and dead-letters after maxReceiveCount deliveries", async () => {
    const deadLetters: DeadLetter[] = [];
    const events: string[] = [];
    const queue = aQueue({
      maxReceiveCount: 3,
      onDeadLetter: (d) => deadLetters.push(d),
      onEvent: (e) => events.push(`${e.level}:${e.msg}`),
    });
    const { deliveries, handler } = recorder((r) =>
      r.message.name === "bad" ? { kind: "retry", error: new Error("cloud said no") } : { kind: "done" },
    );
    queue.start(handler);

    await queue.send([named("bad"), named("good")]);
    await queue.idle();

    const bad = deliveries.filter((d) => d.message.name === "bad");
    expect(bad.map((d) => d.receiveCount)).toEqual([1, 2, 3]);
    expect(new Set(bad.map((d) => d.id)).size).toBe(1);
    expect(deliveries.filter((d) => d.message.name === "good")).toHaveLength(1);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]).toMatchObject({ receiveCount: 3, message: { name: "bad" } });
    expect(deadLetters[0]?.error.message).toBe("cloud said no");
    expect(queue.deadLetters()).toEqual(deadLetters);
    expect(queue.stats()).toMatchObject({ pending: 0, inFlight: 0, deadLettered: 1 });
    expect(events.filter((e) => e.startsWith("warn:"))).toHaveLength(2);
    expect(events).toContain("error:message dead-lettered");
  });

  it("treats a throwing handler as a retry", async () => {
    const queue = aQueue({ maxReceiveCount: 2 });
    let calls = 0;
    queue.start(async () => {
      calls++;
      throw new Error("boom");
    });

    await queue.send([named("a")]);
    await queue.idle();

    expect(calls).toBe(2);
    expect(queue.deadLetters()[0]?.error.message).toBe("boom");
  });

  it("waits between retries (exponential backoff)", async () => {
    const queue = aQueue({ maxReceiveCount: 3, retryBackoff: { baseMs: 40, maxMs: 1_000 }, random: () => 1 });
    const times: number[] = [];
    queue.start(async () => {
      times.push(Date.now());
      return { kind: "retry", error: new Error("x") };
    });

    await queue.send([named("a")]);
    await queue.idle();

    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(38);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(78);
  });

  it("stop() waits for in-flight handlers and takes no new work", async () => {
    const queue = aQueue({ workers: 2 });
    const gate = deferred();
    const { names, handler } = recorder(async () => {
      await gate.promise;
      return { kind: "done" };
    });
    queue.start(handler);
    await queue.send([named("a"), named("b"), named("c")]);
    await delay(5);
    expect(queue.stats()).toMatchObject({ inFlight: 2, pending: 1 });

    let stopped = false;
    const stopping = queue.stop().then(() => {
      stopped = true;
    });
    await delay(20);
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;

    expect(names().sort()).toEqual(["a", "b"]);
    expect(queue.stats()).toMatchObject({ inFlight: 0, pending: 1 });
    await delay(10);
    expect(names()).toHaveLength(2);
  });

  it("cannot be started twice", () => {
    const queue = aQueue();
    queue.start(async () => ({ kind: "done" }));

    expect(() => queue.start(async () => ({ kind: "done" }))).toThrow(ConsumerStateError);
  });

  it("idle() ignores work due beyond its horizon", async () => {
    const queue = aQueue();
    const { handler } = recorder();
    queue.start(handler);

    await queue.send([named("later")], { delayMs: 60_000 });
    await queue.idle(1_000);

    expect(queue.stats()).toMatchObject({ pending: 1, delayed: 1 });
  });

  it("survives a handler that resolves to nothing", async () => {
    const queue = aQueue({ maxReceiveCount: 1 });
    queue.start((async () => undefined) as unknown as () => Promise<HandlerOutcome>);

    await queue.send([named("a")]);
    await queue.idle();

    expect(queue.deadLetters()[0]?.error.message).toBe("handler returned no outcome");
  });
});
