import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { Kube } from "../../shared/kube/client.ts";

/** A name no other test (or parallel suite) uses: tests never share objects. */
export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

export function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: integration tests run under test/support/global-stack.ts`);
  return v;
}

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(env("KUBECONFIG"));
  return kc;
}

export const newKube = () => new Kube(kubeConfig());

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `fn` returns a truthy value; fails with the last value seen. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${opts.what ?? "condition"}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
      );
    await sleep(opts.intervalMs ?? 100);
  }
}

/** Runs `fn` over `items` with at most `limit` at once. */
export async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** A free TCP port on 127.0.0.1, for a server a test starts itself. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** A kubeconfig for another API server of the local stack (same CA and token). */
export function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "extra", server, caFile: env("DRIFTLESS_CA_FILE") }],
    users: [{ name: "admin", token: env("DRIFTLESS_KUBE_TOKEN") }],
    contexts: [{ name: "extra", cluster: "extra", user: "admin" }],
    currentContext: "extra",
  });
  return kc;
}
