// Answers that are not Resource Manager's (an HTML page, a proxy's error page) as what they are, for every
// ARM client: otherwise an HTML 404 would read as "resource not found" and an HTML 200 as an empty body.
import type { RequestPolicyFactory } from "@azure/storage-blob";
import { noteRequestId } from "../../api/request-ids.ts";
import { endpointMismatch, isHtml } from "../answers.ts";

const PUBLIC_ARM = "https://management.azure.com";

/** A redirect (never followed: config.ts NO_REDIRECTS) is no answer of the API's. 304 is a cache answer. */
const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

interface Response {
  status: number;
  headers: { get(name: string): string | undefined };
  bodyAsText?: string | null;
}

/** A per-call pipeline policy (the shape every @azure/arm-* client's `additionalPolicies` takes). */
export interface ArmAnswersPolicy {
  position: "perCall";
  policy: {
    name: string;
    sendRequest<Q, R extends Response>(req: Q, next: (req: Q) => Promise<R>): Promise<R>;
  };
}

/** Refuses an HTML answer from Resource Manager, naming the endpoint and what the ProviderConfig must point to. */
export function armAnswers(endpoint: string | undefined): ArmAnswersPolicy {
  return {
    position: "perCall",
    policy: {
      name: "driftlessArmAnswers",
      async sendRequest(req, next) {
        const res = await next(req);
        // The change log's request id (shared/api/request-ids.ts).
        noteRequestId(res.headers.get("x-ms-request-id"));
        const contentType = res.headers.get("content-type");
        if ((contentType && isHtml({ contentType })) || isRedirect(res.status))
          throw endpointMismatch(
            endpoint ?? PUBLIC_ARM,
            "Azure Resource Manager API",
            { status: res.status, contentType, body: res.bodyAsText ?? undefined },
            endpoint
              ? "the ProviderConfig's spec.endpoint.resourceManager must point to Resource Manager (or a server of its API), or be removed to reach Azure itself"
              : "check the network path to Azure (a proxy may be answering instead)",
          );
        return res;
      },
    },
  };
}

/** A Blob pipeline response, or the one a thrown RestError carries. */
type BlobAnswer = Response & { headers: { get(name: string): string | null | undefined } };

/**
 * The same refusal for the Blob service (its own pipeline takes request policy factories): without it an HTML
 * page answering 200 reads as "the container exists" and a 404 page as "it does not".
 */
export function blobAnswers(endpoint: string): RequestPolicyFactory {
  return {
    create: (next) => ({
      async sendRequest(req) {
        // An error status reaches here already thrown (with its response): both are looked at.
        const refuse = (res: BlobAnswer | undefined, cause?: unknown) => {
          const contentType = res?.headers.get("content-type");
          if (res && ((contentType && isHtml({ contentType })) || isRedirect(res.status)))
            throw endpointMismatch(
              endpoint,
              "Azure Blob Storage API",
              { status: res.status, contentType, body: res.bodyAsText ?? undefined },
              "the ProviderConfig's spec.endpoint.blob must point to the storage account's Blob service (or Azurite), or be removed to reach Azure itself",
              cause,
            );
        };
        let res: Awaited<ReturnType<typeof next.sendRequest>>;
        try {
          res = await next.sendRequest(req);
        } catch (err) {
          refuse((err as { response?: BlobAnswer }).response, err);
          throw err;
        }
        refuse(res);
        return res;
      },
    }),
  };
}
