// Answers that are not AWS's (an HTML page, another service) as what they are, for every AWS SDK client.
import type { DeserializeMiddleware, InitializeMiddleware } from "@smithy/types";
import { type Answer, endpointMismatch, isHtml } from "../answers.ts";

interface ResponseShape {
  statusCode?: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const contentTypeOf = (res: ResponseShape) =>
  Object.entries(res.headers ?? {}).find(([k]) => k.toLowerCase() === "content-type")?.[1];

/** A response body (a Node stream, bytes or text) as bytes, read whole. */
async function bytesOf(body: unknown): Promise<Uint8Array | undefined> {
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) return body;
  const stream = body as AsyncIterable<Uint8Array> | undefined;
  if (!stream || typeof stream[Symbol.asyncIterator] !== "function") return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** The part of an SDK client's middleware stack the checks go into. */
export interface AnswerStack {
  add(
    m: DeserializeMiddleware<object, object>,
    o: { step: "deserialize"; priority: "low"; name: string },
  ): void;
  add(
    m: InitializeMiddleware<object, object>,
    o: { step: "initialize"; priority: "high"; name: string },
  ): void;
}

/**
 * Adds to an SDK client: an HTML answer, or one the SDK could not parse as AWS's, becomes an EndpointMismatchError
 * naming the endpoint, what it answered and what the ProviderConfig must point to.
 */
export function checkAwsAnswers(stack: AnswerStack, cfg: { endpoint?: string; region: string }): void {
  const mismatch = (service: string | undefined, answer: Answer, cause?: unknown) => {
    const api = `AWS ${service?.replace(/Client$/, "") ?? ""} API`.replace("  ", " ");
    return endpointMismatch(
      cfg.endpoint ?? `of the ${api} in ${cfg.region}`,
      api,
      answer,
      cfg.endpoint
        ? "the ProviderConfig's spec.endpoint.url must point to an endpoint that serves every AWS API its kinds call (generated kinds: the Cloud Control API), or be removed to reach AWS itself"
        : "check the region and the network path to AWS (a proxy may be answering instead)",
      cause,
    );
  };
  // Nearest the wire: an HTML page is refused before a parser reads it, with its first bytes.
  const raw: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
    const out = await next(args);
    const res = out.response as ResponseShape;
    const contentType = contentTypeOf(res);
    if (contentType && isHtml({ contentType })) {
      // moto labels empty and XML error answers text/html too (a HEAD of a missing bucket): only an HTML
      // page is another endpoint's; anything else goes back to the SDK's parser, byte for byte.
      const body = await bytesOf(res.body);
      if (isHtml({ body })) throw mismatch(context.clientName, { status: res.statusCode, contentType, body });
      res.body = body ?? new Uint8Array();
    }
    return out;
  };
  // Outermost: any other answer the SDK could not parse (no body left to quote by then).
  const unparsed: InitializeMiddleware<object, object> = (next, context) => async (args) => {
    try {
      return await next(args);
    } catch (err) {
      const e = err as { message?: unknown; $response?: ResponseShape };
      const res = e?.$response;
      if (!res || typeof e.message !== "string" || !e.message.includes("Deserialization error")) throw err;
      throw mismatch(context.clientName, { status: res.statusCode, contentType: contentTypeOf(res) }, err);
    }
  };
  stack.add(raw, { step: "deserialize", priority: "low", name: "driftlessHtmlAnswers" });
  stack.add(unparsed, { step: "initialize", priority: "high", name: "driftlessUnparsedAnswers" });
}
