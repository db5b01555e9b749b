import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  paginateListQueues,
  type QueueAttributeName,
  SetQueueAttributesCommand,
  SQSClient,
  TagQueueCommand,
  UntagQueueCommand,
} from "@aws-sdk/client-sqs";
import type { z } from "zod";
import { Queue, type QueueAtProvider, type QueueForProvider } from "../../api/aws/sqs.ts";
import { firstName, lastSegment, stringAt } from "../../api/cloud-events.ts";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalListing,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { refusingOwnQueues } from "../own-queues.ts";
import { awsClientConfig, awsErrorCode, ClientCache, regionOfArn, sdkOptions } from "./config.ts";
import { awsHome } from "./home.ts";

type F = z.infer<typeof QueueForProvider>;
type A = z.infer<typeof QueueAtProvider>;
type MR = ManagedResource<F, A>;

// Errors are classified in the client's middleware (ClientCache, config.ts): each method calls the SDK directly.
const clients = new ClientCache((c) => new SQSClient(sdkOptions(c)));

// forProvider field ↔ SQS attribute (numbers travel as strings on the wire).
const NUMERIC = {
  delaySeconds: "DelaySeconds",
  maximumMessageSize: "MaximumMessageSize",
  messageRetentionSeconds: "MessageRetentionPeriod",
  receiveWaitTimeSeconds: "ReceiveMessageWaitTimeSeconds",
  visibilityTimeoutSeconds: "VisibilityTimeout",
} as const satisfies Partial<Record<keyof F, string>>;

const isMissing = (err: unknown) =>
  ["QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"].includes(awsErrorCode(err));

/** `fifo`: whether the queue is (or is to be) a FIFO queue. */
function attributesOf(fp: F, forCreate: boolean, fifo = fp.fifoQueue ?? false): Record<string, string> {
  // Never accepted silently: a standard queue cannot hold it, so it would be drift forever.
  if (fp.contentBasedDeduplication && !fifo)
    throw new InvalidSpecError("contentBasedDeduplication needs a FIFO queue (fifoQueue: true)");
  const attrs: Record<string, string> = {};
  for (const [field, attr] of Object.entries(NUMERIC)) {
    const v = fp[field as keyof typeof NUMERIC];
    if (v !== undefined) attrs[attr] = String(v);
  }
  if (forCreate && fp.fifoQueue) attrs.FifoQueue = "true";
  if (fifo && fp.contentBasedDeduplication !== undefined) {
    attrs.ContentBasedDeduplication = String(fp.contentBasedDeduplication);
  }
  attrs.RedrivePolicy = fp.redrivePolicy ? JSON.stringify(fp.redrivePolicy) : "";
  if (forCreate && !fp.redrivePolicy) delete attrs.RedrivePolicy;
  // Sent whenever set (an attribute left out of SetQueueAttributes keeps its value in SQS, not in moto).
  if (fp.policy) attrs.Policy = JSON.stringify(fp.policy);
  const allow = fp.redriveAllowPolicy;
  if (allow) {
    // SQS's rule (SetQueueAttributes, RedriveAllowPolicy): source queues are named with byQueue, and only then.
    if ((allow.redrivePermission === "byQueue") !== (allow.sourceQueueArns !== undefined))
      throw new InvalidSpecError(
        "redriveAllowPolicy.sourceQueueArns is required with redrivePermission byQueue and allowed only with it",
      );
    attrs.RedriveAllowPolicy = JSON.stringify(allow);
  }
  return attrs;
}

