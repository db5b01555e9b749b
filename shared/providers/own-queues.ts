// The queues and topics driftless itself consumes from and dead-letters to. A managed resource naming one
// (crossplane.io/external-name) would import it and let a tenant change or delete every tenant's work
// queue, whatever IAM allows: the Queue, Topic and Subscription clients refuse such names before any call.
import { type ExternalClient, InvalidSpecError } from "../api/external.ts";

/** The clouds whose queue kinds the functions consume from: AWS SQS, GCP Pub/Sub. */
export type QueueCloud = "aws" | "gcp";

/** The stack's own queues, topics and subscriptions per cloud, as URLs, ARNs, resource paths or names. */
export type OwnQueues = Readonly<Record<QueueCloud, readonly string[]>>;

export const NO_OWN_QUEUES: OwnQueues = { aws: [], gcp: [] };

/** The own queues by name (queueIdOf), the first listed per name: every call of a queue kind asks. */
let configured: Readonly<Record<QueueCloud, ReadonlyMap<string, string>>> = {
  aws: new Map(),
  gcp: new Map(),
};

const byId = (refs: readonly string[]): ReadonlyMap<string, string> => {
  const ids = new Map<string, string>();
  for (const ref of refs) {
    const id = queueIdOf(ref);
    if (!ids.has(id)) ids.set(id, ref);
  }
  return ids;
};

/** Sets the stack's own queues (the edge, once, from its typed config; tests). */
export function setOwnQueues(own: Partial<OwnQueues>): void {
  configured = { aws: byId(own.aws ?? []), gcp: byId(own.gcp ?? []) };
}

/**
 * A queue's or topic's name without its location: the last segment of an SQS URL or ARN or of a Pub/Sub
 * resource path. Names are compared this way, so the same name in another account, region or project is
 * refused too (a rare false refusal, never a missed one).
 */
export const queueIdOf = (ref: string): string => {
  const t = ref.trim();
  return t.slice(Math.max(t.lastIndexOf("/"), t.lastIndexOf(":")) + 1);
};

/** The own queue `externalName` names on `cloud`, or undefined when it names none of them. */
export function ownQueueNamed(cloud: QueueCloud, externalName: string | undefined): string | undefined {
  const own = configured[cloud];
  if (!externalName || own.size === 0) return undefined;
  return own.get(queueIdOf(externalName));
}

function refuse(cloud: QueueCloud, externalName: string | undefined): void {
  const own = ownQueueNamed(cloud, externalName);
  if (own !== undefined)
    throw new InvalidSpecError(
      `external name ${JSON.stringify(externalName)} is driftless's own work queue, dead-letter queue or subscription (${own}): driftless never manages the queues it consumes from; choose another crossplane.io/external-name`,
    );
}

/** `client`, refusing every call (observe, batched observe, create, update, delete) on one of the stack's own queues. */
export function refusingOwnQueues<F, A>(
  cloud: QueueCloud,
  client: ExternalClient<F, A>,
): ExternalClient<F, A> {
  const { observeMany, home, list } = client;
  const checked = async <T>(name: string | undefined, call: () => Promise<T>): Promise<T> => {
    refuse(cloud, name);
    return call();
  };
  return {
    observe: (mr, name) => checked(name, () => client.observe(mr, name)),
    create: (mr, name) => checked(name, () => client.create(mr, name)),
    update: (mr, name, obs) => checked(name, () => client.update(mr, name, obs)),
    delete: (mr, name) => checked(name, () => client.delete(mr, name)),
    ...(home ? { home: (mr) => home.call(client, mr) } : {}),
    // `driftless import` never offers one of them.
    ...(list
      ? { list: async () => (await list.call(client)).filter((l) => !ownQueueNamed(cloud, l.externalName)) }
      : {}),
    ...(observeMany
      ? {
          // Own names get their refusal alone; the rest are observed together as before.
          observeMany: async (items) => {
            const refusals = items.map(({ externalName }) => {
              try {
                refuse(cloud, externalName);
                return undefined;
              } catch (err) {
                return err as Error;
              }
            });
            const rest = items.filter((_, i) => refusals[i] === undefined);
            const observed = rest.length > 0 ? await observeMany.call(client, rest) : [];
            let next = 0;
            return refusals.map(
              (r) => r ?? observed[next++] ?? new Error("batched observe returned too few results"),
            );
          },
        }
      : {}),
  };
}
