// Dead-lettered messages, noted where an operator looks: a Warning Event on the resource.
import type { ManagedResource } from "../api/managed.ts";
import { apiVersionOf, type ResourceType } from "../api/meta.ts";
import type { Kube } from "../kube/client.ts";
import type { EventRecorder, ReconcileLogger, ResourceKey } from "../reconciler/contract.ts";

export const DEAD_LETTER_EVENT_REASON = "MessageDeadLettered";

/** Notes on a resource that its message was dead-lettered. Never throws. */
export type DeadLetterNote = (key: ResourceKey, attempts: number, error: Error) => Promise<void>;

/** The operator-facing text of a dead-letter note (Warning Event on the resource). */
export const deadLetterText = (attempts: number, error: Error) =>
  `message dead-lettered after ${attempts} attempts; the drift sweep retries within the poll interval. Last error: ${error.message}`;

/**
 * A dead-lettered message is otherwise visible only in the queue's logs and metrics: tell whoever looks
 * at the resource (kubectl describe) with a Warning Event. The queue adapters log the dead letter itself.
 */
export function deadLetterNote(deps: {
  kube: Kube;
  /** Every kind the worker serves (managed kinds, ProviderConfigs, claims). */
  types: readonly ResourceType[];
  events: EventRecorder;
  logger: ReconcileLogger;
}): DeadLetterNote {
  return async (key, attempts, error) => {
    const log = {
      key: `${key.kind}/${key.name}`,
      apiVersion: key.apiVersion,
      attempts,
      error: error.message,
    };
    const type = deps.types.find((t) => apiVersionOf(t) === key.apiVersion && t.kind === key.kind);
    if (!type) return;
    try {
      const obj = await deps.kube.get<ManagedResource & { [k: string]: unknown }>(
        type,
        key.name,
        key.namespace,
      );
      if (!obj) return;
      await deps.events.record(obj, "Warning", DEAD_LETTER_EVENT_REASON, deadLetterText(attempts, error));
      deps.logger.debug(log, "dead letter noted on the resource");
    } catch (err) {
      deps.logger.warn(
        { ...log, noteError: (err as Error).message },
        "cannot note the dead letter on the resource",
      );
    }
  };
}