/** A JSON attribute's object, or undefined when absent or not an object (never thrown on a cloud's odd value). */
function jsonAttribute(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function observedOf(
  fp: F,
  attrs: Record<string, string>,
  region: string,
  tags: Record<string, string> | undefined,
): Partial<F> {
  const o: Partial<F> = { region, fifoQueue: attrs.FifoQueue === "true" };
  for (const [field, attr] of Object.entries(NUMERIC)) {
    if (attrs[attr] !== undefined) o[field as keyof typeof NUMERIC] = Number(attrs[attr]);
  }
  if (attrs.FifoQueue === "true") o.contentBasedDeduplication = attrs.ContentBasedDeduplication === "true";
  // A standard queue never deduplicates: reported only when the spec manages it, so it is not late-initialized.
  else if (fp.contentBasedDeduplication !== undefined) o.contentBasedDeduplication = false;
  if (attrs.RedrivePolicy) {
    const rp = JSON.parse(attrs.RedrivePolicy) as {
      deadLetterTargetArn: string;
      maxReceiveCount: number | string;
    };
    o.redrivePolicy = {
      deadLetterTargetArn: rp.deadLetterTargetArn,
      maxReceiveCount: Number(rp.maxReceiveCount),
    };
  }
  const policy = jsonAttribute(attrs.Policy);
  if (policy) o.policy = policy;
  const allow = jsonAttribute(attrs.RedriveAllowPolicy);
  if (allow && typeof allow.redrivePermission === "string") {
    o.redriveAllowPolicy = {
      redrivePermission: allow.redrivePermission as NonNullable<F["redriveAllowPolicy"]>["redrivePermission"],
      ...(Array.isArray(allow.sourceQueueArns) ? { sourceQueueArns: allow.sourceQueueArns.map(String) } : {}),
    };
  }
  if (tags) o.tags = tags;
  return o;
}

/** The regional SDK client of a queue, with the region it serves. */
interface Regional {
  sqs: SQSClient;
  region: string;
}

/**
 * The queue kind's ExternalClient. Each operation first gets the (cached) client of the queue's region,
 * then calls the SDK itself: the engine reaches the SDK through this one file.
 */
class QueueClient implements ExternalClient<F, A> {
  /** The client of a queue's region; without a queue, of the ProviderConfig's region. */
  readonly #clientFor: (mr: MR | undefined) => Promise<Regional>;
  constructor(clientFor: (mr: MR | undefined) => Promise<Regional>) {
    this.#clientFor = clientFor;
  }

  async #url(sqs: SQSClient, mr: MR, name: string): Promise<string | undefined> {
    // The URL from the last observation saves a GetQueueUrl call on every in-sync reconcile.
    const known = mr.status?.atProvider?.url;
    if (known?.endsWith(`/${name}`)) return known;
    try {
      return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** Every queue of the ProviderConfig's region, page by page (`driftless import`): its name, from its URL. */
  async list(): Promise<ExternalListing[]> {
    const { sqs, region } = await this.#clientFor(undefined);
    const out: ExternalListing[] = [];
    for await (const page of paginateListQueues({ client: sqs, pageSize: 1000 }, {}))
      for (const url of page.QueueUrls ?? [])
        out.push({ externalName: url.slice(url.lastIndexOf("/") + 1), forProvider: { region } });
    return out;
  }

  async observe(mr: MR, name: string | undefined): Promise<ExternalObservation<F, A>> {
    const { sqs, region } = await this.#clientFor(mr);
    if (!name) return { resourceExists: false };
    const url = await this.#url(sqs, mr, name);
    if (!url) return { resourceExists: false };
    let attrs: Record<string, string>;
    try {
      const out = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["All" as QueueAttributeName] }),
      );
      attrs = out.Attributes ?? {};
    } catch (err) {
      if (isMissing(err)) return { resourceExists: false };
      throw err;
    }
    // Tags cost a second call: read them only when the spec manages them.
    const tags =
      mr.spec.forProvider.tags !== undefined
        ? ((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags ?? {})
        : undefined;
    const arn = attrs.QueueArn ?? "";
    return {
      resourceExists: true,
      observed: observedOf(mr.spec.forProvider, attrs, regionOfArn(arn) ?? region, tags),
      atProvider: { arn, url },
      availability: "Available",
      connectionDetails: { url, arn },
    };
  }

  async create(mr: MR, name: string | undefined) {
    const fp = mr.spec.forProvider;
    const { sqs } = await this.#clientFor(mr);
    if (!name) throw new Error("a queue needs a name (crossplane.io/external-name)");
    const out = await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: attributesOf(fp, true),
        ...(fp.tags && Object.keys(fp.tags).length > 0 ? { tags: fp.tags } : {}),
      }),
    );
    const url = out.QueueUrl ?? "";
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }),
    );
    return { connectionDetails: { url, arn: attrs.Attributes?.QueueArn ?? "" } };
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const { sqs } = await this.#clientFor(mr);
    const url = obs.atProvider?.url ?? (await this.#url(sqs, mr, name));
    if (!url) throw new Error(`queue ${name} disappeared during update`);
    const attrs = attributesOf(fp, false, fp.fifoQueue ?? obs.observed?.fifoQueue ?? false);
    // An unset redrive policy that the cloud does not have either needs no write.
    if (!fp.redrivePolicy && !obs.observed?.redrivePolicy) delete attrs.RedrivePolicy;
    if (Object.keys(attrs).length > 0)
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attrs }));
    if (fp.tags !== undefined) {
      const current = obs.observed?.tags ?? {};
      const removed = Object.keys(current).filter((k) => !(k in (fp.tags ?? {})));
      if (removed.length > 0) await sqs.send(new UntagQueueCommand({ QueueUrl: url, TagKeys: removed }));
      const changed = Object.fromEntries(Object.entries(fp.tags).filter(([k, v]) => current[k] !== v));
      if (Object.keys(changed).length > 0)
        await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: changed }));
    }
    return {};
  }

  async delete(mr: MR, name: string) {
    const { sqs } = await this.#clientFor(mr);
    const url = await this.#url(sqs, mr, name);
    if (!url) return;
    await deleted(() => sqs.send(new DeleteQueueCommand({ QueueUrl: url })), isMissing);
  }
}

export const queueProvider = defineProvider({
  definition: Queue,
  cloudEvents: {
    aws: {
      source: "aws.sqs",
      eventNames: ["CreateQueue", "DeleteQueue", "SetQueueAttributes", "TagQueue", "UntagQueue"],
      externalNames: (call) =>
        firstName(
          stringAt(call.requestParameters, "queueName"),
          lastSegment(stringAt(call.requestParameters, "queueUrl")),
        ),
    },
  },
  iam: [
    {
      sid: "ManagedQueues",
      actions: [
        "sqs:CreateQueue",
        "sqs:DeleteQueue",
        "sqs:GetQueueUrl",
        "sqs:GetQueueAttributes",
        "sqs:SetQueueAttributes",
        "sqs:ListQueueTags",
        "sqs:TagQueue",
        "sqs:UntagQueue",
      ],
      resources: ["arn:{partition}:sqs:*:{account}:{namePrefix}*"],
    },
  ],
  limitsEachRequest: true,
  async connect(ctx: ConnectContext<AwsProviderConfigSpec>) {
    // An existing queue is looked for where it lives (its ARN's region), so a changed spec.region is
    // reported as drift on an immutable field instead of creating a second queue elsewhere.
    const client = new QueueClient(async (mr) => {
      const cfg = await awsClientConfig(
        ctx,
        mr && (regionOfArn(mr.status?.atProvider?.arn) ?? mr.spec.forProvider.region),
      );
      return { sqs: clients.get(cfg), region: cfg.region };
    });
    // Where the spec points, not where the queue was found: the engine refuses a difference.
    const home = (mr: MR) => awsHome(ctx, mr.spec.forProvider.region);
    return refusingOwnQueues("aws", Object.assign(client, { home }));
  },
});
