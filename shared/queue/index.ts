// Public API of the queue layer. Entry points import adapters by file (sqs.ts, pubsub.ts) when they
// want to keep the other cloud's SDK out of their bundle; this index re-exports everything.
export { type BackoffPolicy, backoffMs } from "./backoff.ts";
export {
  ConsumerStateError,
  InvalidMessageError,
  QueueError,
  QueueFullError,
  SendFailedError,
} from "./errors.ts";
export {
  type DeadLetter,
  MemoryQueue,
  type MemoryQueueOptions,
  type MemoryQueueStats,
} from "./memory.ts";
export {
  type BatchItem as DriftBatchItem,
  type BatchPage,
  type DecodeResult,
  type DriftBatch,
  decodeMessage,
  encodedBytes,
  encodeMessage,
  MAX_BATCH_ITEMS,
  MAX_MESSAGE_BYTES,
  MESSAGE_VERSION,
  makeMessage,
  messageKey,
  type ObjectRef,
  REASONS,
  type ReconcileMessage,
  type ReconcileReason,
  validateMessage,
} from "./message.ts";
export {
  DONE,
  type HandlerOutcome,
  type MessageHandler,
  type QueueConsumer,
  type QueueEvent,
  type QueueEventSink,
  type QueueProducer,
  type ReceivedMessage,
  requeueAfter,
  retryWith,
  type SendFailure,
  type SendOptions,
  type SendResult,
} from "./port.ts";
export {
  decodePubSubMessage,
  decodePubSubPushEvent,
  PUBSUB_NOT_BEFORE_ATTRIBUTE,
  type PubSubDecodeResult,
  PubSubProducer,
  type PubSubProducerOptions,
} from "./pubsub.ts";
export {
  decodeSqsRecord,
  moveToSqsDeadLetter,
  requeueSqsMessage,
  type SqsDeadLetterInput,
  type SqsDecodeResult,
  SqsProducer,
  type SqsQueueRef,
  type SqsRecordLike,
  type SqsRequeueInput,
  sqsDeduplicationId,
} from "./sqs.ts";
