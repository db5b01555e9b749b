// Spanner's Database, a generated kind whose create names it inside a statement (CreateDatabase: `{parent,
// create_statement, extra_statements, encryption_config, database_dialect, proto_descriptors}`, body `*`,
// long-running), on a real kube-apiserver against the generic fake: the id becomes `CREATE DATABASE \`id\``
// (PostgreSQL: `"id"`), the create-time inputs are recorded (googleapis.driftless.dev/created-with) and a
// change of them refused with nothing sent; the Database's own field (enable_drop_protection) is set by
// UpdateDatabase with its mask, drift corrected; import by full name; delete by DropDatabase `{database=…}`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { CREATED_WITH_ANNOTATION } from "../../../shared/providers/gcp/generic/client.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, refusedWithNothingSent, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("gcpspdb");
const DATABASE = "spanner.googleapis.com/Database";
const bed = googleGenTestbed(kube, PC, [DATABASE]);
const db = bed.def(DATABASE);

// Operations take one look to finish: the create is followed by a later reconcile, as with Google.
beforeAll(() => bed.start({ opPolls: 1 }), 120_000);
afterAll(() => bed.close());

const settled = async (name: string) => {
  for (const _ of [1, 2, 3]) await settle(bed.reconciler, keyOf(db, name));
  return getMr<Json>(kube, db, name);
};
const make = (name: string, forProvider: Json, annotations?: Record<string, string>) =>
  kube.create(
    db,
    managedObject(db, name, PC, {
      forProvider,
      connectionSecret: false,
      ...(annotations ? { annotations } : {}),
    }),
  );
const posts = (before: Record<string, number>) =>
  requestsSince(bed.fake, before, /^POST spanner /).reduce((n, [k, now]) => n + now - (before[k] ?? 0), 0);

describe("Spanner Database: created by its create statement", () => {
  const instance = () => `projects/${gcpProject()}/instances/${uniqueName("inst")}`;

  it("created with `CREATE DATABASE \\`id\\`` and its DDL (long-running), Ready, inputs recorded; drop protection set and its drift corrected by mask; a changed extraStatements refused with nothing sent; delete", {
    timeout: 180_000,
  }, async () => {
    const parent = instance();
    const name = uniqueName("spdb");
    const ddl = ["CREATE TABLE t (id INT64) PRIMARY KEY (id)"];
    const before = bed.fake.stats();
    await make(name, { parent, extraStatements: ddl, enableDropProtection: true });
    const mr = await settled(name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    const full = `${parent}/databases/${name}`;
    // The create's request, as Spanner documents it: the id inside the statement, the DDL beside it.
    expect(bed.fake.createRequestOf(full)).toEqual({
      createStatement: `CREATE DATABASE \`${name}\``,
      extraStatements: ddl,
    });
    expect(posts(before)).toBe(1);
    expect(JSON.parse(mr?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: ddl,
    });
    // The create cannot carry the Database's own field: UpdateDatabase sets it, with its mask.
    expect(bed.fake.updatesOf(full)).toEqual([["enableDropProtection"]]);
    expect(bed.fake.resource(full)).toMatchObject({ enableDropProtection: true, state: "READY" });

    // Drift (turned off in the console) is corrected by the mask, nothing else sent.
    bed.fake.mutate(full, { enableDropProtection: false });
    await settled(name);
    expect(bed.fake.resource(full)).toMatchObject({ enableDropProtection: true });
    expect(bed.fake.updatesOf(full)).toEqual([["enableDropProtection"], ["enableDropProtection"]]);

    // DDL after create is not applied: a changed extraStatements is refused, nothing sent.
    await refusedWithNothingSent(
      kube,
      bed,
      db,
      name,
      { extraStatements: [...ddl, "CREATE INDEX i ON t (id)"] },
      "extraStatements",
    );
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: ddl } } });
    const back = await settled(name);
    expect(conditionOf(back, "Synced"), JSON.stringify(back?.status)).toMatchObject({ status: "True" });
    expect(posts(before)).toBe(1);

    // Spanner refuses to drop a protected database: protection off first (by mask), then delete.
    await kube.patch(db, name, { spec: { forProvider: { enableDropProtection: false } } });
    await settled(name);
    expect(bed.fake.resource(full)?.enableDropProtection).toBe(false);
    await kube.delete(db, name);
    await settled(name);
    expect(await getMr(kube, db, name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });

  it('PostgreSQL: created with `CREATE DATABASE "id"`, the dialect Google answers compared; imported by full name; a changed dialect refused', {
    timeout: 180_000,
  }, async () => {
    const parent = instance();
    const name = uniqueName("pgdb");
    await make(name, { parent, databaseDialect: "POSTGRESQL" });
    const mr = await settled(name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    const full = `${parent}/databases/${name}`;
    expect(bed.fake.createRequestOf(full)).toEqual({
      createStatement: `CREATE DATABASE "${name}"`,
      databaseDialect: "POSTGRESQL",
    });
    await refusedWithNothingSent(
      kube,
      bed,
      db,
      name,
      { databaseDialect: "GOOGLE_STANDARD_SQL" },
      "databaseDialect",
    );

    // Import by full name: nothing created, the database read and adopted as it is.
    const before = bed.fake.stats();
    const imported = uniqueName("spdbimp");
    await make(imported, { parent, databaseDialect: "POSTGRESQL" }, { [Annotations.externalName]: full });
    const got = await settled(imported);
    expect(conditionOf(got, "Ready"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(got, "Synced")).toMatchObject({ status: "True" });
    expect(got?.metadata.annotations?.[Annotations.externalName]).toBe(full);
    expect(posts(before)).toBe(0);
    expect((got?.status as Json | undefined)?.atProvider).toMatchObject({ databaseDialect: "POSTGRESQL" });

    for (const n of [imported, name]) {
      await kube.delete(db, n);
      await settled(n);
    }
    expect(bed.fake.resource(full)).toBeUndefined();
  });
});
