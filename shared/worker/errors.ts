// The worker's errors, by class so callers branch on type, not on message text.

/** Raised instead of starting a reconcile when the invocation is about to time out. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
}

/** Pub/Sub: the message could not be reconciled; the subscription redelivers it with backoff. */
export class ReconcileFailedError extends Error {
  override name = "ReconcileFailedError";
}

/** Pub/Sub: not a failure, the resource is waiting (creating, deleting…); the retry policy's backoff is the delay. */
export class RequeueError extends Error {
  override name = "RequeueError";
  readonly afterMs: number;
  constructor(message: string, afterMs: number) {
    super(message);
    this.afterMs = afterMs;
  }
}

/** Pub/Sub: a message that is not a valid reconcile message, with no dead-letter topic to copy it to. */
export class MalformedMessageError extends Error {
  override name = "MalformedMessageError";
}
