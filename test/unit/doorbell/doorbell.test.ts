// The admission doorbell's pure parts: the AdmissionReview handler, the per-key limit, the HTTP routes
// behind the path secret, the webhook configuration and the platform edges.
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { UsageObject } from "../../../shared/api/protection/usage.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { type AdmissionDeps, handleAdmissionReview } from "../../../shared/doorbell/admission.ts";
import { doorbellPath, handleDoorbellHttp } from "../../../shared/doorbell/http.ts";
import { inUseMessage } from "../../../shared/doorbell/in-use.ts";
import { createDoorbell } from "../../../shared/doorbell/index.ts";
import { fromLambdaUrl, isLambdaUrlEvent } from "../../../shared/doorbell/platforms.ts";
import { KeyRateLimiter } from "../../../shared/doorbell/rate-limit.ts";
import { doorbellWebhookConfiguration, webhookUrlProblem } from "../../../shared/doorbell/webhook.ts";
import { CLAIMS_FIELD_MANAGER, FIELD_MANAGER } from "../../../shared/kube/client.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import { type ReconcileMessage, validateMessage } from "../../../shared/queue/message.ts";
import type { SendOptions } from "../../../shared/queue/port.ts";
import { typesOf } from "../../../shared/worker/worker.ts";
import { admissionReview } from "../../support/admission.ts";
import { recordingLogger } from "../../support/reconcile.ts";

const SECRET = "0123456789abcdef0123456789abcdef0123";
const PASSWORD = "hunter2-must-never-be-logged";

class Sink {
  sent: Array<{ m: ReconcileMessage; opts: SendOptions | undefined }> = [];
  fail = false;
  async send(messages: readonly ReconcileMessage[], opts?: SendOptions) {
    if (this.fail) throw new Error("queue unavailable");
    for (const m of messages) {
      expect(validateMessage(m)).toBeUndefined();
      this.sent.push({ m, opts });
    }
    return { sent: messages.length, failed: [] };
  }
}

function setup(extra: Partial<AdmissionDeps> = {}) {
  const sink = new Sink();
  const { lines, logger } = recordingLogger();
  let now = 1_700_000_000_000;
  const deps: AdmissionDeps = {
    producer: sink,
    types: [Queue, providerConfigs.aws.type],
    logger,
    limiter: new KeyRateLimiter({ now: () => now }),
    now: () => now,
    ...extra,
  };
  return { sink, lines, deps, tick: (ms: number) => (now += ms) };
}

const queue = (
  rv: string,
  forProvider: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name: "orders", uid: "u-1", resourceVersion: rv, managedFields: [{ manager: "x" }], ...meta },
  spec: { forProvider, providerConfigRef: { name: "default" }, password: PASSWORD },
});

const review = (request: Record<string, unknown>) => admissionReview(Queue, { name: "orders", ...request });

