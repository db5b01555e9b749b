// A warm sweep's batches select their objects by external key, one LIST per selection: the selections
// are as large as one message allows — selector and items together (fewer API-server requests per check),
// every due object is in exactly one of them, each selection is one message (one LIST), and each encodes.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { EXTERNAL_KEY_LABEL } from "../../../shared/api/cloud-events.ts";
import { indexedMessages, SELECTION_BYTES } from "../../../shared/pipeline/sweep.ts";
import type { IndexEntry } from "../../../shared/pipeline/sweep-index.ts";
import {
  BATCH_MESSAGE_BYTES,
  encodedBytes,
  encodeMessage,
  MAX_BATCH_SELECTOR,
} from "../../../shared/queue/message.ts";

const key = (i: number) => createHash("sha256").update(String(i)).digest("hex").slice(0, 40);

function entry(i: number, providerConfig = "default"): IndexEntry {
  return {
    name: `queue-${i}`,
    namespace: undefined,
    uid: `uid-${i}`,
    rv: String(1000 + i),
    generation: 1,
    facts: { paused: false, attention: false, askedPollMs: undefined, lastChangeMs: 0, phase: 0 },
    batchKey: key(i),
    providerConfig,
    conditions: [],
    slot: 0,
  };
}

const selectedKeys = (selector: string) =>
  new Set((/in \(([^)]*)\)/.exec(selector)?.[1] ?? "").split(",").filter(Boolean));

describe("warm sweep selections", () => {
  const at = new Date(Date.UTC(2030, 0, 1));
  const labelSelector = "driftless.dev/bench=bench-ed32c9,driftless.dev/bench-set=insync";

  it("833 due objects (10k at a 1 h poll, 5-minute windows): 2 selections, not 3 of 390 or 5 of 200", () => {
    const entries = Array.from({ length: 833 }, (_, i) => entry(i));
    const { messages, batches, batched } = indexedMessages(Queue, entries, {
      batch: true,
      labelSelector,
      at,
    });
    expect(batched).toBe(833);
    expect(batches).toBe(2);
    // Each selection is one message: a selection split over two messages would be listed twice.
    expect(new Set(messages.map((m) => m.batch?.page.labelSelector)).size).toBe(messages.length);
    const seen = new Set<string>();
    for (const m of messages) {
      const selector = m.batch?.page.labelSelector ?? "";
      expect(Buffer.byteLength(selector)).toBeLessThanOrEqual(SELECTION_BYTES);
      expect(selector.startsWith(`${labelSelector},${EXTERNAL_KEY_LABEL} in (`)).toBe(true);
      expect(() => encodeMessage(m)).not.toThrow();
      expect(encodedBytes(m)).toBeLessThanOrEqual(BATCH_MESSAGE_BYTES);
      const keys = selectedKeys(selector);
      for (const item of m.batch?.items ?? []) {
        const i = Number(item.name.slice("queue-".length));
        expect(keys.has(key(i))).toBe(true);
        expect(seen.has(item.name)).toBe(false);
        seen.add(item.name);
      }
    }
    expect(seen.size).toBe(833);
  });

  it("never a selector over the message's bound, whatever the run's own selector", () => {
    const long = `${"x".repeat(60)}=${"y".repeat(60)}`;
    const entries = Array.from({ length: 2_000 }, (_, i) => entry(i));
    const { messages, batched } = indexedMessages(Queue, entries, { batch: true, labelSelector: long, at });
    expect(batched).toBe(2_000);
    for (const m of messages) {
      expect(Buffer.byteLength(m.batch?.page.labelSelector ?? "")).toBeLessThanOrEqual(MAX_BATCH_SELECTOR);
      expect(encodedBytes(m)).toBeLessThanOrEqual(BATCH_MESSAGE_BYTES);
    }
    expect(new Set(messages.map((m) => m.batch?.page.labelSelector)).size).toBe(messages.length);
  });

  it("long names and namespaces make smaller selections, still one message each", () => {
    const entries = Array.from({ length: 1_500 }, (_, i) => ({
      ...entry(i),
      name: `${"n".repeat(200)}-${i}`,
      namespace: "a-namespace-with-a-rather-long-name-for-the-test",
    }));
    const { messages, batched } = indexedMessages(Queue, entries, { batch: true, labelSelector, at });
    expect(batched).toBe(1_500);
    for (const m of messages) expect(encodedBytes(m)).toBeLessThanOrEqual(BATCH_MESSAGE_BYTES);
    expect(new Set(messages.map((m) => m.batch?.page.labelSelector)).size).toBe(messages.length);
  });

  it("one selection per ProviderConfig: objects of two ProviderConfigs never share a batch", () => {
    const entries = Array.from({ length: 10 }, (_, i) => entry(i, i % 2 === 0 ? "a" : "b"));
    const { messages, batches } = indexedMessages(Queue, entries, { batch: true, labelSelector, at });
    expect(batches).toBe(2);
    expect(new Set(messages.map((m) => m.batch?.providerConfig))).toEqual(new Set(["a", "b"]));
  });
});
