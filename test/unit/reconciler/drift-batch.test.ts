// The batched drift check against the in-memory API server and the fake cloud: what one sweep of many
// in-sync resources costs (counts, not time), and the safety rows — a stale page, a drifted or failing
// resource among many, a compacted snapshot, throttling — where the batch must hand over to the full
// reconcile and never write from what it read on the page.
import { describe, expect, it, vi } from "vitest";
import { ThrottledError } from "../../../shared/api/external.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { KubeError } from "../../../shared/kube/client.ts";
import { type SweepResult, sweep } from "../../../shared/pipeline/sweep.ts";
import { MAX_MESSAGE_BYTES, type ReconcileMessage } from "../../../shared/queue/message.ts";
import { checkBatch } from "../../../shared/worker/batch.ts";
import { engine } from "../../support/engine.ts";

type Engine = ReturnType<typeof engine>;

/** `n` widgets, created and reconciled until in sync; their names are w-0000 … */
async function inSyncWidgets(
  e: Engine,
  n: number,
  extra: (name: string) => Parameters<Engine["apply"]>[2] = () => ({}),
) {
  const names = Array.from({ length: n }, (_, i) => `w-${String(i).padStart(4, "0")}`);
  for (const name of names) {
    e.apply(name, { size: 1 }, extra(name));
    await e.settle(name);
  }
  for (const name of names) expect(e.condition(name, "Synced")?.status, name).toBe("True");
  return names;
}

const withSecret = (name: string) => ({
  spec: { writeConnectionSecretToRef: { namespace: "default", name: `${name}-conn` } },
});

/** One sweep in batch mode over every widget (all due), its messages captured. */
async function sweepBatches(e: Engine, pageSize = 1000) {
  const messages: ReconcileMessage[] = [];
  const result: SweepResult = await sweep({
    kube: e.kube,
    types: [e.def],
    sink: {
      async send(m) {
        messages.push(...m);
        return { sent: m.length, failed: [] };
      },
    },
    now: e.now(),
    scheduleMs: 60_000,
    defaultPollMs: 60_000,
    pageSize,
    batch: true,
  });
  return { result, messages };
}

/** Runs every batch message through the worker's batch check; returns the summed summaries. */
async function checkAll(e: Engine, messages: readonly ReconcileMessage[]) {
  const totals = { inSync: 0, reconciled: 0, followUps: [] as Array<{ name: string; afterMs: number }> };
  const deps = {
    kube: e.kube,
    engine: e.reconciler,
    reconcile: (k: Parameters<typeof e.reconciler.reconcile>[0]) => e.reconciler.reconcile(k),
    random: () => 0.5,
  };
  for (const m of messages) {
    if (!m.batch) continue;
    const r = await checkBatch(deps, { apiVersion: m.apiVersion, kind: m.kind, batch: m.batch });
    totals.inSync += r.summary.inSync;
    totals.reconciled += r.summary.reconciled;
    totals.followUps.push(...r.followUps.map((f) => ({ name: f.key.name, afterMs: f.afterMs })));
  }
  return totals;
}

/** API-server requests from here on, by kind of request. */
function requestsSince(e: Engine) {
  const mark = e.api.requests.length;
  return () => {
    const rs = e.api.requests.slice(mark);
    return {
      lists: rs.filter((r) => r.method === "GET" && !r.name).length,
      gets: rs.filter((r) => r.method === "GET" && r.name).length,
      writes: rs.filter((r) => r.method !== "GET").length,
      written: rs
        .filter((r) => r.method !== "GET")
        .map((r) => (r.resource === "v1/events" ? "event" : (r.name ?? ""))),
    };
  };
}

