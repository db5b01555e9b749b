// The worker's errors, by class so callers branch on type, not on message text.
import { namedError } from "../named-error.ts";

/** Raised instead of starting a reconcile when the invocation is about to time out. */
export class DeadlineError extends namedError("DeadlineError", Error) {}

/** Pub/Sub: the message could not be reconciled; the subscription redelivers it with backoff. */
export class ReconcileFailedError extends namedError("ReconcileFailedError", Error) {}

/** Pub/Sub: not a failure, the resource is waiting (creating, deleting…); the retry policy's backoff is the delay. */
export class RequeueError extends namedError("RequeueError", Error) {
  readonly afterMs: number;
  constructor(message: string, afterMs: number) {
    super(message);
    this.afterMs = afterMs;
  }
}

/** Pub/Sub: a message that is not a valid reconcile message, with no dead-letter topic to copy it to. */
export class MalformedMessageError extends namedError("MalformedMessageError", Error) {}
