import type { ManagedResource } from "../../shared/api/managed.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import type { ReconcileResult, ReconcilerOptions, ResourceKey } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { Reconciler } from "./routed.ts";

/** A logger that keeps every line, so tests can assert on logs and scan them for secrets. */
export function captureLogger() {
  const lines: string[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
    lines.push(JSON.stringify({ level, ...obj, msg }));
  };
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") } };
}

/**
 * A reconciler for the emulator suites. moto, Azurite and the fakes are strongly consistent, so the
 * creation grace period (which makes a delete within 30 s of a create wait out the cloud's lag) is 0
 * unless a test sets it: the engine table tests and the fault suite prove the grace period itself.
 */
/** A logger that keeps every line as an object, for assertions on fields. */
export function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg?: string) => {
    lines.push({ level, ...obj, msg });
  };
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error"), debug: at("debug") } };
}

export function newReconciler(kube: Kube, opts: ReconcilerOptions = {}) {
  return new Reconciler(kube, new KindRegistry(managedKinds), { creationGracePeriodMs: 0, ...opts });
}

export const keyOf = (t: { apiVersion: string; kind: string }, name: string): ResourceKey => ({
  apiVersion: t.apiVersion,
  kind: t.kind,
  name,
});

/** Reconciles until the result is final (no requeue) or `max` rounds; returns every result. */
export async function settle(r: Reconciler, key: ResourceKey, max = 10): Promise<ReconcileResult[]> {
  const results: ReconcileResult[] = [];
  for (let i = 0; i < max; i++) {
    const res = await r.reconcile(key);
    results.push(res);
    if (res.requeueAfterMs === undefined || res.outcome === "error" || res.outcome === "blocked") break;
  }
  return results;
}

export const conditionOf = (mr: ManagedResource | undefined, type: string) =>
  mr?.status?.conditions?.find((c) => c.type === type);

export async function getMr<T = Record<string, unknown>>(kube: Kube, t: ResourceType, name: string) {
  return kube.get<ManagedResource<T> & { [k: string]: unknown }>(t, name);
}
