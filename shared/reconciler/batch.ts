// Moved: the batch core is router.ts (the worker core), the ReconcileFn type is contract.ts. Kept so
// importers of this path still build.
export type { ReconcileFn } from "./contract.ts";
export {
  type BatchItem,
  type BatchItemResult,
  type MessageOutcome,
  outcomeOf,
  reconcileBatch,
} from "./router.ts";
