// Attacks from an app cluster (and from one app namespace on another) against the export boundary, on
// real RBAC-enforcing API servers: a forged binding name, a kubeconfig that runs code, a permission
// claim reaching into another app namespace, and `bind` taking over a namespace it did not make.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { EXIT, main } from "../../../functions/cli/main.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { APIServiceExportTemplate, ExportLabels } from "../../../shared/api/export/template.ts";
import { ExportAgent } from "../../../shared/export/agent.ts";
import { agentKubeConfig, BindError, bindAppCluster } from "../../../shared/export/bind.ts";
import { APP_BINDING_CONFIGMAP, APP_BINDING_NAMESPACE } from "../../../shared/export/naming.ts";
import { type RunningAgent, startExportAgentFor } from "../../../shared/export/run.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { createLogger } from "../../../shared/log.ts";
import { pinAppCluster } from "../../support/app-cluster.ts";
import { ensureNamespace } from "../../support/aws.ts";
import { env, eventually } from "../../support/env.ts";
import { claimObject } from "../claims/support.ts";
import { type Cluster, startClusters } from "./support.ts";

const TEMPLATE = "boundary-services";
const logger = createLogger({ level: "silent" });
const dir = mkdtempSync(join(tmpdir(), "driftless-export-boundary-"));
const agents: RunningAgent[] = [];
const queueKey = (namespace: string, name: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  namespace,
  name,
});

let cp: Cluster;
let beta: Cluster;

