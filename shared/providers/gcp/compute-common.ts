// What the Compute kinds share: a JSON client per configuration, and one global collection's calls —
// including how an insert still running is told apart from "does not exist" (Compute shows a resource
// only once its insert operation is done).
import { DependentsExistError } from "../../api/external.ts";
import { GcpClientCache, httpStatus } from "./config.ts";
import { authFor, type GcpNetworkingConfig, GoogleHttpError, GoogleRestClient } from "./google-rest.ts";

const computeClients = new GcpClientCache((c) => {
  const cfg = c as GcpNetworkingConfig;
  return new GoogleRestClient(
    `${cfg.computeEndpoint}/compute/v1`,
    authFor(cfg.computeEndpoint, cfg.credentials),
  );
});

export type Json = Record<string, unknown>;

interface ComputeOperation {
  status?: string;
  operationType?: string;
  error?: { errors?: Array<{ code?: string; message?: string }> };
}

const isNotFound = (err: unknown) => httpStatus(err) === 404;

/** A resource being inserted: Compute does not show it yet, and creating it again would be refused. */
export const CREATING = "creating";

/** One global collection (networks, addresses) of the ProviderConfig's project; every request takes a rate-limit token. */
export class GlobalCollection<T> {
  readonly #api: GoogleRestClient;
  readonly #base: string;
  readonly #collection: "networks" | "addresses";
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(
    cfg: GcpNetworkingConfig,
    collection: "networks" | "addresses",
    rateLimit: (() => Promise<void>) | undefined,
  ) {
    this.#api = computeClients.get(cfg);
    this.#base = `/projects/${cfg.projectId}/global`;
    this.#collection = collection;
    this.#rateLimit = rateLimit;
  }

  #path(name: string) {
    return `${this.#base}/${this.#collection}/${encodeURIComponent(name)}`;
  }

  /** The resource; CREATING while its insert runs; undefined when there is none. A failed insert throws why. */
  async find(name: string): Promise<T | typeof CREATING | undefined> {
    try {
      return await this.#api.request<T>("GET", this.#path(name), { rateLimit: this.#rateLimit });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // One list call, made only when the resource itself was not found.
    const out = await this.#api.request<{ items?: ComputeOperation[] }>("GET", `${this.#base}/operations`, {
      query: { filter: `targetLink eq '.*/global/${this.#collection}/${name}'` },
      rateLimit: this.#rateLimit,
    });
    const last = (out.items ?? []).filter((o) => o.operationType === "insert").at(-1);
    if (!last) return undefined;
    if (last.status !== "DONE") return CREATING;
    const e = last.error?.errors?.[0];
    if (e)
      throw new Error(
        `the last insert of ${this.#collection}/${name} failed: ${e.code ?? "error"}: ${e.message ?? ""}`,
      );
    return undefined;
  }

  async insert(body: Json): Promise<void> {
    await this.#api.request("POST", `${this.#base}/${this.#collection}`, {
      body,
      rateLimit: this.#rateLimit,
    });
  }

  /** PATCH of the resource, or POST of one of its custom verbs (`setLabels`). */
  async change(name: string, body: Json, verb?: string): Promise<void> {
    const path = verb ? `${this.#path(name)}/${verb}` : this.#path(name);
    await this.#api.request(verb ? "POST" : "PATCH", path, { body, rateLimit: this.#rateLimit });
  }

  /** Deletes it (gone already is fine); "in use" becomes DependentsExistError: the engine waits for them. */
  async remove(name: string): Promise<void> {
    try {
      await this.#api.request("DELETE", this.#path(name), { rateLimit: this.#rateLimit });
    } catch (err) {
      if (isNotFound(err)) return;
      if (err instanceof GoogleHttpError && err.reason === "resourceInUseByAnotherResource")
        throw new DependentsExistError(err.message, { cause: err });
      throw err;
    }
  }
}
