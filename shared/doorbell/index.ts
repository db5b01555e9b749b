// The doorbell, assembled once per container: the admission route (and, with a resolver, the Event
// Grid route) behind the path secret, over one queue producer. Every platform adapter (Lambda Function
// URL, Cloud Functions HTTP, the local HTTPS server of `driftless run`) calls the function this returns.
import type { ResourceType } from "../api/meta.ts";
import { cloudEventsHandshakeHeaders, handleEventGridRequest } from "../cloud-events/event-grid.ts";
import type { CloudEventResolver } from "../cloud-events/resolve.ts";
import type { Kube } from "../kube/client.ts";
import type { Logger } from "../pipeline/common.ts";
import type { QueueProducer } from "../queue/port.ts";
import { type AdmissionVerdict, handleAdmissionReview } from "./admission.ts";
import {
  type DoorbellRequest,
  type DoorbellResponse,
  handleDoorbellHttp,
  routeOf,
  secretProblem,
} from "./http.ts";
import { handleInUseReview } from "./in-use.ts";
import { KeyRateLimiter } from "./rate-limit.ts";

export interface DoorbellSetup {
  /** The path secret; without a usable one every request is answered 404 (and this is logged once). */
  secret: string | undefined;
  /** The work queue; without one (no queue configured) the doorbell has nowhere to ring: disabled, 404. */
  producer: Pick<QueueProducer, "send"> | undefined;
  /** The kinds this deployment serves (worker.ts typesOf). */
  types: readonly ResourceType[];
  logger: Logger;
  ignoreUsers?: readonly string[] | undefined;
  /** Event Grid deliveries are resolved to keys with it (cloud events on). */
  resolver?: Pick<CloudEventResolver, "armResource"> | undefined;
  limiter?: KeyRateLimiter | undefined;
  /** With the cluster at hand (`driftless run`), the in-use guard is served too (/<secret>/in-use). */
  kube?: Kube | undefined;
}

export type Doorbell = ((req: DoorbellRequest) => Promise<DoorbellResponse>) & {
  /** What the admission route did, by verdict, since it was made (tests, the bench, debugging). */
  verdicts(): Partial<Record<AdmissionVerdict, number>>;
  /**
   * The largest body the route a path names takes, or undefined for a path that is answered a bare 404 (a
   * wrong or missing secret, an unknown route): a server asks before reading any body.
   */
  bodyLimit(path: string): number | undefined;
};

export function createDoorbell(setup: DoorbellSetup): Doorbell {
  const { resolver, producer } = setup;
  const problem = producer ? secretProblem(setup.secret) : "no work queue is configured";
  if (problem) setup.logger.warn({ problem }, "doorbell disabled: every request is answered 404");
  const limiter = setup.limiter ?? new KeyRateLimiter();
  // Never called while disabled: handleDoorbellHttp answers 404 before any route without a secret.
  const queue: Pick<QueueProducer, "send"> = producer ?? {
    send: () => Promise.reject(new Error("the doorbell has no work queue")),
  };
  const counts: Partial<Record<AdmissionVerdict, number>> = {};
  const routes = {
    secret: problem ? undefined : setup.secret,
    logger: setup.logger,
    admit: async (body: unknown) => {
      const out = await handleAdmissionReview(
        {
          producer: queue,
          types: setup.types,
          logger: setup.logger,
          ignoreUsers: setup.ignoreUsers,
          limiter,
        },
        body,
      );
      if (out.verdict) counts[out.verdict] = (counts[out.verdict] ?? 0) + 1;
      return out;
    },
    ...(setup.kube
      ? {
          inUse: (body: unknown) =>
            handleInUseReview({ kube: setup.kube as Kube, types: setup.types, logger: setup.logger }, body),
        }
      : {}),
    ...(resolver
      ? {
          eventsAzure: (body: unknown) =>
            handleEventGridRequest({ resolver, producer: queue, logger: setup.logger }, body),
          eventsAzureHandshake: cloudEventsHandshakeHeaders,
        }
      : {}),
  };
  return Object.assign((req: DoorbellRequest) => handleDoorbellHttp(routes, req), {
    verdicts: () => ({ ...counts }),
    bodyLimit: (path: string) => routeOf(routes, path)?.limit,
  });
}
