import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { startExtraKubeApiserver, stopExtraKubeApiserver } from "../../../infra/local/stack.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { Kube, type KubeObject } from "../../../shared/kube/client.ts";
import { waitForCrds } from "../../../shared/kube/crds.ts";
import { endpointFromKubeconfig, readKubeconfigFile } from "../../../shared/kube/kubeconfig.ts";
import { Forwarder, type ForwarderOptions } from "../../../shared/pipeline/forwarder.ts";
import { ensureCrds } from "../../support/aws.ts";
import {
  env,
  eventually,
  freePort,
  inParallel,
  kubeConfigFor,
  newKube,
  sleep,
  uniqueName,
} from "../../support/env.ts";
import { captureLogger } from "../../support/reconcile.ts";
import { cleanup, queueObject, RecordingSink, readyStatus, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const running: Forwarder[] = [];
const created: string[] = [];
const FAST_BACKOFF = { baseMs: 50, maxMs: 500 };

beforeAll(async () => {
  await ensureCrds();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((f) => f.stop()));
  await cleanup(kube, created.splice(0));
});

/** A forwarder that sees only this test's objects (other suites create Queues on the same server). */
function newForwarder(label: string, opts: Partial<ForwarderOptions> = {}) {
  const sink = new RecordingSink();
  const forwarder = new Forwarder({
    kube,
    types: [Queue],
    sink,
    labelSelector: `${TEST_LABEL}=${label}`,
    backoff: FAST_BACKOFF,
    ...opts,
  });
  running.push(forwarder);
  return { forwarder, sink };
}

async function createQueue(name: string, label: string, k: Kube = kube) {
  created.push(name);
  return k.create<KubeObject>(Queue, queueObject(name, label));
}

