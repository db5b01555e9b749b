import type { ManagedKindProvider } from "../api/external.ts";
import { bucketProvider } from "./aws/s3-bucket.ts";
import { queueProvider } from "./aws/sqs-queue.ts";

/** Every managed kind driftless reconciles: adding a kind is one file plus one line here. */
export const managedKinds: ManagedKindProvider[] = [
  queueProvider as ManagedKindProvider,
  bucketProvider as ManagedKindProvider,
];
