// A fresh, empty API server of a test's (or the benchmark's) own: etcd + kube-apiserver with the stack's
// flags on free ports and in a directory of its own, so loading it with CRDs never burdens the shared
// stack. Stopped by its PIDs — by stop(), or at the latest when this process exits.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { type StandaloneKube, startStandaloneKube, stopStandaloneKube } from "../../infra/local/stack.ts";
import { freePort } from "./env.ts";

export interface FreshKube {
  kube: StandaloneKube;
  kc: KubeConfig;
  /** From spawn to /readyz, ms. */
  startMs: number;
  stop(): Promise<void>;
}

export async function startFreshKube(name: string): Promise<FreshKube> {
  // etcd's data in memory where there is /dev/shm: disk syncs would time the disk, not the server.
  const base = process.platform === "linux" ? "/dev/shm" : tmpdir();
  const dir = mkdtempSync(path.join(base, `driftless-${name}-`));
  // Free ports, never the stack's (12379/12380/16443 by default).
  const ports = { etcd: await freePort(), etcdPeer: await freePort(), kube: await freePort() };
  const started = performance.now();
  const kube = await startStandaloneKube({ name, dir, ports }).catch((err: Error) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const startMs = performance.now() - started;
  // Both run in process groups of their own: killed by PID even if the caller dies before stop().
  const onExit = () => {
    for (const pid of [kube.pids.apiserver, kube.pids.etcd]) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  const kc = new KubeConfig();
  kc.loadFromFile(kube.kubeconfig);
  let stopped = false;
  return {
    kube,
    kc,
    startMs,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await stopStandaloneKube(kube);
      process.removeListener("exit", onExit);
    },
  };
}
