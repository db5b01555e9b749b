// Publishing to a Pub/Sub topic over its REST API (`projects.topics.publish`), the way every driftless function
// reaches its work topic: one HTTPS request per batch with google-auth-library's token, instead of the
// @google-cloud/pubsub client (gRPC, google-gax and the protos: ~2.5 MB of a function bundle). The emulator
// speaks the same REST API: PUBSUB_EMULATOR_HOST (the operator's environment, as the SDK reads it) sends the
// requests there, in plain HTTP and without a token.
import { GoogleAuth } from "google-auth-library";
import { SendFailedError } from "./errors.ts";

/** One message as `topics.publish` takes it (data as bytes; encoded to base64 here). */
export interface PubSubOutgoing {
  data: Buffer;
  attributes?: Record<string, string>;
  orderingKey?: string;
}

/** What publishes to one topic: the work topic's producer and the dead-letter copy use it. */
export interface PubSubPublisher {
  /** Publishes the messages in order, in one request per MAX_PUBLISH_MESSAGES; resolves to their ids. */
  publish(messages: readonly PubSubOutgoing[]): Promise<string[]>;
}

/** `topics.publish` takes at most 1,000 messages per request (and 10 MB; ours are a few hundred bytes). */
export const MAX_PUBLISH_MESSAGES = 1000;
const PRODUCTION = "https://pubsub.googleapis.com";
const SCOPE = "https://www.googleapis.com/auth/pubsub";
const TIMEOUT_MS = 10_000;
/** Attempts for an answer that may pass (429, 5xx, no answer): publishing twice is harmless (level-triggered). */
const ATTEMPTS = 3;

export interface PubSubRestOptions {
  /** Topic name or full resource name (`projects/P/topics/T`). */
  topic: string;
  /** The project of a short topic name; absent: the ambient identity's project. */
  projectId?: string | undefined;
  /** Environment to read PUBSUB_EMULATOR_HOST from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A topic published to over REST: Google's API with the ambient identity, or the emulator. */
export class PubSubRestTopic implements PubSubPublisher {
  readonly #base: string;
  readonly #auth: GoogleAuth | undefined;
  readonly #topic: string;
  readonly #projectId: string | undefined;
  #name: string | undefined;

  constructor(options: PubSubRestOptions) {
    const emulator = (options.env ?? process.env).PUBSUB_EMULATOR_HOST;
    this.#base = emulator ? `http://${emulator.replace(/^https?:\/\//, "").replace(/\/+$/, "")}` : PRODUCTION;
    this.#auth = emulator ? undefined : new GoogleAuth({ scopes: [SCOPE] });
    this.#topic = options.topic;
    this.#projectId = options.projectId;
  }

  /** The topic's full resource name (the ambient project is asked once, for a short name). */
  async name(): Promise<string> {
    if (this.#name) return this.#name;
    if (this.#topic.startsWith("projects/")) this.#name = this.#topic;
    else {
      const project = this.#projectId ?? (await this.#auth?.getProjectId());
      if (!project) throw new SendFailedError("no project for the Pub/Sub topic: set GCP_PROJECT_ID");
      this.#name = `projects/${project}/topics/${this.#topic}`;
    }
    return this.#name;
  }

  async publish(messages: readonly PubSubOutgoing[]): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < messages.length; i += MAX_PUBLISH_MESSAGES)
      ids.push(...(await this.#publishOnce(messages.slice(i, i + MAX_PUBLISH_MESSAGES))));
    return ids;
  }

  async #publishOnce(messages: readonly PubSubOutgoing[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const url = `${this.#base}/v1/${await this.name()}:publish`;
    const body = JSON.stringify({
      messages: messages.map((m) => ({
        data: m.data.toString("base64"),
        ...(m.attributes && Object.keys(m.attributes).length > 0 ? { attributes: m.attributes } : {}),
        ...(m.orderingKey ? { orderingKey: m.orderingKey } : {}),
      })),
    });
    let last: unknown;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, 100 * 4 ** (attempt - 2)));
      const headers = new Headers({ "content-type": "application/json", accept: "application/json" });
      if (this.#auth) for (const [k, v] of await this.#auth.getRequestHeaders(url)) headers.set(k, v);
      let res: Response;
      try {
        // The topic is the operator's, never a tenant's; still, a redirect is not Pub/Sub's answer.
        res = await fetch(url, {
          method: "POST",
          headers,
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (cause) {
        last = cause;
        continue;
      }
      const text = await res.text();
      if (res.ok) {
        const ids = (JSON.parse(text) as { messageIds?: unknown }).messageIds;
        if (Array.isArray(ids) && ids.length === messages.length) return ids.map(String);
        throw new SendFailedError(`Pub/Sub answered ${messages.length} messages with no message ids`);
      }
      last = new Error(`HTTP ${res.status}: ${errorMessage(text)}`);
      if (res.status !== 429 && res.status < 500) break;
    }
    throw new SendFailedError(`cannot publish to Pub/Sub topic ${await this.name()}`, { cause: last });
  }
}

/** Google's error message (`error.message`) of a Pub/Sub answer, else its status alone. */
function errorMessage(text: string): string {
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown; status?: unknown } }).error;
    return [m?.status, m?.message].filter((x) => typeof x === "string").join(": ") || "no error body";
  } catch {
    return "not a JSON answer";
  }
}
