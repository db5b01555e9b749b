// Lambda entry point of the admission doorbell: its own small function behind the Function URL the API
// server rings (shared/doorbell), with reserved concurrency (serverless.yml). It holds no cluster access
// and reads no secret store: at init it only reads its environment, so a request with a wrong path secret
// costs the constant-time check and a 404 — no Secrets Manager read, no API-server or SQS call.
import { SQSClient } from "@aws-sdk/client-sqs";
import { awsccKindOf } from "../../shared/api/awscc/kind.ts";
import { createDoorbell } from "../../shared/doorbell/index.ts";
import {
  fromLambdaUrl,
  type LambdaUrlEvent,
  type LambdaUrlResult,
  toLambdaUrl,
} from "../../shared/doorbell/platforms.ts";
import { createLogger } from "../../shared/log.ts";
import { activatedAwsccSpecs } from "../../shared/providers/awscc/activated.ts";
import { SqsProducer } from "../../shared/queue/sqs.ts";
import { servedTypes } from "../served-types.ts";
import { readAwsConfig } from "./config.ts";

const cfg = readAwsConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-doorbell" });
// Without a queue URL it has nowhere to ring: disabled (every request 404).
const doorbell = createDoorbell({
  secret: cfg.DRIFTLESS_DOORBELL_SECRET,
  producer: cfg.DRIFTLESS_SQS_QUEUE_URL
    ? new SqsProducer({ client: new SQSClient({}), queueUrl: cfg.DRIFTLESS_SQS_QUEUE_URL })
    : undefined,
  // The kinds as data: the doorbell loads no provider and no cloud SDK but its queue's.
  types: servedTypes(["aws"], {
    claims: cfg.DRIFTLESS_CLAIMS,
    generated: activatedAwsccSpecs().map(awsccKindOf),
  }),
  logger,
  ignoreUsers: cfg.DRIFTLESS_DOORBELL_IGNORE_USERS,
});

export async function handler(event: LambdaUrlEvent): Promise<LambdaUrlResult> {
  return toLambdaUrl(await doorbell(fromLambdaUrl(event)));
}