describe("handleAdmissionReview", () => {
  it("a create is allowed and enqueued with no prior resourceVersion (the worker waits for it to exist)", async () => {
    const { sink, deps } = setup();
    const out = await handleAdmissionReview(
      deps,
      review({ operation: "CREATE", name: "", object: queue("", { delaySeconds: 1 }) }),
    );
    expect(out.status).toBe(200);
    expect(out.body).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "req-1", allowed: true },
    });
    expect(out.verdict).toBe("enqueued");
    expect(sink.sent.map((s) => s.m)).toMatchObject([
      {
        apiVersion: Queue.apiVersion,
        kind: "Queue",
        name: "orders",
        uid: "u-1",
        admitted: { before: "", at: new Date(1_700_000_000_000).toISOString() },
      },
    ]);
  });

  it("an update carries the resourceVersion before the write; a delete the old object's", async () => {
    const { sink, deps, tick } = setup();
    await handleAdmissionReview(
      deps,
      review({ object: queue("7", { a: 2 }), oldObject: queue("7", { a: 1 }) }),
    );
    tick(5_000);
    await handleAdmissionReview(deps, review({ operation: "DELETE", object: null, oldObject: queue("9") }));
    expect(sink.sent.map((s) => s.m.admitted?.before)).toEqual(["7", "9"]);
  });

  it.each([
    ["dry run", { dryRun: true, object: queue("1", { a: 2 }), oldObject: queue("1") }, "dry-run"],
    [
      "status subresource",
      { subResource: "status", object: queue("1", { a: 2 }), oldObject: queue("1") },
      "subresource",
    ],
    [
      "driftless's own field manager",
      { options: { fieldManager: FIELD_MANAGER }, object: queue("1", { a: 2 }), oldObject: queue("1") },
      "own-write",
    ],
    [
      "an ignored username",
      {
        userInfo: { username: "system:serviceaccount:driftless:reconciler" },
        object: queue("1", { a: 2 }),
        oldObject: queue("1"),
      },
      "own-write",
    ],
    [
      "an update that changes nothing read (managedFields, resourceVersion)",
      { object: queue("2", {}, { managedFields: [{ manager: "y" }] }), oldObject: queue("1") },
      "no-change",
    ],
    [
      "a kind this deployment does not serve",
      {
        kind: { group: "apps", version: "v1", kind: "Deployment" },
        resource: { group: "apps", version: "v1", resource: "deployments" },
        object: queue("1", { a: 2 }),
        oldObject: queue("1"),
      },
      "not-served",
    ],
  ])("%s: allowed, nothing enqueued", async (_, request, verdict) => {
    const { sink, deps } = setup({ ignoreUsers: ["system:serviceaccount:driftless:reconciler"] });
    const out = await handleAdmissionReview(deps, review(request));
    expect(out).toMatchObject({ status: 200, verdict, body: { response: { uid: "req-1", allowed: true } } });
    expect(sink.sent).toEqual([]);
  });

  it("the claim binder's writes (its own field manager) ring: the managed resources it makes need a reconcile", async () => {
    const { sink, deps } = setup();
    const out = await handleAdmissionReview(
      deps,
      review({ operation: "CREATE", options: { fieldManager: CLAIMS_FIELD_MANAGER }, object: queue("") }),
    );
    expect(out.verdict).toBe("enqueued");
    expect(sink.sent).toHaveLength(1);
  });

  it("label, annotation, finalizer and deletion changes ring; the namespace of a namespaced kind is kept", async () => {
    const { sink, deps, tick } = setup({
      types: [{ ...Queue, namespaced: true }],
    });
    const variants = [
      { labels: { a: "b" } },
      { annotations: { "crossplane.io/paused": "true" } },
      { finalizers: ["x"] },
      { deletionTimestamp: "2026-11-23T00:00:00Z" },
    ];
    for (const meta of variants) {
      tick(5_000);
      await handleAdmissionReview(
        deps,
        review({ namespace: "team-a", object: queue("2", {}, meta), oldObject: queue("1") }),
      );
    }
    expect(sink.sent.map((s) => s.m.namespace)).toEqual(["team-a", "team-a", "team-a", "team-a"]);
  });

  it("a failed send still allows the write (the sweep catches up) and is logged without the object", async () => {
    const { sink, deps, lines } = setup();
    sink.fail = true;
    const out = await handleAdmissionReview(
      deps,
      review({ object: queue("2", { a: 2 }), oldObject: queue("1") }),
    );
    expect(out).toMatchObject({ status: 200, verdict: "send-failed", body: { response: { allowed: true } } });
    expect(JSON.stringify(lines)).toContain("cannot enqueue");
    expect(JSON.stringify(lines)).not.toContain(PASSWORD);
  });

  it("a body that is not an AdmissionReview is a 400 whose log names the problem, never the contents", async () => {
    const { sink, deps, lines } = setup();
    const bad = review({ operation: "PATCH", object: queue("2") });
    const out = await handleAdmissionReview(deps, bad);
    expect(out.status).toBe(400);
    expect(await handleAdmissionReview(deps, { hello: PASSWORD })).toMatchObject({ status: 400 });
    expect(sink.sent).toEqual([]);
    expect(JSON.stringify(lines)).toContain("request.operation");
    expect(JSON.stringify(lines)).not.toContain(PASSWORD);
  });

  it("one message per key per second: a second write is delayed to the interval's end, a third is covered", async () => {
    const { sink, deps, tick } = setup();
    const write = (rv: string) =>
      handleAdmissionReview(
        deps,
        review({ object: queue(rv, { v: rv }), oldObject: queue(String(Number(rv) - 1)) }),
      );
    expect((await write("2")).verdict).toBe("enqueued");
    tick(200);
    expect((await write("3")).verdict).toBe("delayed");
    tick(100);
    expect((await write("4")).verdict).toBe("rate-limited");
    expect(sink.sent.map((s) => s.opts?.delayMs ?? 0)).toEqual([0, 800]);
    tick(5_000);
    expect((await write("5")).verdict).toBe("enqueued");
  });
});

