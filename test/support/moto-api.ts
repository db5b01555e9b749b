// A service's own API on moto, for services the project has no SDK client for: the JSON protocols
// (X-Amz-Target), the query protocol (Action=…) and REST paths. moto routes by the signature's credential
// scope and checks no signature, so a fixed one with the service's name reaches the right backend.
import { env } from "./env.ts";

type Json = Record<string, unknown>;

export class MotoApiError extends Error {
  override name = "MotoApiError";
  readonly status: number;
  constructor(status: number, body: string) {
    super(`moto answered ${status}: ${body.slice(0, 300)}`);
    this.status = status;
  }
}

const headers = (service: string, extra: Record<string, string> = {}) => ({
  authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=0`,
  ...extra,
});

async function send(url: string, init: RequestInit): Promise<string> {
  const res = await fetch(url, init);
  const text = await res.text();
  if (!res.ok) throw new MotoApiError(res.status, text);
  return text;
}

/** A JSON-protocol call (`DynamoDB_20120810.DescribeTable`); `version` 1.0 or 1.1. */
export async function motoJson(service: string, target: string, body: Json, version = "1.1"): Promise<Json> {
  const text = await send(env("AWS_ENDPOINT_URL"), {
    method: "POST",
    headers: headers(service, {
      "x-amz-target": target,
      "content-type": `application/x-amz-json-${version}`,
    }),
    body: JSON.stringify(body),
  });
  return JSON.parse(text || "{}") as Json;
}

/** A query-protocol call; the answer's XML as text. */
export async function motoQuery(service: string, version: string, params: Record<string, string>) {
  return send(env("AWS_ENDPOINT_URL"), {
    method: "POST",
    headers: headers(service, { "content-type": "application/x-www-form-urlencoded" }),
    body: new URLSearchParams({ Version: version, ...params }).toString(),
  });
}

/** A REST GET (`/2013-04-01/hostedzone/Z1`); the body as text. */
export async function motoGet(service: string, path: string): Promise<string> {
  return send(`${env("AWS_ENDPOINT_URL").replace(/\/+$/, "")}${path}`, {
    method: "GET",
    headers: headers(service),
  });
}

/** The first `<name>…</name>` of an XML answer. */
export const xmlValue = (xml: string, name: string) =>
  new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];

/** Whether a call fails as the service says "not found" (its 4xx), or answers. */
export async function gone(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return false;
  } catch (err) {
    if (err instanceof MotoApiError && err.status >= 400 && err.status < 500) return true;
    throw err;
  }
}
