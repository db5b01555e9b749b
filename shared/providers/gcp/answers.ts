// Answers that are not the Google API's (an HTML page, a proxy's error page) as what they are, for the SDK
// clients that do not go through GoogleRestClient: the Cloud Storage client (an HTML 200 would read as "the
// bucket exists", an HTML 404 as "it does not") and the Pub/Sub client (gRPC, which an HTTP/1 page answers
// only with a transport error).
import type { Storage } from "@google-cloud/storage";
import { type Answer, endpointMismatch, isHtml } from "../answers.ts";

type Make = Storage["makeAuthenticatedRequest"];
type Callback = (err: Error | null, body?: unknown, res?: unknown) => void;

const STORAGE_API = "Cloud Storage JSON API";
const STORAGE_POINT_TO =
  "the ProviderConfig's spec.endpoint.storage must point to a server of that API, or be removed to reach Google itself";

/** The status, content type and body of what an SDK callback got (its response, or the error's). */
function answerOf(err: Error | null, body: unknown, res: unknown): Answer {
  const r = (res ?? (err as { response?: unknown } | null)?.response) as
    | { statusCode?: number; headers?: Record<string, string | string[] | undefined>; body?: unknown }
    | undefined;
  const header = r?.headers?.["content-type"];
  return {
    status: r?.statusCode,
    contentType: Array.isArray(header) ? header[0] : header,
    body: typeof body === "string" ? body : r?.body,
  };
}

/**
 * Makes every JSON call of this Cloud Storage client refuse an HTML answer with an EndpointMismatchError
 * naming the endpoint. The SDK sends each call through its `makeAuthenticatedRequest` with a callback
 * (streams, which buckets never use, pass through untouched).
 */
export function refuseForeignStorageAnswers(storage: Storage, endpoint: string): Storage {
  const make = storage.makeAuthenticatedRequest;
  const checked = ((reqOpts: Parameters<Make>[0], optionsOrCallback?: unknown) => {
    if (typeof optionsOrCallback !== "function")
      return (make as (o: unknown, p?: unknown) => unknown)(reqOpts, optionsOrCallback);
    const callback = optionsOrCallback as Callback;
    return make(reqOpts, ((err: Error | null, body?: unknown, res?: unknown) => {
      const answer = answerOf(err, body, res);
      if (answer.contentType && isHtml({ contentType: answer.contentType }))
        return callback(endpointMismatch(endpoint, STORAGE_API, answer, STORAGE_POINT_TO), undefined, res);
      return callback(err, body, res);
    }) as Parameters<Make>[1] & Callback);
  }) as unknown as Make;
  storage.makeAuthenticatedRequest = Object.assign(checked, {
    getCredentials: make.getCredentials,
    authClient: make.authClient,
  });
  return storage;
}

const PUBSUB_POINT_TO =
  "the ProviderConfig's spec.endpoint.pubsub must point to a Pub/Sub gRPC server (or the emulator's host:port), or be removed to reach Google itself";
const PROBE_MS = 2_000;

/** gRPC's words for a peer that answered, but not with gRPC over HTTP/2 (a web server, an HTTP/1 proxy). */
const notGrpc = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  return (
    (code === 14 || code === 4) &&
    /Protocol error|Received HTTP status code|unexpected content-type/i.test(message)
  );
};

/**
 * For a Pub/Sub call that failed because its endpoint does not speak gRPC: one plain HTTP request to the
 * endpoint (2 s at most) learns what it is, and the failure becomes an EndpointMismatchError naming the
 * endpoint, its answer and the field to fix. Any other failure: undefined (the caller keeps its own error).
 */
export async function foreignPubSubAnswer(
  endpoint: string,
  plaintext: boolean,
  err: unknown,
): Promise<Error | undefined> {
  if (!notGrpc(err)) return undefined;
  let answer: Answer = {};
  try {
    const res = await fetch(`${plaintext ? "http" : "https"}://${endpoint}/`, {
      redirect: "manual",
      signal: AbortSignal.timeout(PROBE_MS),
    });
    const text = await res.text();
    answer = { status: res.status, contentType: res.headers.get("content-type") ?? undefined, body: text };
  } catch {
    // Nothing more to learn: the gRPC error already says the answer was not gRPC.
  }
  return endpointMismatch(endpoint, "Pub/Sub gRPC API", answer, PUBSUB_POINT_TO, err);
}
