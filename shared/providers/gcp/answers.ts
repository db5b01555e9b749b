// Answers that are not the Google API's, for the SDK client that does not go through GoogleRestClient: the
// Pub/Sub client (gRPC, which an HTTP/1 page answers only with a transport error).
import { type Answer, endpointMismatch } from "../answers.ts";

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
