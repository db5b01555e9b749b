// Runs one binding agent: a watch on the app cluster's claims (the project's Forwarder, keys only),
// a memory queue serialising each claim and handing it to the worker core (the same message path as
// every other reconcile: context, router, settle), a periodic resync of every app-cluster claim (control-plane
// status is polled, as the agent may not watch outside its namespace), and token renewal.
import type { KubeConfig } from "@kubernetes/client-node";
import { claimKinds } from "../api/claims/claims.ts";
import { Kube, statusOf } from "../kube/client.ts";
import type { Logger } from "../pipeline/common.ts";
import { Forwarder } from "../pipeline/forwarder.ts";
import { MemoryQueue } from "../queue/memory.ts";
import { makeMessage } from "../queue/message.ts";
import { Router } from "../worker/core.ts";
import { reconcileHandler } from "../worker/memory.ts";
import { ExportAgent } from "./agent.ts";
import { AppClusterKubeConfig } from "./app-kubeconfig.ts";
import {
  agentKubeConfig,
  appClusterNameOf,
  BindError,
  boundTemplates,
  DEFAULT_AGENT_TOKEN_SECONDS,
} from "./bind.ts";
import { validateAppClusterName } from "./naming.ts";

export const DEFAULT_RESYNC_MS = 30_000;

export interface AgentRunOptions {
  /** The app cluster, as its administrator. */
  app: KubeConfig;
  /** The agent's control-plane identity; called again to renew it (a fresh ServiceAccount token). */
  controlPlane: () => Promise<KubeConfig>;
  /** Default: a third of the default token lifetime. */
  renewEveryMs?: number;
  /**
   * The app cluster's name, as the control plane knows it: it decides the control-plane namespace the
   * agent acts in, so it is never taken from the app cluster (whose admin could name another cluster).
   */
  appCluster: string;
  logger: Logger;
  resyncMs?: number;
  pollIntervalMs?: number;
  workers?: number;
}

export interface RunningAgent {
  agent: ExportAgent;
  appCluster: string;
  /** Enqueues every app-cluster claim now (also what the timer does). */
  resyncNow(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the agent of one app cluster. */
export async function startExportAgent(o: AgentRunOptions): Promise<RunningAgent> {
  const app = new Kube(o.app);
  const appCluster = validateAppClusterName(o.appCluster);
  const logger = o.logger;
  // The app cluster's own record is a hint for the operator only: a mismatch means a mixed-up kubeconfig
  // (or an edited record) and is reported, never followed.
  const recorded = await appClusterNameOf(o.app).catch(() => undefined);
  if (recorded !== appCluster)
    logger.warn(
      { appCluster, recorded: recorded ?? "none" },
      "the app cluster's binding record names another app cluster; serving it under the name the control plane gave",
    );
  let cp = new Kube(await o.controlPlane());
  const templates = await boundTemplates(cp, appCluster).catch((err: unknown) => {
    if (statusOf(err) === 404)
      throw new BindError(
        `app cluster ${appCluster} is not bound on this control plane: run driftless bind --name ${appCluster} first`,
      );
    throw err;
  });
  const agent = new ExportAgent({
    app,
    controlPlane: cp,
    appCluster,
    templates,
    logger,
    ...(o.pollIntervalMs ? { pollIntervalMs: o.pollIntervalMs } : {}),
  });
  const queue = new MemoryQueue({ workers: o.workers ?? 4 });
  // The agent writes its own line per reconcile (exported claim reconciled): the router only settles.
  queue.start(reconcileHandler({ reconcile: new Router([agent]).reconcile }));
  const forwarder = new Forwarder({ kube: app, types: claimKinds, sink: queue, logger });
  await forwarder.start();

  let resyncing: Promise<void> | undefined;
  const resyncNow = (): Promise<void> => {
    resyncing ??= (async () => {
      try {
        agent.update({ templates: await boundTemplates(cp, appCluster) });
        for (const def of claimKinds) {
          let cont: string | undefined;
          do {
            const page = await app
              .list(def, { limit: 500, ...(cont ? { continue: cont } : {}) })
              .catch((err: unknown) => {
                // A claim kind whose CRD is not installed in the app cluster has nothing to resync.
                if (statusOf(err) === 404) return { items: [], continue: undefined };
                throw err;
              });
            const messages = page.items.map((c) =>
              makeMessage(
                {
                  apiVersion: def.apiVersion,
                  kind: def.kind,
                  name: c.metadata.name,
                  namespace: c.metadata.namespace ?? "",
                },
                "drift",
              ),
            );
            if (messages.length > 0) await queue.send(messages);
            cont = page.continue;
          } while (cont);
        }
      } catch (err) {
        logger.warn({ appCluster, error: (err as Error).message }, "export resync failed");
      } finally {
        resyncing = undefined;
      }
    })();
    return resyncing;
  };
  const resync = setInterval(resyncNow, o.resyncMs ?? DEFAULT_RESYNC_MS);
  resync.unref();
  const renew = setInterval(
    () => {
      o.controlPlane()
        .then((kc) => {
          cp = new Kube(kc);
          agent.update({ controlPlane: cp });
        })
        .catch((err: unknown) =>
          logger.error({ appCluster, error: (err as Error).message }, "cannot renew agent token"),
        );
    },
    o.renewEveryMs ?? (DEFAULT_AGENT_TOKEN_SECONDS * 1000) / 3,
  );
  renew.unref();
  void resyncNow();
  logger.info({ appCluster }, "export agent started");

  return {
    agent,
    appCluster,
    resyncNow,
    async stop() {
      clearInterval(resync);
      clearInterval(renew);
      await forwarder.stop();
      await resyncing;
      await queue.stop();
    },
  };
}

/**
 * The agent of an app cluster, run next to the control plane's reconcilers with the admin kubeconfig.
 * Its name comes from the control plane: `opts.appCluster`, or the name an AppClusterKubeConfig was
 * loaded under (`driftless run --app-cluster NAME=KUBECONFIG`).
 */
export function startExportAgentFor(
  controlPlaneAdmin: KubeConfig,
  app: KubeConfig,
  logger: Logger,
  opts: Partial<AgentRunOptions> = {},
) {
  return (async () => {
    const appCluster = opts.appCluster ?? (app instanceof AppClusterKubeConfig ? app.appCluster : undefined);
    if (!appCluster)
      throw new BindError(
        "an app cluster's name must come from the control plane (driftless run --app-cluster NAME=KUBECONFIG); it is never read from the app cluster",
      );
    return startExportAgent({
      ...opts,
      app,
      appCluster,
      logger,
      controlPlane: () => agentKubeConfig(controlPlaneAdmin, appCluster),
    });
  })();
}
