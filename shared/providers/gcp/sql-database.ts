import type { z } from "zod";
import type { ExternalObservation } from "../../api/external.ts";
import { Database, type DatabaseAtProvider, type DatabaseForProvider } from "../../api/gcp/sql.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { isSqlAlreadyExists, SqlChildClient, sqlChildProvider, text } from "./sql-common.ts";

type F = z.infer<typeof DatabaseForProvider>;
type A = z.infer<typeof DatabaseAtProvider>;

class DatabaseClient extends SqlChildClient<F, A> {
  protected readonly what = "database";

  protected async read(_mr: ManagedResource<F, A>, instance: string, name: string) {
    const db = await this.sql.getDatabase(instance, name);
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
        await this.sql.insertDatabase(instance, body);
      } catch (err) {
        // Created by an earlier attempt whose result was lost: it is ours to adopt (same name).
        if (!isSqlAlreadyExists(err)) throw err;
      }
    });
    return { connectionDetails: { database: name } };
  }

  async update() {
    // charset and collation are immutable (the engine refuses them); nothing else can change.
    return {};
  }

  protected remove(instance: string, name: string) {
    return this.sql.deleteDatabase(instance, name);
  }

  protected async names(instance: string) {
    return (await this.sql.listDatabases(instance)).flatMap((d) => (d.name ? [d.name] : []));
  }
}

export const sqlDatabaseProvider = sqlChildProvider(Database, (sql) => new DatabaseClient(sql));
