import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProxiedCall {
  action: string;
  params: URLSearchParams;
  status: number;
  at: number;
}

export interface ProxiedResponse {
  status: number;
  body: string;
  contentType: string;
}

/** A test's own behaviour layered on moto (a slower lifecycle, an injected failure). */
export interface ProxyHooks {
  /** Answers a call itself instead of forwarding it to moto, when it returns a response. */
  answer?: (action: string, params: URLSearchParams) => ProxiedResponse | undefined;
  /** Rewrites moto's answer to a forwarded call. */
  rewrite?: (action: string, params: URLSearchParams, res: ProxiedResponse) => ProxiedResponse;
}

/** An AWS Query-protocol error answer (a non-retryable 400). */
export function queryError(code: string, message: string, xmlns: string): ProxiedResponse {
  const body =
    `<ErrorResponse xmlns="${xmlns}"><Error><Type>Sender</Type>` +
    `<Code>${code}</Code><Message>${message}</Message></Error><RequestId>proxy</RequestId></ErrorResponse>`;
  return { status: 400, body, contentType: "text/xml" };
}

/**
 * TEST WRAPPER around moto, not a fake cloud: a small HTTP proxy the providers reach through the
 * ProviderConfig's endpoint (they still use the real SDKs; moto still does the work). It records every
 * Query-protocol call (EC2, RDS) so tests can count them and see their order, and it repairs one moto
 * 5.2.1 bug: ModifyDBSubnetGroup removes the group from moto's store (the backend pops it and never puts
 * it back), so the proxy puts it back with the modified values, as RDS would show it. A test may add
 * its own behaviour with hooks (answer a call itself, rewrite moto's answer).
 */
export class MotoProxy {
  readonly calls: ProxiedCall[] = [];
  readonly #target: string;
  readonly #server: Server;
  readonly #hooks: ProxyHooks;
  url = "";

  private constructor(target: string, hooks: ProxyHooks) {
    this.#target = target.replace(/\/$/, "");
    this.#hooks = hooks;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.#handle(req.method ?? "POST", req.url ?? "/", req.headers, Buffer.concat(chunks))
          .then(({ status, body, contentType }) => {
            res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
            res.end(body);
          })
          .catch((err: unknown) => {
            res.writeHead(502, { "content-type": "text/plain" });
            res.end(String(err));
          });
      });
    });
  }

  static async start(target: string, hooks: ProxyHooks = {}): Promise<MotoProxy> {
    const p = new MotoProxy(target, hooks);
    await new Promise<void>((resolve) => p.#server.listen(0, "127.0.0.1", resolve));
    p.url = `http://127.0.0.1:${(p.#server.address() as AddressInfo).port}`;
    return p;
  }

  stop() {
    return new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Calls of `action` (all when unset) whose parameters contain every `where` entry. */
  callsOf(action?: string | RegExp, where: Record<string, string> = {}) {
    return this.calls.filter(
      (c) =>
        (action === undefined ||
          (typeof action === "string" ? c.action === action : action.test(c.action))) &&
        Object.entries(where).every(([k, v]) => c.params.get(k) === v),
    );
  }

  /** Calls after `since` (an index into calls), for counting one reconcile's calls. */
  since(index: number) {
    return this.calls.slice(index).map((c) => c.action);
  }

  async #forward(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    body: Buffer | string,
  ): Promise<ProxiedResponse> {
    const forwarded: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (
        v === undefined ||
        ["host", "connection", "content-length", "transfer-encoding", "expect"].includes(k)
      )
        continue;
      forwarded[k] = Array.isArray(v) ? v.join(", ") : v;
    }
    const upstream = await fetch(`${this.#target}${url}`, {
      method,
      headers: forwarded,
      ...(method === "GET" || method === "HEAD" ? {} : { body }),
    });
    return {
      status: upstream.status,
      body: await upstream.text(),
      contentType: upstream.headers.get("content-type") ?? "text/xml",
    };
  }

  async #handle(method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) {
    const params = new URLSearchParams(body.toString("utf8"));
    const action = params.get("Action") ?? "";
    const answered = this.#hooks.answer?.(action, params);
    if (answered) {
      this.calls.push({ action, params, status: answered.status, at: Date.now() });
      return answered;
    }
    if (action === "ModifyDBSubnetGroup") return this.#modifySubnetGroup(method, url, headers, params);
    let res = await this.#forward(method, url, headers, body);
    if (this.#hooks.rewrite) res = this.#hooks.rewrite(action, params, res);
    this.calls.push({ action, params, status: res.status, at: Date.now() });
    return res;
  }

  // moto's signature check is off, so the proxy's own requests reuse the caller's headers (region, account).
  async #modifySubnetGroup(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    params: URLSearchParams,
  ) {
    const name = params.get("DBSubnetGroupName") ?? "";
    const query = (p: Record<string, string>) =>
      this.#forward(method, url, headers, new URLSearchParams({ Version: "2014-10-31", ...p }).toString());
    const before = await query({ Action: "DescribeDBSubnetGroups", DBSubnetGroupName: name });
    const res = await this.#forward(method, url, headers, params.toString());
    this.calls.push({ action: "ModifyDBSubnetGroup", params, status: res.status, at: Date.now() });
    if (res.status !== 200) return res;
    const arn = /<DBSubnetGroupArn>([^<]*)<\/DBSubnetGroupArn>/.exec(before.body)?.[1] ?? "";
    const description = /<DBSubnetGroupDescription>([^<]*)<\/DBSubnetGroupDescription>/.exec(
      before.body,
    )?.[1];
    const tags = arn ? (await query({ Action: "ListTagsForResource", ResourceName: arn })).body : "";
    const recreate = new URLSearchParams(params);
    recreate.set("Action", "CreateDBSubnetGroup");
    if (!recreate.has("DBSubnetGroupDescription"))
      recreate.set("DBSubnetGroupDescription", decodeXml(description ?? ""));
    [...tags.matchAll(/<Tag>\s*<Key>([^<]*)<\/Key>\s*<Value>([^<]*)<\/Value>\s*<\/Tag>/g)].forEach((m, i) => {
      recreate.set(`Tags.Tag.${i + 1}.Key`, decodeXml(m[1] ?? ""));
      recreate.set(`Tags.Tag.${i + 1}.Value`, decodeXml(m[2] ?? ""));
    });
    const again = await this.#forward(method, url, headers, recreate.toString());
    if (again.status !== 200)
      throw new Error(
        `cannot restore DB subnet group ${name} after moto's ModifyDBSubnetGroup: ${again.body}`,
      );
    return res;
  }
}

const decodeXml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");