describe("handleAdmissionReview: connection Secrets", () => {
  const secret = (data: Record<string, string>, owner = { apiVersion: Queue.apiVersion, kind: "Queue" }) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "orders-conn",
      namespace: "apps",
      resourceVersion: "5",
      labels: { "app.kubernetes.io/managed-by": "driftless" },
      ownerReferences: [{ ...owner, name: "orders", uid: "u-1", controller: true }],
    },
    data,
  });
  const secretReview = (request: Record<string, unknown>) =>
    review({
      kind: { group: "", version: "v1", kind: "Secret" },
      resource: { group: "", version: "v1", resource: "secrets" },
      namespace: "apps",
      name: "orders-conn",
      ...request,
    });

  it("an edit by hand rings the owner, a second later (no owner write to wait for)", async () => {
    const { sink, deps, lines } = setup();
    const out = await handleAdmissionReview(
      deps,
      secretReview({
        object: secret({ password: Buffer.from(PASSWORD).toString("base64") }),
        oldObject: secret({ password: "b2xk" }),
      }),
    );
    expect(out.verdict).toBe("enqueued");
    expect(sink.sent).toHaveLength(1);
    expect(sink.sent[0]?.m).toMatchObject({ kind: "Queue", name: "orders", uid: "u-1" });
    expect(sink.sent[0]?.m.namespace).toBeUndefined();
    expect(sink.sent[0]?.m.admitted).toBeUndefined();
    expect(sink.sent[0]?.opts?.delayMs).toBe(1_000);
    expect(JSON.stringify([sink.sent, lines])).not.toContain(Buffer.from(PASSWORD).toString("base64"));
  });

  it("a delete rings the owner; an unchanged Secret or one owned by another kind does not", async () => {
    const { sink, deps, tick } = setup();
    await handleAdmissionReview(
      deps,
      secretReview({ operation: "DELETE", object: null, oldObject: secret({ a: "b" }) }),
    );
    tick(5_000);
    const same = await handleAdmissionReview(
      deps,
      secretReview({ object: secret({ a: "b" }), oldObject: secret({ a: "b" }) }),
    );
    const foreign = await handleAdmissionReview(
      deps,
      secretReview({
        object: secret({ a: "c" }, { apiVersion: "apps/v1", kind: "Deployment" }),
        oldObject: secret({ a: "b" }),
      }),
    );
    expect([same.verdict, foreign.verdict]).toEqual(["no-change", "not-served"]);
    expect(sink.sent).toHaveLength(1);
  });
});

describe("KeyRateLimiter", () => {
  it("a write close to a delayed message's due time gets its own (it may be stored after that one is read)", () => {
    let now = 0;
    const l = new KeyRateLimiter({ now: () => now, intervalMs: 1_000 });
    expect(l.take("k")).toEqual({ kind: "send", delayMs: 0 });
    now = 100;
    expect(l.take("k")).toEqual({ kind: "send", delayMs: 900 });
    now = 900;
    expect(l.take("k")).toEqual({ kind: "send", delayMs: 1_100 });
  });

  it("caps what one container sends per second over all keys, and forgets the oldest keys beyond its size", () => {
    let now = 0;
    const l = new KeyRateLimiter({ now: () => now, perSecond: 3, maxKeys: 2 });
    expect(["a", "b", "c", "d"].map((k) => l.take(k).kind)).toEqual(["send", "send", "send", "drop"]);
    expect(l.size).toBe(2);
    now = 1_000;
    expect(l.take("d").kind).toBe("send");
  });
});