beforeAll(async () => {
  [cp, beta] = (await startClusters([
    { role: "cp", crds: true },
    { role: "beta", crds: false },
  ])) as [Cluster, Cluster];
  await cp.kube.create(APIServiceExportTemplate, {
    apiVersion: APIServiceExportTemplate.apiVersion,
    kind: APIServiceExportTemplate.kind,
    metadata: { name: TEMPLATE },
    spec: {
      apis: [{ group: Queue.group, resource: Queue.plural, version: Queue.version }],
      // Any: objects the claim does not own are synced too, but only its own app namespace's.
      permissionClaims: [{ resource: "secrets", selector: { owner: "Any" } }],
    },
  });
  // The victim. Its app cluster does not matter here: the control plane stands in for it.
  await bindAppCluster({
    controlPlane: cp.kubeConfig,
    app: cp.kubeConfig,
    name: "alpha",
    templates: [TEMPLATE],
  });
  await bindAppCluster({
    controlPlane: cp.kubeConfig,
    app: beta.kubeConfig,
    name: "beta",
    templates: [TEMPLATE],
  });
  for (const ns of ["shop", "payments"]) await ensureNamespace(beta.kube, ns);
}, 180_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all([cp, beta].map((c) => c?.stop()));
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("the app cluster ↔ control plane boundary", () => {
  it("an app cluster that names another cluster in its own binding ConfigMap still acts only in its own namespace", async () => {
    // Beta's administrator rewrites the record `bind` left in beta, naming alpha.
    const record = await coreApi(beta.kube).readNamespacedConfigMap({
      namespace: APP_BINDING_NAMESPACE,
      name: APP_BINDING_CONFIGMAP,
    });
    await coreApi(beta.kube).replaceNamespacedConfigMap({
      namespace: APP_BINDING_NAMESPACE,
      name: APP_BINDING_CONFIGMAP,
      body: { ...record, data: { appCluster: "alpha", controlPlaneNamespace: "app-alpha" } },
    });

    // A kubeconfig with no control-plane-given name is not enough to start an agent.
    const unnamed = await startExportAgentFor(cp.kubeConfig, beta.kubeConfig, logger).then(
      (a) => {
        agents.push(a);
        return a;
      },
      (e: unknown) => e as Error,
    );
    expect(unnamed).toBeInstanceOf(Error);
    expect((unnamed as Error).message).toMatch(/name.*control plane/);

    // Named by the control plane (`--app-cluster beta=…`), it serves beta, whatever beta says.
    const agent = await startExportAgentFor(cp.kubeConfig, pinAppCluster("beta", beta.kubeConfig), logger, {
      resyncMs: 3_600_000,
    });
    agents.push(agent);
    expect(agent.appCluster).toBe("beta");
    await beta.kube.create(Queue, claimObject(Queue, "shop", "attack"));
    // The agent's own watch picks the claim up.
    const upstream = await eventually(() => cp.kube.get(Queue, "shop.attack", "app-beta"), {
      what: "the claim's copy in app-beta",
    });
    expect(upstream?.metadata.labels?.[ExportLabels.appCluster]).toBe("beta");
    expect((await cp.kube.list(Queue, { namespace: "app-alpha" })).items).toHaveLength(0);
  });

  it("owner: Any syncs only objects of the claim's own app namespace", async () => {
    // This test drives its own agent: no other one may reconcile beta's claims meanwhile.
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    const agent = new ExportAgent({
      app: beta.kube,
      controlPlane: new Kube(await agentKubeConfig(cp.kubeConfig, "beta", 600)),
      appCluster: "beta",
      templates: [TEMPLATE],
    });
    await beta.kube.create(Queue, claimObject(Queue, "shop", "reader"));
    expect((await agent.reconcile(queueKey("shop", "reader"))).outcome).toBe("created");
    // What the claim reconciler writes in app-beta: connection Secrets, one app namespace's each.
    for (const name of ["shop.cache", "payments.db-password"])
      await coreApi(cp.kube).createNamespacedSecret({
        namespace: "app-beta",
        body: { metadata: { name }, stringData: { password: `secret-of-${name}` } },
      });
    await agent.reconcile(queueKey("shop", "reader"));

    const shop = (await coreApi(beta.kube).listNamespacedSecret({ namespace: "shop" })).items;
    const synced = shop
      .filter((s) => s.metadata?.labels?.[ExportLabels.syncedFor])
      .map((s) => s.metadata?.name);
    expect(synced).toEqual(["cache"]);
    expect(shop.map((s) => s.metadata?.name)).not.toContain("payments.db-password");
    expect((await coreApi(beta.kube).listNamespacedSecret({ namespace: "payments" })).items).toHaveLength(0);
  });

  it("bind refuses an app-cluster kubeconfig that runs code, before touching either cluster", async () => {
    const marker = join(dir, "exec-ran");
    const evil = join(dir, "evil.kubeconfig");
    writeFileSync(
      evil,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "app", cluster: { server: "https://127.0.0.1:1" } }],
        users: [
          {
            name: "u",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1",
                command: "/bin/sh",
                args: [
                  "-c",
                  `touch ${marker}; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'`,
                ],
              },
            },
          },
        ],
        contexts: [{ name: "app", context: { cluster: "app", user: "u" } }],
        "current-context": "app",
      }),
    );
    const cpFile = join(dir, "cp.kubeconfig");
    const server = cp.kubeConfig.getCurrentCluster()?.server ?? "";
    writeFileSync(
      cpFile,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "cp", cluster: { server, "certificate-authority": env("DRIFTLESS_CA_FILE") } }],
        users: [{ name: "admin", user: { token: env("DRIFTLESS_KUBE_TOKEN") } }],
        contexts: [{ name: "cp", context: { cluster: "cp", user: "admin" } }],
        "current-context": "cp",
      }),
    );
    const code = await main([
      "node",
      "driftless",
      "--kubeconfig",
      cpFile,
      "bind",
      "--app-cluster",
      evil,
      "--name",
      "evil",
      "--export",
      TEMPLATE,
    ]);
    expect(code).toBe(EXIT.usage);
    expect(existsSync(marker)).toBe(false);
    expect(
      await coreApi(cp.kube)
        .readNamespace({ name: "app-evil" })
        .catch(() => undefined),
    ).toBeUndefined();
  });

  it("bind refuses a namespace app-<name> it did not make, and keeps labels others added to its own", async () => {
    await coreApi(cp.kube).createNamespace({
      body: {
        metadata: { name: "app-gamma", labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
      },
    });
    const err = await bindAppCluster({
      controlPlane: cp.kubeConfig,
      app: beta.kubeConfig,
      name: "gamma",
      templates: [TEMPLATE],
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(BindError);
    expect((err as Error).message).toMatch(/namespace app-gamma already exists.*not made by driftless bind/);
    const gamma = await coreApi(cp.kube).readNamespace({ name: "app-gamma" });
    expect(gamma.metadata?.labels).toMatchObject({ "pod-security.kubernetes.io/enforce": "restricted" });
    expect(gamma.metadata?.labels?.[ExportLabels.appCluster]).toBeUndefined();

    // Its own namespace: a platform team's label survives re-running bind.
    const ns = await coreApi(cp.kube).readNamespace({ name: "app-beta" });
    await coreApi(cp.kube).replaceNamespace({
      name: "app-beta",
      body: {
        ...ns,
        metadata: {
          ...ns.metadata,
          labels: { ...ns.metadata?.labels, "pod-security.kubernetes.io/enforce": "baseline" },
        },
      },
    });
    await bindAppCluster({
      controlPlane: cp.kubeConfig,
      app: beta.kubeConfig,
      name: "beta",
      templates: [TEMPLATE],
    });
    const own = await coreApi(cp.kube).readNamespace({ name: "app-beta" });
    expect(own.metadata?.labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "baseline",
      [ExportLabels.appCluster]: "beta",
    });
  });
});
