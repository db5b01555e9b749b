// Error classes of the queue port: callers branch on the class, never on message text.
import { namedError } from "../named-error.ts";

/** Base class of every error the queue layer raises or reports. */
export class QueueError extends namedError("QueueError", Error) {}

/** A message that does not satisfy the message contract (raised by `encodeMessage`). */
export class InvalidMessageError extends namedError("InvalidMessageError", QueueError) {}

/** The memory queue holds `maxPending` keys already; the drift sweep catches the dropped key up later. */
export class QueueFullError extends namedError("QueueFullError", QueueError) {}

/** The queue service refused one message of a batch (SQS batch entry failure, Pub/Sub publish error). */
export class SendFailedError extends namedError("SendFailedError", QueueError) {
  readonly code: string | undefined;
  /** True when the request itself was wrong (SQS `SenderFault`): retrying the same message will not help. */
  readonly senderFault: boolean;

  constructor(message: string, opts: { code?: string; senderFault?: boolean; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = opts.code;
    this.senderFault = opts.senderFault ?? false;
  }
}

/** The consumer was used against its life cycle (started twice, started after stop). */
export class ConsumerStateError extends namedError("ConsumerStateError", QueueError) {}
