import type { z } from "zod";
import type { ExternalObservation } from "../../api/external.ts";
import { Database, type DatabaseAtProvider, type DatabaseForProvider } from "../../api/gcp/sql.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { isAlreadyExists } from "./config.ts";
import { defined, SqlChildClient, sqlChildProvider, text, WRITE } from "./sql-common.ts";

type F = z.infer<typeof DatabaseForProvider>;
type A = z.infer<typeof DatabaseAtProvider>;

class DatabaseClient extends SqlChildClient<F, A> {
  protected readonly what = "database";

  protected async read(_mr: ManagedResource<F, A>, instance: string, name: string) {
    const [db] = await this.sql.databases.get({ project: this.project, instance, database: name });
    return {
      resourceExists: true,
      observed: defined({ instance, charset: text(db.charset), collation: text(db.collation) }),
      atProvider: defined({ selfLink: text(db.selfLink) }),
      availability: "Available",
      connectionDetails: { database: name },
    } satisfies ExternalObservation<F, A>;
  }

  protected async insert(mr: ManagedResource<F, A>, instance: string, name: string) {
    const { charset, collation } = mr.spec.forProvider;
    const body = { name, ...defined({ charset, collation }) };
    await this.write(instance, async () => {
      try {
        await this.sql.databases.insert({ project: this.project, instance, body }, WRITE);
      } catch (err) {
        // Created by an earlier attempt whose result was lost: it is ours to adopt (same name).
        if (!isAlreadyExists(err)) throw err;
      }
    });
    return { connectionDetails: { database: name } };
  }

  async update() {
    // charset and collation are immutable (the engine refuses them); nothing else can change.
    return {};
  }

  protected remove(instance: string, name: string) {
    return this.sql.databases.delete({ project: this.project, instance, database: name }, WRITE);
  }
}

export const sqlDatabaseProvider = sqlChildProvider(
  Database,
  (sql, project) => new DatabaseClient(sql, project),
);
