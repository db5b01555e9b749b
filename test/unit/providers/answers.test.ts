// Endpoints that answer, but not in the API's language, are named as such for Azure Resource Manager and
// the Google REST APIs (the AWS SDKs' case is in aws-home.test.ts): an HTML 404 must never read as "not found".
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThroughClient } from "google-auth-library";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EndpointMismatchError } from "../../../shared/providers/answers.ts";
import { armAnswers } from "../../../shared/providers/azure/answers.ts";
import { GoogleRestClient } from "../../../shared/providers/gcp/google-rest.ts";

let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(404, { "content-type": "text/html" }).end("<!DOCTYPE html><title>Not Found</title>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe("an endpoint that does not speak the API", () => {
  it("Google REST: an HTML 404 is an EndpointMismatchError naming the endpoint, not a not-found", async () => {
    const client = new GoogleRestClient(url, new PassThroughClient());
    const err = await client
      .request("GET", "/compute/v1/projects/p/global/networks/n")
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    expect((err as Error).message).toBe(
      `the endpoint ${url} does not speak the Google Cloud REST API: it answered HTTP 404, Content-Type text/html, starting "<!DOCTYPE html><title>Not Found</title>"; the ProviderConfig's spec.endpoint (sql, compute, serviceNetworking) must point to a server of that API, or be removed to reach Google itself`,
    );
  });

  it("Azure Resource Manager: the pipeline policy refuses an HTML answer and passes JSON through", async () => {
    const { policy } = armAnswers("https://127.0.0.1:9443");
    const answer = (contentType: string, bodyAsText: string) => async () => ({
      status: 404,
      headers: { get: (n: string) => (n === "content-type" ? contentType : undefined) },
      bodyAsText,
    });
    const err = await policy
      .sendRequest({}, answer("text/html; charset=utf-8", "<html>nginx</html>"))
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(EndpointMismatchError);
    expect((err as Error).message).toContain(
      "the endpoint https://127.0.0.1:9443 does not speak the Azure Resource Manager API",
    );
    expect((err as Error).message).toContain("HTTP 404, Content-Type text/html; charset=utf-8");
    expect((err as Error).message).toContain("spec.endpoint.resourceManager must point to Resource Manager");
    const json = await policy.sendRequest(
      {},
      answer("application/json", '{"error":{"code":"ResourceNotFound"}}'),
    );
    expect(json.status).toBe(404);
  });
});
