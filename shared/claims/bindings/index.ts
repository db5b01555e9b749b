import type { ClassBinding } from "../binding.ts";
import { azureContainerBinding } from "./azure-container.ts";
import { azurePostgreSQLBinding } from "./azure-postgresql.ts";
import { cloudSqlInstanceBinding } from "./cloudsql-instance.ts";
import { gcsBucketBinding } from "./gcs-bucket.ts";
import { pubsubQueueBinding } from "./pubsub-queue.ts";
import { rdsInstanceBinding } from "./rds-instance.ts";
import { s3BucketBinding } from "./s3-bucket.ts";
import { sqsQueueBinding } from "./sqs-queue.ts";

/** Every class kind and how it serves its claims: adding a class is one file plus one line here. */
export const classBindings: readonly ClassBinding[] = [
  sqsQueueBinding,
  pubsubQueueBinding,
  s3BucketBinding,
  gcsBucketBinding,
  azureContainerBinding,
  rdsInstanceBinding,
  cloudSqlInstanceBinding,
  azurePostgreSQLBinding,
];