describe("forwarder against the real API server", () => {
  it("forwards create, spec update and delete as keys only, and drops a status-only update", async () => {
    const label = uniqueName("fwd-crud");
    const { forwarder, sink } = newForwarder(label);
    await forwarder.start();
    const name = uniqueName("q-fwd");
    const sentinel = uniqueName("q-sentinel");

    const obj = await createQueue(name, label);
    await eventually(async () => sink.for(name).length === 1, { what: "ADDED forwarded" });
    await kube.patch(Queue, name, { spec: { forProvider: { visibilityTimeoutSeconds: 60 } } });
    await eventually(async () => sink.for(name).length === 2, { what: "spec update forwarded" });
    await kube.patchStatus(Queue, name, readyStatus());
    // Events of one kind arrive in order: once the sentinel is forwarded, the status event was seen.
    await createQueue(sentinel, label);
    await eventually(async () => sink.for(sentinel).length === 1, { what: "sentinel forwarded" });
    expect(sink.for(name)).toHaveLength(2);
    expect(forwarder.stats().droppedNoop).toBeGreaterThanOrEqual(1);
    await kube.delete(Queue, name);
    await eventually(async () => sink.for(name).length === 3, { what: "DELETED forwarded" });

    for (const m of sink.for(name)) {
      expect(m).toEqual({
        v: 1,
        apiVersion: Queue.apiVersion,
        kind: "Queue",
        name,
        uid: obj.metadata.uid,
        reason: "watch",
        at: expect.any(String),
      });
    }
  });

  it("watches over the own HTTP client from a cluster endpoint (the functions' loader, no client-node)", async () => {
    // Prepare: a Kube that has no client-node KubeConfig at all.
    const label = uniqueName("fwd-endpoint");
    const endpointKube = new Kube(endpointFromKubeconfig(readKubeconfigFile(env("KUBECONFIG"))).endpoint);
    const { forwarder, sink } = newForwarder(label, { kube: endpointKube });
    const before = uniqueName("q-ep-list");
    await createQueue(before, label);
    // Act
    await forwarder.start();
    const after = uniqueName("q-ep-watch");
    await createQueue(after, label);
    // Assess: the list forwarded the first, the watch the second.
    await eventually(async () => sink.for(after).length === 1, { what: "watched ADDED forwarded" });
    expect(sink.for(before)).toHaveLength(1);
    expect(forwarder.stats().kinds[0]).toMatchObject({ state: "watching", synced: true });
    expect(endpointKube.stats.byOperation["watch Queue"]).toBeGreaterThanOrEqual(1);
  });

  it("coalesces 20 rapid spec patches of one key into a few messages", async () => {
    const label = uniqueName("fwd-burst");
    const { forwarder, sink } = newForwarder(label);
    await forwarder.start();
    const name = uniqueName("q-burst");
    await createQueue(name, label);
    await eventually(async () => sink.for(name).length === 1, { what: "ADDED forwarded" });
    sink.clear();

    // A burst, as a user's apply loop or a controller would make it: 20 writes in flight at once.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        kube.patch(Queue, name, { spec: { forProvider: { delaySeconds: i + 1 } } }),
      ),
    );
    const last = await kube.get(Queue, name);
    await eventually(
      async () =>
        forwarder.stats().pending === 0 &&
        forwarder.stats().kinds[0]?.resourceVersion === last?.metadata.resourceVersion,
      {
        what: "burst processed",
      },
    );
    await sleep(200);

    expect(sink.for(name).length).toBeGreaterThanOrEqual(1);
    expect(sink.for(name).length).toBeLessThanOrEqual(3);
    expect(forwarder.stats().coalesced).toBeGreaterThanOrEqual(17);
  });

  it("forwards every existing key once on start, and nothing again when restarted from its resourceVersion", async () => {
    const label = uniqueName("fwd-list");
    const names = Array.from({ length: 7 }, () => uniqueName("q-list"));
    await inParallel(names, 7, (n) => createQueue(n, label));
    // A page size below the object count exercises limit/continue.
    const { forwarder, sink } = newForwarder(label, { pageSize: 3 });

    await forwarder.start();
    await eventually(async () => sink.messages.length === 7, { what: "initial list forwarded" });
    expect(new Set(sink.names())).toEqual(new Set(names));
    expect(forwarder.stats().kinds[0]).toMatchObject({ synced: true, keys: 7 });

    await forwarder.stop();
    sink.clear();
    await forwarder.start();
    await sleep(300);
    expect(sink.messages).toEqual([]);
    expect(forwarder.stats().lists).toBe(1);
  });

  it("keeps watching the kinds it can while another kind's CRD is not installed, and says so once", async () => {
    const label = uniqueName("fwd-missing");
    const missing: ResourceType = {
      group: "widgets.aws.driftless.dev",
      version: "v1alpha1",
      kind: "Widget",
      plural: "widgets",
      namespaced: false,
    };
    const { lines, logger } = captureLogger();
    const { forwarder, sink } = newForwarder(label, { types: [missing, Queue], logger });
    await forwarder.start();
    const name = uniqueName("q-alive");
    await createQueue(name, label);

    await eventually(async () => sink.for(name).length === 1, { what: "Queue forwarded" });
    await eventually(async () => forwarder.stats().failures >= 3, {
      what: "several retries of the missing kind",
    });
    const notInstalled = lines.filter((l) =>
      l.includes("CRD widgets.widgets.aws.driftless.dev not installed"),
    );
    expect(notInstalled).toHaveLength(1);
    expect(forwarder.stats().kinds.map((k) => [k.kind, k.state])).toEqual([
      ["Widget", expect.stringMatching(/missing/)],
      ["Queue", "watching"],
    ]);
  });

  it("starts a kind's list and watch when its CRD is served (whenServed), not through 404s and backoff", async () => {
    // Prepare: a throwaway kind whose CRD is installed only after the forwarder started.
    const group = `${uniqueName("served")}.example.com`;
    const widget: ResourceType = {
      group,
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: false,
    };
    const crdName = `widgets.${group}`;
    const crdType: ResourceType = {
      group: "apiextensions.k8s.io",
      version: "v1",
      kind: "CustomResourceDefinition",
      plural: "customresourcedefinitions",
      namespaced: false,
    };
    const label = uniqueName("fwd-served");
    let served = false;
    const installed = waitForCrds(kube, [crdName], 60_000, () => {
      served = true;
    });
    const { forwarder, sink } = newForwarder(label, {
      types: [widget, Queue],
      whenServed: (t) => (t.group === group && !served ? installed.then(() => undefined) : undefined),
    });
    await forwarder.start();
    try {
      // Act
      await kube.create<KubeObject>(crdType, {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: crdName },
        spec: {
          group,
          scope: "Cluster",
          names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      });
      await installed;
      const name = uniqueName("w");
      await kube.create<KubeObject>(widget, {
        apiVersion: `${group}/v1`,
        kind: "Widget",
        metadata: { name, labels: { [TEST_LABEL]: label } },
      });

      // Assess: forwarded; the kind was listed once and never failed (no 404, no backoff).
      await eventually(async () => sink.for(name).length === 1, { what: "Widget forwarded" });
      const stats = forwarder.stats();
      expect(stats.failures).toBe(0);
      // One first list per kind. A relist after 410 Gone (other files' Queues filling the API server's watch
      // window between the list and the watch, when files run side by side) is not a failed start.
      expect(stats.lists - stats.relists, JSON.stringify(stats)).toBe(2);
      expect(forwarder.stats().kinds.map((k) => [k.kind, k.state])).toEqual([
        ["Widget", "watching"],
        ["Queue", "watching"],
      ]);
    } finally {
      await forwarder.stop();
      await kube.delete(crdType, crdName);
    }
  });

  it("on 410 Gone (resume point set older than the API server's watch window) relists and forwards exactly the keys changed meanwhile", async () => {
    const label = uniqueName("fwd-gone");
    const [same, statusOnly, updated, deleted, added, after] = [
      "same",
      "status",
      "upd",
      "del",
      "add",
      "after",
    ].map((p) => uniqueName(`q-${p}`)) as [string, string, string, string, string, string];
    await inParallel([same, statusOnly, updated, deleted], 4, (n) => createQueue(n, label));
    const { lines, logger } = captureLogger();
    const { forwarder, sink } = newForwarder(label, { logger });
    await forwarder.start();
    await eventually(async () => sink.messages.length === 4, { what: "initial list forwarded" });
    await forwarder.stop();

    // Changes while the forwarder is not watching.
    await kube.patchStatus(Queue, statusOnly, readyStatus());
    await kube.patch(Queue, updated, { spec: { forProvider: { visibilityTimeoutSeconds: 90 } } });
    await kube.delete(Queue, deleted);
    await createQueue(added, label);
    // The API server answers a watch from resourceVersion 1 with an ERROR event, code 410 (Expired).
    forwarder.resumeFrom(Queue, "1");
    sink.clear();
    await forwarder.start();
    await eventually(
      async () => forwarder.stats().kinds[0]?.state === "watching" && forwarder.stats().pending === 0,
      {
        what: "relisted and watching",
      },
    );
    await sleep(200);

    expect(forwarder.stats().relists).toBe(1);
    expect(lines.some((l) => l.includes("410 Gone"))).toBe(true);
    expect(new Set(sink.names())).toEqual(new Set([updated, deleted, added]));
    expect(sink.for(deleted)[0]).not.toHaveProperty("uid");
    // Nothing is missed after the relist either: the watch resumed from the list's resourceVersion.
    await createQueue(after, label);
    await eventually(async () => sink.for(after).length === 1, { what: "watch resumed after relist" });
  });

  it("resumes after its API server crashes and restarts mid-watch and forwards a change made while it was down", async () => {
    const label = uniqueName("fwd-restart");
    const port = await freePort();
    let apiserver = await startExtraKubeApiserver(port);
    try {
      const { lines, logger } = captureLogger();
      const { forwarder, sink } = newForwarder(label, {
        kube: new Kube(kubeConfigFor(apiserver.server)),
        logger,
      });
      await forwarder.start();
      const before = uniqueName("q-before");
      const during = uniqueName("q-during");
      await createQueue(before, label);
      await eventually(async () => sink.for(before).length === 1, { what: "forwarded before the restart" });

      await stopExtraKubeApiserver(apiserver.pid, "SIGKILL");
      await eventually(async () => forwarder.stats().failures >= 3, {
        what: "retrying while the server is down",
      });
      // Made through the stack's main API server (same etcd) while the forwarder's server is down.
      await kube.patch(Queue, before, { spec: { forProvider: { visibilityTimeoutSeconds: 120 } } });
      await createQueue(during, label);
      apiserver = await startExtraKubeApiserver(port);

      await eventually(async () => sink.for(during).length === 1 && sink.for(before).length === 2, {
        what: "changes made during the outage forwarded",
        timeoutMs: 30_000,
      });
      expect(lines.filter((l) => l.includes("API server unreachable"))).toHaveLength(1);
      expect(lines.filter((l) => l.includes("API server reachable again"))).toHaveLength(1);
      expect(forwarder.stats().reconnects).toBeGreaterThanOrEqual(1);
    } finally {
      await Promise.all(running.splice(0).map((f) => f.stop()));
      await stopExtraKubeApiserver(apiserver.pid, "SIGKILL");
    }
  });

  it("forwards the owner of a connection Secret that is edited or deleted by hand, so it is repaired at once", async () => {
    const label = uniqueName("fwd-secret");
    const { forwarder, sink } = newForwarder(label, { connectionSecrets: true });
    const name = uniqueName("q-owner");
    const queue = await createQueue(name, label);
    // Another Queue, outside this forwarder's label selector: its Secret must not bring it in.
    const foreign = uniqueName("q-foreign");
    const other = await createQueue(foreign, uniqueName("other-label"));
    const connectionSecret = (secretName: string, owner: string, uid: string) =>
      kube.createSecret({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: secretName,
          namespace: "default",
          labels: { "app.kubernetes.io/managed-by": "driftless" },
          ownerReferences: [
            { apiVersion: Queue.apiVersion, kind: "Queue", name: owner, uid, controller: true },
          ],
        },
        stringData: { url: "https://sqs.example/q" },
      });
    const secretName = uniqueName("conn");
    const foreignSecret = uniqueName("conn-foreign");
    await connectionSecret(secretName, name, queue.metadata.uid ?? "");
    await connectionSecret(foreignSecret, foreign, other.metadata.uid ?? "");
    await forwarder.start();
    await eventually(async () => sink.for(name).length === 1, { what: "the Queue's own ADDED" });
    await sleep(300);
    expect(sink.for(name)).toHaveLength(1); // the Secrets' first list only learns them

    const current = await kube.getSecret("default", secretName);
    await kube.replaceSecret({ ...current, data: { url: Buffer.from("tampered").toString("base64") } });
    await eventually(async () => sink.for(name).length === 2, { what: "owner forwarded after an edit" });
    await kube.deleteSecret("default", foreignSecret);
    await kube.deleteSecret("default", secretName);
    await eventually(async () => sink.for(name).length === 3, { what: "owner forwarded after a delete" });
    expect(sink.for(name).every((m) => m.kind === "Queue" && m.uid === queue.metadata.uid)).toBe(true);
    expect(sink.for(foreign)).toEqual([]);
  });
});
