// The stack's own queues are refused by every call of a queue kind's client, batched observe included,
// before the wrapped client (the cloud) is reached.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type ExternalClient, InvalidSpecError } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import {
  NO_OWN_QUEUES,
  ownQueueNamed,
  queueIdOf,
  refusingOwnQueues,
  setOwnQueues,
} from "../../../shared/providers/own-queues.ts";

afterEach(() => setOwnQueues(NO_OWN_QUEUES));

const mr = { spec: { forProvider: {} } } as unknown as ManagedResource<object, object>;

/** A client that records the names the cloud would have been asked about. */
function recording() {
  const calls: string[] = [];
  const seen = <T>(call: string, result: T) => {
    calls.push(call);
    return result;
  };
  const client: ExternalClient<object, object> = {
    observe: async (_mr, name) => seen(`observe ${name}`, { resourceExists: true }),
    create: async (_mr, name) => seen(`create ${name}`, {}),
    update: async (_mr, name) => seen(`update ${name}`, {}),
    delete: async (_mr, name) => seen(`delete ${name}`, undefined),
    observeMany: async (items) => items.map((i) => seen(`many ${i.externalName}`, { resourceExists: false })),
    list: async () =>
      seen(
        "list",
        ["orders", "driftless-prod-reconcile", "driftless-prod-reconcile-dlq"].map((externalName) => ({
          externalName,
          forProvider: {},
        })),
      ),
  };
  return { calls, client };
}

describe("refusingOwnQueues", () => {
  it("names compare by their last segment: URL, ARN, resource path or bare name", () => {
    expect(queueIdOf("https://sqs.eu-west-1.amazonaws.com/000000000000/driftless-prod-reconcile")).toBe(
      "driftless-prod-reconcile",
    );
    expect(queueIdOf("arn:aws:sqs:eu-west-1:000000000000:driftless-prod-reconcile-dlq")).toBe(
      "driftless-prod-reconcile-dlq",
    );
    expect(queueIdOf("projects/p/topics/driftless-work")).toBe("driftless-work");
  });

  // The names are compared on every call of a queue kind (a batched drift check's every object): by index
  // and a map now, as the split-and-search it replaced did.
  const refText = fc.stringMatching(/^[ a-z0-9/:._\t\n-]{0,24}$/);
  it("queueIdOf agrees with the last segment split on / and :", () => {
    fc.assert(
      fc.property(refText, (ref) => {
        expect(queueIdOf(ref)).toBe(ref.trim().split(/[/:]/).pop() ?? "");
      }),
      { numRuns: 2_000 },
    );
  });

  it("ownQueueNamed finds what a search of the configured list finds", () => {
    fc.assert(
      fc.property(fc.array(refText, { maxLength: 4 }), fc.option(refText), (own, name) => {
        setOwnQueues({ aws: own });
        const externalName = name ?? undefined;
        const searched = externalName ? own.find((o) => queueIdOf(o) === queueIdOf(externalName)) : undefined;
        expect(ownQueueNamed("aws", externalName)).toBe(searched);
        expect(ownQueueNamed("gcp", externalName)).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it("refuses every call on an own queue with an InvalidSpecError, and never reaches the cloud", async () => {
    setOwnQueues({ aws: ["https://sqs.eu-west-1.amazonaws.com/000000000000/driftless-prod-reconcile"] });
    const { calls, client } = recording();
    const c = refusingOwnQueues("aws", client);
    const own = "driftless-prod-reconcile";
    for (const call of [
      () => c.observe(mr, own),
      () => c.create(mr, own),
      () => c.update(mr, own, { resourceExists: true }),
      () => c.delete(mr, own),
    ])
      await expect(call()).rejects.toThrow(InvalidSpecError);
    await expect(c.observe(mr, own)).rejects.toThrow(/own work queue/);
    expect(calls).toEqual([]);
    // Another cloud's list does not apply, and other names pass through.
    await c.observe(mr, "managed-prod-orders");
    expect(calls).toEqual(["observe managed-prod-orders"]);
  });

  it("batched observe: own names get their refusal alone, the rest are observed together, in order", async () => {
    setOwnQueues({ gcp: ["projects/p/topics/driftless-work", "projects/p/subscriptions/driftless-sub"] });
    const { calls, client } = recording();
    const c = refusingOwnQueues("gcp", client);
    const out = await c.observeMany?.(
      ["a", "projects/p/topics/driftless-work", "b", "driftless-sub"].map((externalName) => ({
        mr,
        externalName,
      })),
    );
    expect(out?.map((o) => (o instanceof Error ? o.name : "observed"))).toEqual([
      "observed",
      "InvalidSpecError",
      "observed",
      "InvalidSpecError",
    ]);
    expect(calls).toEqual(["many a", "many b"]);
  });

  it("`driftless import` never offers an own queue", async () => {
    setOwnQueues({ aws: ["arn:aws:sqs:eu-west-1:000000000000:driftless-prod-reconcile-dlq"] });
    const { client } = recording();
    const listed = await refusingOwnQueues("aws", client).list?.();
    expect(listed?.map((l) => l.externalName)).toEqual(["orders", "driftless-prod-reconcile"]);
  });

  it("with no own queues configured nothing is refused", async () => {
    const { calls, client } = recording();
    await refusingOwnQueues("aws", client).delete(mr, "driftless-prod-reconcile");
    expect(calls).toEqual(["delete driftless-prod-reconcile"]);
  });
});
