import { FlexibleServerDatabase } from "../../api/azure/dbforpostgresql.ts";
import type { ArmResource } from "./arm-rest.ts";
import { defined, serverChildProvider } from "./postgresql-client.ts";

/** A database as ARM's REST API answers it. */
type Database = ArmResource<{ charset?: string; collation?: string }>;

export const flexibleServerDatabaseProvider = serverChildProvider({
  definition: FlexibleServerDatabase,
  collection: "databases",
  listCall: "Databases - List By Server",
  mapping: {
    what: "database",
    // Charset and collation are all a database has, and Azure cannot change either.
    observed: (db: Database) =>
      defined({ charset: db.properties?.charset, collation: db.properties?.collation }),
    connectionDetails: (db) => (db.name ? { database: db.name } : undefined),
    createBody: ({ charset, collation }): Database => ({ properties: defined({ charset, collation }) }),
  },
});
