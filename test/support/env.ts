import { randomBytes } from "node:crypto";
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
