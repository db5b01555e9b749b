// The worker's defaults, in one place (the functions and `driftless run` read them).

/** Reconciles at once within one invocation (a batch has at most 10 messages on SQS). */
export const DEFAULT_FUNCTION_CONCURRENCY = 8;
/** Time kept free before the platform's deadline to settle messages (visibility changes, deletes). */
export const DEFAULT_DEADLINE_MARGIN_MS = 5_000;

/**
 * How long a doorbell message waits for the write it reports to be stored. Admission runs before the
 * write is persisted and the write may still fail (a later webhook, a conflict, validation): after this
 * long (the API server's webhook timeout is 30 s at most) the key is reconciled whatever it holds.
 */
export const ADMISSION_WAIT_MS = 30_000;
/**
 * How soon a doorbell message whose write has not landed yet (after the in-worker waits below) is looked
 * at again, at first: then after as long as it has waited so far (doubling), so a message about a write
 * that never comes — refused later, or a forged call — costs about ten GETs in ADMISSION_WAIT_MS.
 */
export const ADMISSION_RECHECK_MS = 1_000;
/** A doorbell message younger than this waits in the worker (ADMISSION_INLINE_WAITS_MS) first. */
export const ADMISSION_INLINE_WAIT_WINDOW_MS = 1_000;
/** The in-worker waits before a young doorbell message whose write is not stored yet is requeued. */
export const ADMISSION_INLINE_WAITS_MS = [25, 50, 100, 200] as const;
