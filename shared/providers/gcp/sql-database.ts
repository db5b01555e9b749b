import type { z } from "zod";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import { Database, type DatabaseAtProvider, type DatabaseForProvider } from "../../api/gcp/sql.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { gcp, isAlreadyExists } from "./config.ts";
import { gcpNetworkingConfig } from "./google-rest.ts";
import {
  defined,
  isSqlNotFound,
  onInstance,
  type SqlClients,
  sqlClients,
  text,
  unlessGone,
  WRITE,
} from "./sql-common.ts";

type F = z.infer<typeof DatabaseForProvider>;
type A = z.infer<typeof DatabaseAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

class DatabaseClient implements ExternalClient<F, A> {
  readonly #sql: SqlClients;
  readonly #project: string;
  constructor(sql: SqlClients, project: string) {
    this.#sql = sql;
    this.#project = project;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const instance = mr.spec.forProvider.instance;
    if (!name || !instance) return { resourceExists: false };
    return gcp(async () => {
      try {
        const [db] = await this.#sql.databases.get({ project: this.#project, instance, database: name });
        return {
          resourceExists: true,
          observed: defined({ instance, charset: text(db.charset), collation: text(db.collation) }),
          atProvider: defined({ selfLink: text(db.selfLink) }),
          availability: "Available",
          connectionDetails: { database: name },
        };
      } catch (err) {
        // The instance itself may be gone (404 instanceDoesNotExist): its databases went with it.
        if (isSqlNotFound(err)) return { resourceExists: false };
        throw err;
      }
    });
  }

  async create(mr: MR, name: string | undefined) {
    const fp = mr.spec.forProvider;
    if (!name) throw new Error("a database needs a name (crossplane.io/external-name)");
    if (!fp.instance)
      throw new InvalidSpecError(
        "spec.forProvider.instance (or instanceRef) is required to create a database",
      );
    const instance = fp.instance;
    const body = { name, ...defined({ charset: fp.charset, collation: fp.collation }) };
    await gcp(() =>
      onInstance(instance, async () => {
        try {
          await this.#sql.databases.insert({ project: this.#project, instance, body }, WRITE);
        } catch (err) {
          // Created by an earlier attempt whose result was lost: it is ours to adopt (same name).
          if (!isAlreadyExists(err)) throw err;
        }
      }),
    );
    return { connectionDetails: { database: name } };
  }

  async update() {
    // charset and collation are immutable (the engine refuses them); nothing else can change.
    return {};
  }

  async delete(mr: MR, name: string) {
    const instance = mr.spec.forProvider.instance;
    if (!instance) return;
    await gcp(() =>
      onInstance(instance, () =>
        unlessGone(this.#sql.databases.delete({ project: this.#project, instance, database: name }, WRITE)),
      ),
    );
  }
}

export const sqlDatabaseProvider = defineProvider({
  definition: Database,
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpNetworkingConfig(ctx);
    return new DatabaseClient(sqlClients(cfg), cfg.projectId);
  },
});
