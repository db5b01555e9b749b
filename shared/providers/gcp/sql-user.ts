import type { z } from "zod";
import {
  type ConnectContext,
  defineProvider,
  type ExternalClient,
  type ExternalObservation,
  InvalidSpecError,
} from "../../api/external.ts";
import { User, type UserAtProvider, type UserForProvider } from "../../api/gcp/sql.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { GcpProviderConfigSpec } from "../../api/provider-config.ts";
import { gcp, isAlreadyExists } from "./config.ts";
import { gcpNetworkingConfig } from "./google-rest.ts";
import {
  ConnectionPassword,
  defined,
  isSqlNotFound,
  onInstance,
  PASSWORD_KEY,
  type SqlClients,
  sqlClients,
  text,
  unlessGone,
  WRITE,
} from "./sql-common.ts";

type F = z.infer<typeof UserForProvider>;
type A = z.infer<typeof UserAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

class UserClient implements ExternalClient<F, A> {
  readonly #sql: SqlClients;
  readonly #project: string;
  readonly #password: ConnectionPassword<F, A>;
  constructor(sql: SqlClients, project: string, password: ConnectionPassword<F, A>) {
    this.#sql = sql;
    this.#project = project;
    this.#password = password;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const fp = mr.spec.forProvider;
    if (!name || !fp.instance) return { resourceExists: false };
    const instance = fp.instance;
    return gcp(async () => {
      try {
        const [user] = await this.#sql.users.get({ project: this.#project, instance, name, host: "" });
        const obs: Observation = {
          resourceExists: true,
          observed: { instance },
          atProvider: defined({ type: text(String(user.type ?? "")) }),
          availability: "Available",
          connectionDetails: { username: name },
        };
        await this.#password.observe(mr, fp.passwordSecretRef, obs);
        return obs;
      } catch (err) {
        if (!isSqlNotFound(err)) throw err;
        const details = await this.#password.absent(mr, fp.passwordSecretRef);
        return { resourceExists: false, ...(details ? { connectionDetails: details } : {}) };
      }
    });
  }

  #setPassword(instance: string, name: string, password: string) {
    return this.#sql.users.update(
      {
        project: this.#project,
        instance,
        name,
        host: "",
        body: { name, password },
      },
      WRITE,
    );
  }

  async create(mr: MR, name: string | undefined) {
    const fp = mr.spec.forProvider;
    if (!name) throw new Error("a user needs a name (crossplane.io/external-name)");
    if (!fp.instance)
      throw new InvalidSpecError("spec.forProvider.instance (or instanceRef) is required to create a user");
    const instance = fp.instance;
    const password = await this.#password.forCreate(mr, fp.passwordSecretRef);
    await gcp(() =>
      onInstance(instance, async () => {
        try {
          await this.#sql.users.insert({ project: this.#project, instance, body: { name, password } }, WRITE);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          // Made by an earlier attempt whose result was lost: set the password we hold, the one published.
          await this.#setPassword(instance, name, password);
        }
      }),
    );
    this.#password.wasSet(mr, password);
    return { connectionDetails: { username: name, [PASSWORD_KEY]: password } };
  }

  async update(mr: MR, name: string, obs: Observation) {
    const instance = mr.spec.forProvider.instance;
    const password = this.#password.pending(obs);
    if (password === undefined || !instance) return {};
    await gcp(() => onInstance(instance, () => this.#setPassword(instance, name, password)));
    this.#password.wasSet(mr, password);
    return { connectionDetails: { ...obs.connectionDetails, [PASSWORD_KEY]: password } };
  }

  async delete(mr: MR, name: string) {
    const instance = mr.spec.forProvider.instance;
    if (!instance) return;
    await gcp(() =>
      onInstance(instance, () =>
        unlessGone(this.#sql.users.delete({ project: this.#project, instance, name, host: "" }, WRITE)),
      ),
    );
  }
}

export const sqlUserProvider = defineProvider({
  definition: User,
  async connect(ctx: ConnectContext<GcpProviderConfigSpec>) {
    const cfg = await gcpNetworkingConfig(ctx);
    const password = new ConnectionPassword<F, A>((ref) => ctx.readSecretKey(ref), "passwordSecretRef");
    return new UserClient(sqlClients(cfg), cfg.projectId, password);
  },
});