describe("batched drift check", () => {
  it("1,000 in-sync widgets: 1 list call, 3 LIST requests, no GET, no write", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    e.cloud.details = { endpoint: "w.example" };
    await inSyncWidgets(e, 1000, withSecret);
    const calls = { ...e.cloud.calls };
    const requests = requestsSince(e);
    const { result, messages } = await sweepBatches(e);
    expect(result).toMatchObject({ listed: 1000, batched: 1000 });
    expect(messages.length).toBe(result.batches);
    // One page, one ProviderConfig: one message under the queue's size limit.
    expect(messages).toHaveLength(1);
    expect(Buffer.byteLength(JSON.stringify(messages[0]))).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    const totals = await checkAll(e, messages);
    expect(totals.inSync + totals.reconciled).toBe(1000);
    const r = requests();
    // The sweep's LIST, the worker's LIST of the same page, one LIST of the namespace's Secrets.
    expect(r).toMatchObject({ lists: 3, gets: 0, writes: 0 });
    expect(e.cloud.calls.observeMany - calls.observeMany).toBe(1);
    expect(e.cloud.calls.observe - calls.observe).toBe(0);
    expect(e.cloud.rateLimitTokens).toBe(1);
    expect(totals).toEqual({ inSync: 1000, reconciled: 0, followUps: [] });
  });

  it("one drifted widget among 1,000 gets exactly one update; the others nothing", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    const names = await inSyncWidgets(e, 1000);
    const drifted = names[417] as string;
    e.cloud.edit(e.get(drifted)?.metadata.annotations?.[Annotations.externalName] ?? "", (r) => {
      r.spec.size = 7;
    });
    const updates = e.cloud.calls.update;
    const requests = requestsSince(e);
    const totals = await checkAll(e, (await sweepBatches(e)).messages);
    expect(e.cloud.calls.update - updates).toBe(1);
    expect(totals).toMatchObject({ inSync: 999, reconciled: 1 });
    expect([...e.cloud.resources.values()].every((r) => r.spec.size === 1)).toBe(true);
    const r = requests();
    // The drifted one alone: re-read (GET) before its writes (its status, its event).
    expect(r.gets).toBe(1);
    expect(r.written.every((w) => w === drifted || w === "event")).toBe(true);
  });

  it("a stale page never writes: the batch compares the page's spec and leaves the change to its own reconcile", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    const names = await inSyncWidgets(e, 20);
    const changed = names[3] as string;
    const { messages } = await sweepBatches(e);
    // After the sweep read the page, the user changes the spec: the page's copy is stale.
    e.api.mutate(e.def, changed, (o) => {
      (o.spec as { forProvider: { size: number } }).forProvider.size = 5;
      o.metadata.generation = Number(o.metadata.generation) + 1;
    });
    const requests = requestsSince(e);
    const updates = e.cloud.calls.update;
    const totals = await checkAll(e, messages);
    // In sync as of the snapshot: nothing written from it, nothing sent to the cloud.
    expect(totals).toMatchObject({ inSync: 20, reconciled: 0 });
    expect(requests().writes).toBe(0);
    expect(e.cloud.calls.update).toBe(updates);
    // The change's own (watch) reconcile reads it fresh and applies it.
    await e.settle(changed);
    const id = e.get(changed)?.metadata.annotations?.[Annotations.externalName] ?? "";
    expect(e.cloud.resources.get(id)?.spec.size).toBe(5);
  });

  it("drift on a stale page: the update carries the fresh spec, never the page's", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    const [name] = await inSyncWidgets(e, 1);
    const id = e.get(name as string)?.metadata.annotations?.[Annotations.externalName] ?? "";
    const { messages } = await sweepBatches(e);
    e.cloud.edit(id, (r) => {
      r.spec.size = 9;
    });
    e.api.mutate(e.def, name as string, (o) => {
      (o.spec as { forProvider: { size: number } }).forProvider.size = 3;
      o.metadata.generation = Number(o.metadata.generation) + 1;
    });
    await checkAll(e, messages);
    expect(e.cloud.resources.get(id)?.spec.size).toBe(3);
  });

  it("a compacted snapshot (410): every object takes the full path, still nothing written", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    await inSyncWidgets(e, 30);
    const { messages } = await sweepBatches(e);
    e.api.compact();
    const requests = requestsSince(e);
    const totals = await checkAll(e, messages);
    expect(totals).toMatchObject({ inSync: 0, reconciled: 30, followUps: [] });
    expect(requests()).toMatchObject({ gets: 30, writes: 0 });
  });

  it("one resource the list call cannot read is reconciled alone; the rest stay in the batch", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    const names = await inSyncWidgets(e, 40);
    e.cloud.failItems.add(names[7] as string);
    const observes = e.cloud.calls.observe;
    const totals = await checkAll(e, (await sweepBatches(e)).messages);
    expect(totals).toMatchObject({ inSync: 39, reconciled: 1 });
    // Its full reconcile observed it alone (the fake's per-resource read works).
    expect(e.cloud.calls.observe - observes).toBe(1);
  });

  it("a throttled list call is split in halves and retried; all checked", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    await inSyncWidgets(e, 64);
    const { messages } = await sweepBatches(e);
    e.cloud.failNext("observeMany", () => new ThrottledError("Rate exceeded"));
    const before = e.cloud.calls.observeMany;
    const totals = await checkAll(e, messages);
    // 1 throttled + 2 halves
    expect(e.cloud.calls.observeMany - before).toBe(3);
    expect(totals).toMatchObject({ inSync: 64, reconciled: 0, followUps: [] });
  });

  it("throttled even after splitting: handed back as single keys after a backoff, no full reconcile", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    await inSyncWidgets(e, 8);
    const { messages } = await sweepBatches(e);
    e.cloud.failNext("observeMany", () => new ThrottledError("Rate exceeded"), 100);
    const observes = e.cloud.calls.observe;
    const totals = await checkAll(e, messages);
    expect(totals.reconciled).toBe(0);
    expect(totals.followUps).toHaveLength(8);
    expect(totals.followUps.every((f) => f.afterMs >= 5_000)).toBe(true);
    expect(e.cloud.calls.observe - observes).toBe(0);
  });

  it("a connection Secret deleted by hand: only its resource is reconciled, and the Secret is back", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    e.cloud.details = { endpoint: "w.example" };
    const names = await inSyncWidgets(e, 10, withSecret);
    const victim = names[2] as string;
    await e.kube.deleteSecret("default", `${victim}-conn`);
    const totals = await checkAll(e, (await sweepBatches(e)).messages);
    expect(totals).toMatchObject({ inSync: 9, reconciled: 1 });
    expect(e.api.secret("default", `${victim}-conn`)?.data).toMatchObject({
      endpoint: Buffer.from("w.example").toString("base64"),
    });
  });

  it("where listing Secrets is forbidden, each connection Secret is read by name; still no object GET or write", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    e.cloud.details = { endpoint: "w.example" };
    await inSyncWidgets(e, 10, withSecret);
    const { messages } = await sweepBatches(e);
    e.api.inject((r) =>
      r.method === "GET" && r.resource === "v1/secrets" && !r.name
        ? new KubeError('secrets is forbidden: cannot list resource "secrets"', 403, { reason: "Forbidden" })
        : undefined,
    );
    const requests = requestsSince(e);
    const totals = await checkAll(e, messages);
    expect(totals).toMatchObject({ inSync: 10, reconciled: 0 });
    const secretGets = e.api.requests.filter(
      (r) => r.method === "GET" && r.resource === "v1/secrets" && r.name,
    );
    expect(secretGets.length).toBeGreaterThanOrEqual(10);
    expect(requests()).toMatchObject({ writes: 0 });
    expect(requests().gets).toBe(10);
  });

  it("objects that do not look in sync are not batched by the sweep, and the worker re-checks anyway", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    const names = await inSyncWidgets(e, 5);
    e.api.mutate(e.def, names[0] as string, (o) => {
      const conds = (o.status as { conditions: Array<{ type: string; status: string }> }).conditions;
      for (const c of conds) if (c.type === "Synced") c.status = "False";
    });
    const { result, messages } = await sweepBatches(e);
    expect(result).toMatchObject({ batched: 4, enqueued: 2 });
    expect(messages.filter((m) => !m.batch).map((m) => m.name)).toEqual([names[0]]);
  });

  it("a kind without list calls is observed per resource, still with no GET and no write", async () => {
    const e = engine();
    await inSyncWidgets(e, 50);
    const observes = e.cloud.calls.observe;
    const requests = requestsSince(e);
    const totals = await checkAll(e, (await sweepBatches(e)).messages);
    expect(totals).toMatchObject({ inSync: 50, reconciled: 0 });
    expect(e.cloud.calls.observe - observes).toBe(50);
    expect(e.cloud.calls.observeMany).toBe(0);
    expect(requests()).toMatchObject({ lists: 2, gets: 0, writes: 0 });
  });

  it("validates each listed spec once, though it plans each object three times (connect, observe, verdict)", async () => {
    const e = engine({ observeManyMaxItems: 1000 });
    await inSyncWidgets(e, 20);
    const { messages } = await sweepBatches(e);
    const parses = vi.spyOn(e.def.forProvider, "safeParse");
    const totals = await checkAll(e, messages);
    expect(totals).toMatchObject({ inSync: 20, reconciled: 0 });
    expect(parses).toHaveBeenCalledTimes(20);
    parses.mockRestore();
  });
});