describe("handleDoorbellHttp", () => {
  const { logger } = recordingLogger();
  const routes = {
    secret: SECRET,
    logger,
    admit: async (body: unknown) => ({ status: 200, body: { echo: body } }),
  };
  const post = (path: string, body = "{}", method = "POST") =>
    handleDoorbellHttp(routes, { method, path, body });

  it("answers only /<secret>/admit; a wrong secret, a missing one or another route is the same bare 404", async () => {
    expect((await post(doorbellPath(SECRET, "admit"), '{"a":1}')).body).toBe('{"echo":{"a":1}}');
    const misses = await Promise.all([
      post(`/${SECRET.slice(0, -1)}x/admit`),
      post("/admit"),
      post(`/${SECRET}/events/azure`),
      post(`/${SECRET}/other`),
      post("/"),
    ]);
    expect(new Set(misses.map((m) => `${m.status} ${m.body}`))).toEqual(
      new Set(['404 {"error":"not found"}']),
    );
  });

  it("POST only, JSON only", async () => {
    expect((await post(doorbellPath(SECRET, "admit"), "{}", "GET")).status).toBe(405);
    expect((await post(doorbellPath(SECRET, "admit"), "not json")).status).toBe(400);
  });

  it("a missing or too short secret refuses everything, even a path that matches it", async () => {
    for (const secret of [undefined, "", "short"]) {
      const r = await handleDoorbellHttp(
        { ...routes, secret },
        { method: "POST", path: `/${secret}/admit`, body: "{}" },
      );
      expect(r.status).toBe(404);
    }
  });

  it("createDoorbell without a work queue is disabled: even the right secret gets a bare 404", async () => {
    const ring = createDoorbell({ secret: SECRET, producer: undefined, types: [Queue], logger });
    const out = await ring({ method: "POST", path: doorbellPath(SECRET, "admit"), body: "{}" });
    expect(out.status).toBe(404);
  });

  it("createDoorbell wires the admission route to the queue", async () => {
    const sink = new Sink();
    const ring = createDoorbell({ secret: SECRET, producer: sink, types: [Queue], logger });
    const out = await ring({
      method: "POST",
      path: doorbellPath(SECRET, "admit"),
      body: JSON.stringify(review({ object: queue("2", { a: 2 }), oldObject: queue("1") })),
    });
    expect(out.status).toBe(200);
    expect(sink.sent).toHaveLength(1);
  });
});

describe("inUseMessage", () => {
  const usage = (name: string, spec: Record<string, unknown>, namespace?: string) =>
    ({
      kind: namespace ? "Usage" : "ClusterUsage",
      metadata: { name, ...(namespace ? { namespace } : {}) },
      spec: { of: { apiVersion: "v", kind: "VPC", resourceRef: { name: "a" } }, ...spec },
    }) as unknown as UsageObject;

  it("says what Crossplane's webhook says, naming the first Usage and its user or reason, and what to do", () => {
    const by = { apiVersion: "v", kind: "Subnet", resourceRef: { name: "s" } };
    expect(inUseMessage([usage("u", { by }, "team-a"), usage("v", { reason: "x" })])).toBe(
      'This resource is in-use by 2 usage(s), including the Usage "u" (in namespace "team-a") by resource Subnet/s. Delete the usage(s) first.',
    );
    expect(inUseMessage([usage("c", { reason: "prod data", replayDeletion: true })])).toBe(
      'This resource is in-use by 1 usage(s), including the ClusterUsage "c" with reason: "prod data". Delete the usage(s) first; the deletion is made again when the last of them goes (replayDeletion).',
    );
  });
});

