// Every intake of cloud events is bounded before it costs anything: bytes before parsing, events per
// request, and LISTs per second per source (an account, project or subscription), so one request or one
// noisy source cannot turn into thousands of cluster-wide LISTs.
import { describe, expect, it } from "vitest";
import { parseAuditLogData } from "../../../shared/cloud-events/audit-log.ts";
import { parseEventBridgeBody } from "../../../shared/cloud-events/cloudtrail.ts";
import {
  handleEventGridRequest,
  MAX_EVENT_GRID_BYTES,
  MAX_EVENTS_PER_DELIVERY,
} from "../../../shared/cloud-events/event-grid.ts";
import { CloudEventResolver, CloudEventsRateLimitedError } from "../../../shared/cloud-events/resolve.ts";
import { createDoorbell } from "../../../shared/doorbell/index.ts";
import { recordingLogger } from "../worker/factories.ts";
import { fixture, fixtureJson, kindOf, marksUnreachable } from "./support.ts";

const vnet = kindOf("VirtualNetwork", "network.azure");
const SECRET = "s".repeat(40);
const producer = { send: async (m: readonly unknown[]) => ({ sent: m.length, failed: [] }) };

/** A resolver over an API server that counts LISTs and finds nothing. */
function countingResolver(rateLimit?: { perSecond: number; burst: number }, kinds = [vnet]) {
  const lists = { n: 0 };
  const resolver = new CloudEventResolver({
    kube: {
      list: async () => {
        lists.n++;
        return { items: [], metadata: {} } as never;
      },
      ...marksUnreachable,
    },
    kinds,
    ...(rateLimit ? { rateLimit } : {}),
  });
  return { resolver, lists };
}

/** `n` ResourceWriteSuccess events of a virtual network, each another name, in subscription `sub`. */
function writes(n: number, sub = "s") {
  const [sample] = fixtureJson("azure-resource-write-success.json") as Array<Record<string, unknown>>;
  return Array.from({ length: n }, (_, i) => {
    const data = sample?.data as Record<string, unknown>;
    return {
      ...sample,
      id: `e${i}`,
      data: {
        ...data,
        resourceUri: `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet-${i}`,
      },
    };
  });
}

describe("Event Grid intake", () => {
  it("attack: a body over Event Grid's 1 MiB is refused (413) before it is parsed or resolved", async () => {
    const { resolver, lists } = countingResolver();
    const ring = createDoorbell({
      secret: SECRET,
      producer,
      types: [],
      logger: recordingLogger().logger,
      resolver,
    });
    const body = JSON.stringify(writes(1)).padEnd(MAX_EVENT_GRID_BYTES + 1, " ");
    const res = await ring({ method: "POST", path: `/${SECRET}/events/azure`, body });
    expect(res.status).toBe(413);
    expect(lists.n).toBe(0);
  });

  it(`attack: more than ${MAX_EVENTS_PER_DELIVERY} events in one delivery are refused (413) before any LIST`, async () => {
    const { resolver, lists } = countingResolver();
    const res = await handleEventGridRequest({ resolver, producer }, writes(MAX_EVENTS_PER_DELIVERY + 1));
    expect(res.status).toBe(413);
    expect(lists.n).toBe(0);
    const ok = await handleEventGridRequest({ resolver, producer }, writes(MAX_EVENTS_PER_DELIVERY));
    expect(ok.status).toBe(200);
    expect(lists.n).toBe(MAX_EVENTS_PER_DELIVERY);
  });

  it("attack: a source over its rate is asked to retry later (429); another source is not held back", async () => {
    const { resolver, lists } = countingResolver({ perSecond: 0.001, burst: 3 });
    expect((await handleEventGridRequest({ resolver, producer }, writes(3, "noisy"))).status).toBe(200);
    expect((await handleEventGridRequest({ resolver, producer }, writes(1, "noisy"))).status).toBe(429);
    expect(lists.n).toBe(3);
    expect((await handleEventGridRequest({ resolver, producer }, writes(1, "quiet"))).status).toBe(200);
    expect(lists.n).toBe(4);
  });
});

describe("queue intakes", () => {
  it("a CloudTrail body or an audit-log entry over 256 KiB is not parsed as one", () => {
    const big = fixture("aws-sqs-set-queue-attributes.json").replace(
      '"detail"',
      `"pad":"${"x".repeat(256 * 1024)}","detail"`,
    );
    expect(parseEventBridgeBody(big)).toEqual({ kind: "not-eventbridge" });
    const entry = fixture("gcp-pubsub-update-topic.json").replace(
      '"protoPayload"',
      `"pad":"${"x".repeat(256 * 1024)}","protoPayload"`,
    );
    expect(parseAuditLogData(Buffer.from(entry))).toEqual({ kind: "not-audit-log" });
  });

  it("attack: CloudTrail events of one account over its rate throw a retryable error before their LIST", async () => {
    const { resolver: r, lists } = countingResolver({ perSecond: 0.001, burst: 1 }, [
      kindOf("Queue", "sqs.aws"),
    ]);
    const parsed = parseEventBridgeBody(fixture("aws-sqs-set-queue-attributes.json"));
    if (parsed.kind !== "event") throw new Error("does not parse");
    await r.cloudTrail(parsed.event);
    await expect(r.cloudTrail(parsed.event)).rejects.toBeInstanceOf(CloudEventsRateLimitedError);
    expect(lists.n).toBe(1);
    const other = { ...parsed.event, account: "999999999999" };
    await r.cloudTrail(other);
    expect(lists.n).toBe(2);
  });
});
