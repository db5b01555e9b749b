import type { z } from "zod";
import type { ExternalObservation } from "../../api/external.ts";
import { User, type UserAtProvider, type UserForProvider } from "../../api/gcp/sql.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import {
  ConnectionPassword,
  isSqlAlreadyExists,
  PASSWORD_KEY,
  type SqlApi,
  SqlChildClient,
  sqlChildProvider,
  text,
} from "./sql-common.ts";

type F = z.infer<typeof UserForProvider>;
type A = z.infer<typeof UserAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

class UserClient extends SqlChildClient<F, A> {
  protected readonly what = "user";
  readonly #password: ConnectionPassword<F, A>;
  constructor(sql: SqlApi, password: ConnectionPassword<F, A>) {
    super(sql);
    this.#password = password;
  }

  protected async read(mr: MR, instance: string, name: string) {
    const user = await this.sql.getUser(instance, name);
    const obs: Observation = {
      resourceExists: true,
      observed: { instance },
      atProvider: defined({ type: text(user.type) }),
      availability: "Available",
      connectionDetails: { username: name },
    };
    await this.#password.observe(mr, mr.spec.forProvider.passwordSecretRef, obs);
    return obs;
  }

  protected override async absent(mr: MR): Promise<Observation> {
    const details = await this.#password.absent(mr, mr.spec.forProvider.passwordSecretRef);
    return { resourceExists: false, ...(details ? { connectionDetails: details } : {}) };
  }

  #setPassword(instance: string, name: string, password: string) {
    return this.sql.updateUser(instance, name, { name, password });
  }

  protected async insert(mr: MR, instance: string, name: string) {
    const password = await this.#password.forCreate(mr, mr.spec.forProvider.passwordSecretRef);
    await this.write(instance, async () => {
      try {
        await this.sql.insertUser(instance, { name, password });
      } catch (err) {
        if (!isSqlAlreadyExists(err)) throw err;
        // Made by an earlier attempt whose result was lost: set the password we hold, the one published.
        await this.#setPassword(instance, name, password);
      }
    });
    this.#password.wasSet(mr, password);
    return { connectionDetails: { username: name, [PASSWORD_KEY]: password } };
  }

  async update(mr: MR, name: string, obs: Observation) {
    const instance = mr.spec.forProvider.instance;
    const password = this.#password.pending(obs);
    if (password === undefined || !instance) return {};
    await this.write(instance, () => this.#setPassword(instance, name, password));
    this.#password.wasSet(mr, password);
    return { connectionDetails: { ...obs.connectionDetails, [PASSWORD_KEY]: password } };
  }

  protected remove(instance: string, name: string) {
    return this.sql.deleteUser(instance, name);
  }

  /** Built-in users only: the kind manages no IAM users or groups (their names are principals). */
  protected async names(instance: string) {
    return (await this.sql.listUsers(instance)).flatMap((u) =>
      u.name && (u.type === undefined || u.type === "" || u.type === "BUILT_IN") ? [u.name] : [],
    );
  }
}

export const sqlUserProvider = sqlChildProvider(User, (sql, ctx) => {
  const password = new ConnectionPassword<F, A>((ref) => ctx.readSecretKey(ref), "passwordSecretRef");
  return new UserClient(sql, password);
});
