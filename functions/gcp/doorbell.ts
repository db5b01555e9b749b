// The GCP admission doorbell: its own small Cloud Run service (docs/deploy-gcp.md), not a Functions
// Framework function — the Functions Framework reads and parses every request body (up to 32 MiB) before
// any of our code runs. Here the path secret is checked and an announced body over the route's limit
// refused before a byte of the body is read (shared/doorbell/server.ts). Cloud Run terminates TLS and
// sends plain HTTP to $PORT. It holds no cluster access: at start it reads its environment and opens a
// Pub/Sub publisher, so a wrong-secret request costs the constant-time check and a 404.

import { googleKindOf } from "../../shared/api/googleapis/kind.ts";
import { createDoorbell } from "../../shared/doorbell/index.ts";
import { startDoorbellServer } from "../../shared/doorbell/server.ts";
import { createLogger } from "../../shared/log.ts";
import { logQueueEvents } from "../../shared/pipeline/functions.ts";
import { activatedGoogleSpecs } from "../../shared/providers/gcp/generic/activated.ts";
import { PubSubProducer } from "../../shared/queue/pubsub.ts";
import { PubSubRestTopic } from "../../shared/queue/pubsub-rest.ts";
import { servedTypes } from "../served-types.ts";
import { readGcpConfig } from "./config.ts";

const cfg = readGcpConfig();
const logger = createLogger({ level: cfg.LOG_LEVEL, name: "driftless-doorbell" });
// Without the work topic it has nowhere to ring: disabled (every request 404).
const producer = cfg.DRIFTLESS_PUBSUB_TOPIC
  ? new PubSubProducer({
      topic: new PubSubRestTopic({ topic: cfg.DRIFTLESS_PUBSUB_TOPIC, projectId: cfg.GCP_PROJECT_ID }),
      onEvent: logQueueEvents(logger),
    })
  : undefined;
const handle = createDoorbell({
  secret: cfg.DRIFTLESS_DOORBELL_SECRET,
  producer,
  // The kinds as data: the doorbell loads no provider and no cloud SDK.
  types: servedTypes(["gcp"], {
    claims: cfg.DRIFTLESS_CLAIMS,
    generated: activatedGoogleSpecs().map(googleKindOf),
  }),
  logger,
  ignoreUsers: cfg.DRIFTLESS_DOORBELL_IGNORE_USERS,
});
const server = await startDoorbellServer({
  handle,
  host: "0.0.0.0",
  port: Number(process.env.PORT ?? 8080),
});
logger.info({ port: server.port }, "doorbell serving");
// Cloud Run sends SIGTERM before stopping an instance: finish what is in flight, then exit.
process.once("SIGTERM", () => {
  void server.close().then(() => process.exit(0));
});
