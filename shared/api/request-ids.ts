// The cloud's request ids of one external operation, for the change log (issue 35, item 5): the engine opens
// a collector around each create, update and delete; the SDK clients' own hooks (AWS middleware,
// Azure pipeline policy) note the id of every answer they get inside it. No provider code changes.
import { AsyncLocalStorage } from "node:async_hooks";

const collector = new AsyncLocalStorage<string[]>();

/** Notes the request id of an answer (undefined or empty: the cloud sent none), if an operation is collecting. */
export function noteRequestId(id: string | undefined | null): void {
  if (!id) return;
  const ids = collector.getStore();
  if (ids && !ids.includes(id)) ids.push(id);
}

/** Runs `call`, returning what it returned and the request ids of the answers it got, in order. */
export async function withRequestIds<T>(call: () => Promise<T>): Promise<{ value: T; requestIds: string[] }> {
  const ids: string[] = [];
  const value = await collector.run(ids, call);
  return { value, requestIds: ids };
}
