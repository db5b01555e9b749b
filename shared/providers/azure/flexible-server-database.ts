import type { Database } from "@azure/arm-postgresql-flexible";
import { FlexibleServerDatabase } from "../../api/azure/dbforpostgresql.ts";
import { defined, serverChildProvider } from "./postgresql-client.ts";

export const flexibleServerDatabaseProvider = serverChildProvider({
  definition: FlexibleServerDatabase,
  collection: "databases",
  listCall: "Databases - List By Server",
  calls: (pg) => ({
    get: (p, name) => pg.databases.get(p.rg, p.server, name),
    list: (p) => pg.databases.listByServer(p.rg, p.server).byPage(),
    put: (p, name, body: Database) => pg.databases.beginCreate(p.rg, p.server, name, body),
    remove: (p, name) => pg.databases.beginDelete(p.rg, p.server, name),
  }),
  mapping: {
    what: "database",
    // Charset and collation are all a database has, and Azure cannot change either.
    observationOf: (_fp, parent, db) => ({
      resourceExists: true,
      observed: defined({
        resourceGroupName: parent.rg,
        serverName: parent.server,
        charset: db.charset,
        collation: db.collation,
      }),
      atProvider: db.id ? { id: db.id } : {},
      availability: "Available",
      ...(db.name ? { connectionDetails: { database: db.name } } : {}),
    }),
    createBody: ({ charset, collation }) => defined({ charset, collation }),
  },
});
