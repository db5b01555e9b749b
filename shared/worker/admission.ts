// The doorbell's admission wait: admission runs before the write it reports is stored, so a doorbell
// message is acted on only once that write is stored (or has had its time).
import type { ResourceKey } from "../reconciler/contract.ts";
import {
  ADMISSION_INLINE_WAIT_WINDOW_MS,
  ADMISSION_INLINE_WAITS_MS,
  ADMISSION_RECHECK_MS,
  ADMISSION_WAIT_MS,
} from "./constants.ts";
import { queueAgeMs, type WorkItem } from "./message.ts";

export interface AdmissionWaitOptions {
  /** The stored object's resourceVersion (undefined: it does not exist). */
  storedVersion?: ((key: ResourceKey) => Promise<string | undefined>) | undefined;
  /** What a doorbell message found of its write: stored, waited (in the worker), requeued. */
  metrics?: { admissionWait?(result: "stored" | "waited" | "requeued"): void } | undefined;
}

/**
 * Whether the write a doorbell message reports is still to be stored — the object still has the
 * resourceVersion it had before (or still does not exist, for a create) and the message is young — and
 * if so, when to look again.
 */
export async function admittedWritePending(
  item: Pick<WorkItem, "key" | "admitted">,
  opts: AdmissionWaitOptions,
  now: () => number,
): Promise<number | undefined> {
  const { admitted, key } = item;
  const read = opts.storedVersion;
  if (!admitted || !read) return undefined;
  const pending = async () => {
    const stored = await read(key);
    return admitted.before === "" ? stored === undefined : stored === admitted.before;
  };
  const age = queueAgeMs({ at: admitted.at }, now());
  if (age === undefined || age >= ADMISSION_WAIT_MS) return undefined;
  // Called on the hook's object: metrics sinks are classes with private state.
  const report = (result: "stored" | "waited" | "requeued") => opts.metrics?.admissionWait?.(result);
  if (!(await pending())) {
    report("stored");
    return undefined;
  }
  // Usually the write is stored a few milliseconds after admission: a fresh message looks again here
  // before it goes back to the queue, whose shortest delay is a second on SQS and ten on Pub/Sub.
  if (age < ADMISSION_INLINE_WAIT_WINDOW_MS) {
    for (const ms of ADMISSION_INLINE_WAITS_MS) {
      await new Promise((r) => setTimeout(r, ms));
      if (!(await pending())) {
        report("waited");
        return undefined;
      }
    }
  }
  report("requeued");
  return Math.max(ADMISSION_RECHECK_MS, queueAgeMs({ at: admitted.at }, now()) ?? 0);
}
