// Adaptive polling and batch messages: the sweep's pure parts (window math, intervals, message sizes).
import { describe, expect, it } from "vitest";
import type { Condition } from "../../../shared/api/meta.ts";
import {
  adaptiveIntervalMs,
  batchMessages,
  lastChangeMs,
  pollDue,
  pollPhase,
  type SweepObject,
  specChangeUnseen,
  sweepDecision,
} from "../../../shared/pipeline/sweep.ts";
import {
  BATCH_MESSAGE_BYTES,
  decodeMessage,
  encodeMessage,
  MAX_MESSAGE_BYTES,
  messageKey,
} from "../../../shared/queue/message.ts";

const MIN = 60_000;
const t0 = Date.parse("2026-11-23T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function obj(changedAt: number, extra: Partial<SweepObject["metadata"]> = {}): SweepObject {
  const cond = (type: string): Condition => ({
    type,
    status: "True",
    reason: type === "Ready" ? "Available" : "ReconcileSuccess",
    lastTransitionTime: iso(changedAt),
  });
  return {
    metadata: { name: "q", uid: "uid-1", creationTimestamp: iso(changedAt - 1000), ...extra },
    spec: { forProvider: {} },
    status: { conditions: [cond("Ready"), cond("Synced")] },
  };
}

describe("adaptive polling", () => {
  it("doubles the default while the doubled interval fits the unchanged time and the maximum", () => {
    expect(adaptiveIntervalMs(5 * MIN, 20 * MIN, 0)).toBe(5 * MIN);
    expect(adaptiveIntervalMs(5 * MIN, 20 * MIN, 9 * MIN)).toBe(5 * MIN);
    expect(adaptiveIntervalMs(5 * MIN, 20 * MIN, 10 * MIN)).toBe(10 * MIN);
    expect(adaptiveIntervalMs(5 * MIN, 20 * MIN, 25 * MIN)).toBe(20 * MIN);
    expect(adaptiveIntervalMs(5 * MIN, 20 * MIN, 24 * 60 * MIN)).toBe(20 * MIN);
    // A maximum that is no power-of-two multiple: the largest one under it.
    expect(adaptiveIntervalMs(5 * MIN, 30 * MIN, 24 * 60 * MIN)).toBe(20 * MIN);
    expect(adaptiveIntervalMs(5 * MIN, undefined, 24 * 60 * MIN)).toBe(5 * MIN);
  });

  it("the last change is the latest transition, external update or non-status write", () => {
    const o = obj(t0);
    expect(lastChangeMs(o)).toBe(t0);
    o.status = { ...o.status, lastExternalUpdate: { time: iso(t0 + 5 * MIN) } };
    expect(lastChangeMs(o)).toBe(t0 + 5 * MIN);
    o.metadata.managedFields = [
      { time: iso(t0 + 9 * MIN), subresource: "status" },
      { time: iso(t0 + 7 * MIN) },
    ];
    // A status write is the reconciler reporting, not a change.
    expect(lastChangeMs(o)).toBe(t0 + 7 * MIN);
  });

  it("longer intervals never skip a due tick: every tick of 2I is a tick of I", () => {
    for (const uid of ["a", "b", "c", "d", "e"]) {
      const base = 5 * MIN;
      for (let end = t0; end < t0 + 120 * MIN; end += MIN) {
        if (pollDue(pollPhase(uid, 4 * base), 4 * base, end, MIN))
          expect(pollDue(pollPhase(uid, base), base, end, MIN)).toBe(true);
      }
    }
  });

  it("a resource unchanged for hours is due every 20 min; after a change every 5 min again", () => {
    const ctx = { scheduleMs: MIN, defaultPollMs: 5 * MIN, maxPollMs: 20 * MIN };
    const count = (changedAt: number, from: number, minutes: number) => {
      let due = 0;
      for (let end = from; end < from + minutes * MIN; end += MIN)
        if (sweepDecision(obj(changedAt), { ...ctx, windowEndMs: end }) === "due") due++;
      return due;
    };
    const later = t0 + 10 * 60 * MIN;
    expect(count(t0, later, 60)).toBe(3);
    // Changed a minute before: back to the default interval.
    expect(count(later - MIN, later, 10)).toBe(2);
    // An annotation wins over adaptation.
    const annotated = obj(t0, { annotations: { "crossplane.io/poll-interval": "5m" } });
    let due = 0;
    for (let end = later; end < later + 60 * MIN; end += MIN)
      if (sweepDecision(annotated, { ...ctx, windowEndMs: end }) === "due") due++;
    expect(due).toBe(12);
  });
});

describe("batch messages", () => {
  const page = { limit: 1000, continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzNDU2fQ" };
  it("fill messages up to the byte limit, each a valid v1 message with a key of its own", () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({
      name: `a-rather-long-managed-resource-name-${i}`,
      namespace: "team-a",
      rv: String(100000 + i),
    }));
    const messages = batchMessages(
      "ec2.aws.driftless.dev/v1alpha1",
      "VPC",
      "default",
      page,
      items,
      new Date(t0),
    );
    expect(messages.reduce((n, m) => n + (m.batch?.items.length ?? 0), 0)).toBe(5000);
    for (const m of messages) {
      const body = encodeMessage(m);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BATCH_MESSAGE_BYTES);
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
      const decoded = decodeMessage(body);
      expect(decoded.ok && decoded.message).toEqual(m);
    }
    // Full: no more messages than the items' bytes need, with a KiB of envelope each.
    const itemBytes = items.reduce((n, i) => n + JSON.stringify(i).length + 1, 0);
    expect(messages.length).toBe(Math.ceil(itemBytes / (BATCH_MESSAGE_BYTES - 1024)));
    const keys = new Set(messages.map(messageKey));
    expect(keys.size).toBe(messages.length);
    // Never the key of the first object's own single-key messages.
    expect(keys.has(messageKey({ ...messages[0], batch: undefined } as never))).toBe(false);
  });

  it("a batch with a bad item is refused as a whole, with the field named", () => {
    const [m] = batchMessages("v1alpha1", "VPC", "default", page, [{ name: "ok", rv: "1" }], new Date(t0));
    const bad = JSON.stringify({ ...m, batch: { ...m?.batch, items: [{ name: "Not_A_Name", rv: "1" }] } });
    const decoded = decodeMessage(bad);
    expect(decoded.ok).toBe(false);
    expect(!decoded.ok && decoded.error).toContain("batch.items.0.name");
  });
});

describe("a lost change event", () => {
  const ctx = { windowEndMs: t0 + 60 * MIN, scheduleMs: MIN, defaultPollMs: 60 * MIN };
  it("a spec change no reconcile has seen (Synced behind the generation) is enqueued on the next sweep", () => {
    const o = obj(t0, { generation: 3 });
    for (const c of o.status?.conditions ?? []) c.observedGeneration = 2;
    expect(specChangeUnseen(o)).toBe(true);
    expect(sweepDecision(o, ctx)).toBe("attention");
    for (const c of o.status?.conditions ?? []) c.observedGeneration = 3;
    expect(specChangeUnseen(o)).toBe(false);
    expect(sweepDecision(o, ctx)).not.toBe("attention");
  });
  it("conditions without observedGeneration (older writers) are not read as behind", () => {
    expect(specChangeUnseen(obj(t0, { generation: 3 }))).toBe(false);
  });
});