describe("doorbellWebhookConfiguration", () => {
  const url = `https://abc.lambda-url.eu-west-1.on.aws${doorbellPath(SECRET, "admit")}`;

  it("never refuses or blocks a write: Ignore, NoneOnDryRun, a short timeout, v1 reviews, main resources only", () => {
    const c = doorbellWebhookConfiguration({
      url,
      types: [Queue, providerConfigs.aws.type],
      caBundlePem: "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
      labelSelector: "team=a,tier=b",
    }) as { webhooks: Array<Record<string, unknown>> };
    const [w] = c.webhooks;
    expect(w).toMatchObject({
      failurePolicy: "Ignore",
      sideEffects: "NoneOnDryRun",
      timeoutSeconds: 2,
      admissionReviewVersions: ["v1"],
      matchPolicy: "Equivalent",
      objectSelector: { matchLabels: { team: "a", tier: "b" } },
      clientConfig: { url },
    });
    const caBundle = (w?.clientConfig as { caBundle?: string } | undefined)?.caBundle ?? "";
    expect(Buffer.from(caBundle, "base64").toString()).toContain("BEGIN");
    expect(w?.rules).toEqual([
      {
        apiGroups: ["aws.driftless.dev"],
        apiVersions: ["*"],
        operations: ["CREATE", "UPDATE", "DELETE"],
        resources: ["providerconfigs"],
        scope: "*",
      },
      {
        apiGroups: ["sqs.aws.driftless.dev"],
        apiVersions: ["*"],
        operations: ["CREATE", "UPDATE", "DELETE"],
        resources: ["queues"],
        scope: "*",
      },
    ]);
  });

  it("rings for both shapes of every kind a deployment serves: the .m. groups and their ProviderConfig kinds too", () => {
    const c = doorbellWebhookConfiguration({ url, types: typesOf(awsKinds, awsProviderConfigKinds) }) as {
      webhooks: Array<{ rules: Array<{ apiGroups: string[]; resources: string[] }> }>;
    };
    const rules = c.webhooks[0]?.rules ?? [];
    const covered = (group: string, resource: string) =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource));
    for (const { definition: d } of awsKinds) expect(covered(d.group, d.plural), d.apiVersion).toBe(true);
    expect(covered("sqs.aws.m.driftless.dev", "queues")).toBe(true);
    expect(covered("aws.m.driftless.dev", "providerconfigs")).toBe(true);
    expect(covered("aws.m.driftless.dev", "clusterproviderconfigs")).toBe(true);
  });

  it("without a shard selector, a second webhook rings for connection Secrets edited or deleted by hand", () => {
    const c = doorbellWebhookConfiguration({ url, types: [Queue] }) as {
      webhooks: Array<Record<string, unknown>>;
    };
    expect(c.webhooks).toHaveLength(2);
    expect(c.webhooks[1]).toMatchObject({
      name: "connection-secrets.doorbell.driftless.dev",
      failurePolicy: "Ignore",
      objectSelector: { matchLabels: { "app.kubernetes.io/managed-by": "driftless" } },
      rules: [{ apiGroups: [""], resources: ["secrets"], operations: ["UPDATE", "DELETE"] }],
    });
  });

  it("with the in-use guard, a third webhook asks about DELETEs of in-use objects only, and fails closed", () => {
    const inUseUrl = url.replace(/admit$/, "in-use");
    const c = doorbellWebhookConfiguration({ url, types: [Queue], labelSelector: "team=a", inUseUrl }) as {
      webhooks: Array<Record<string, unknown>>;
    };
    expect(c.webhooks.map((w) => w.name)).toEqual([
      "doorbell.driftless.dev",
      "in-use.doorbell.driftless.dev",
    ]);
    expect(c.webhooks[1]).toMatchObject({
      failurePolicy: "Fail",
      sideEffects: "NoneOnDryRun",
      clientConfig: { url: inUseUrl },
      objectSelector: { matchLabels: { team: "a", "crossplane.io/in-use": "true" } },
      rules: [{ apiGroups: ["sqs.aws.driftless.dev"], resources: ["queues"], operations: ["DELETE"] }],
    });
    expect(() => doorbellWebhookConfiguration({ url, types: [Queue], inUseUrl: "http://x/in-use" })).toThrow(
      /in-use guard: .*https/,
    );
  });

  it("refuses URLs the API server would refuse or that leak the secret elsewhere", () => {
    expect(webhookUrlProblem("http://x/admit")).toMatch(/https/);
    expect(webhookUrlProblem("https://x/admit?secret=1")).toMatch(/query string/);
    expect(webhookUrlProblem("https://u:p@x/admit")).toMatch(/user info/);
    expect(webhookUrlProblem(url)).toBeUndefined();
    expect(() => doorbellWebhookConfiguration({ url, types: [Queue], timeoutSeconds: 31 })).toThrow(/1–30/);
  });
});

describe("platform edges", () => {
  it("Lambda Function URL events (payload 2.0), base64 bodies included, are told apart from SQS batches", () => {
    const event = {
      version: "2.0",
      rawPath: "/s/admit",
      body: Buffer.from('{"a":1}').toString("base64"),
      isBase64Encoded: true,
      requestContext: { http: { method: "POST", path: "/s/admit" } },
    };
    expect(isLambdaUrlEvent(event)).toBe(true);
    expect(isLambdaUrlEvent({ Records: [] })).toBe(false);
    expect(fromLambdaUrl(event)).toMatchObject({ method: "POST", path: "/s/admit", body: '{"a":1}' });
  });
});
