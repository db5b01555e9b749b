// Spanner's Database, a generated kind whose create names it inside a statement (CreateDatabase: `{parent,
// create_statement, extra_statements, encryption_config, database_dialect, proto_descriptors}`, body `*`,
// long-running), on a real kube-apiserver against the generic fake: the id becomes `CREATE DATABASE \`id\``
// (PostgreSQL: `"id"`), the create-time inputs are recorded (googleapis.driftless.dev/created-with) and a
// change of them refused with nothing sent, but for DDL appended to extraStatements, applied once by
// UpdateDatabaseDdl (an operation id of the object and the count: a repeated send is ALREADY_EXISTS); the Database's own field (enable_drop_protection) is set by
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

  it("created with `CREATE DATABASE \\`id\\`` and its DDL (long-running), Ready, inputs recorded; drop protection set and its drift corrected by mask; an appended statement applied once (also when the send is repeated), an edited or removed one refused with nothing sent; delete", {
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

    // DDL appended after create: the new trailing statement is applied by one UpdateDatabaseDdl (long-running)
    // whose operation id is the object's and the statement count's, and recorded as applied.
    const index = "CREATE INDEX i ON t (id)";
    const all = [...ddl, index];
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: all } } });
    const appended = await settled(name);
    expect(conditionOf(appended, "Synced"), JSON.stringify(appended?.status)).toMatchObject({
      status: "True",
    });
    const sent = bed.fake.ddlOf(full);
    expect(sent.requests).toHaveLength(1);
    expect(sent.requests[0]).toEqual({
      statements: [index],
      operationId: expect.stringMatching(/^[a-z][a-z0-9_]*_2$/),
    });
    expect(sent.applied).toEqual([[index]]);
    expect(sent.statements).toEqual(all);
    expect(JSON.parse(appended?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: all,
    });
    // GetDatabaseDdl answers what was applied (as Spanner would, normalised; the fake keeps the text).
    const got = await fetch(`${bed.fake.url}/spanner/v1/${full}/ddl`).then((r) => r.json());
    expect(got).toEqual({ statements: all });

    // A reconcile that crashed after the send (its record lost) sends the same operation id again: Google
    // answers ALREADY_EXISTS, the operation it names is read, and the statement is not applied twice.
    await kube.patch(db, name, {
      metadata: { annotations: { [CREATED_WITH_ANNOTATION]: JSON.stringify({ extraStatements: ddl }) } },
    });
    const again = await settled(name);
    expect(conditionOf(again, "Synced"), JSON.stringify(again?.status)).toMatchObject({ status: "True" });
    expect(bed.fake.ddlOf(full).requests).toHaveLength(2);
    expect(bed.fake.ddlOf(full).requests[1]).toEqual(sent.requests[0]);
    expect(bed.fake.ddlOf(full).applied).toEqual([[index]]);
    expect(JSON.parse(again?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: all,
    });

    // An applied statement edited, or removed: refused in Synced with what to do, nothing sent.
    const edited = ["CREATE TABLE t (id STRING(36)) PRIMARY KEY (id)", index];
    await refusedWithNothingSent(kube, bed, db, name, { extraStatements: edited }, "extraStatements");
    const refused = await getMr<Json>(kube, db, name);
    expect(conditionOf(refused, "Synced")?.message).toContain("DROP");
    await refusedWithNothingSent(kube, bed, db, name, { extraStatements: ddl }, "extraStatements");
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: all } } });
    const back = await settled(name);
    expect(conditionOf(back, "Synced"), JSON.stringify(back?.status)).toMatchObject({ status: "True" });
    expect(bed.fake.ddlOf(full).requests).toHaveLength(2);
    expect(bed.fake.ddlOf(full).applied).toEqual([[index]]);
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

  it("appended DDL Spanner refuses: Synced=False with Google's message, nothing recorded, the statement rewritten applied under a new operation id; a slow append followed, never sent twice; a batch failing part-way recorded up to the failure; an imported database's statements taken as applied, then appended to", {
    timeout: 180_000,
  }, async () => {
    const parent = instance();
    const name = uniqueName("spddl");
    const table = "CREATE TABLE t (id INT64) PRIMARY KEY (id)";
    await make(name, { parent, extraStatements: [table] });
    await settled(name);
    const full = `${parent}/databases/${name}`;

    // Spanner's parser refuses the statement: the operation fails, its message in Synced, nothing recorded.
    await kube.patch(db, name, {
      spec: { forProvider: { extraStatements: [table, "CRATE INDEX i ON t (id)"] } },
    });
    const refused = await settled(name);
    expect(conditionOf(refused, "Synced"), JSON.stringify(refused?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("Error parsing Spanner DDL statement: CRATE INDEX"),
    });
    expect(JSON.parse(refused?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: [table],
    });
    expect(bed.fake.ddlOf(full).applied).toEqual([]);
    // Not yet applied, so it may still be rewritten: a new list, a new operation id.
    const index = "CREATE INDEX i ON t (id)";
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: [table, index] } } });
    const fixed = await settled(name);
    expect(conditionOf(fixed, "Synced"), JSON.stringify(fixed?.status)).toMatchObject({ status: "True" });
    const ids = bed.fake.ddlOf(full).requests.map((r) => r.operationId);
    // Retries of the refused list sent its id again (ALREADY_EXISTS, its failed operation read); the fix its own.
    expect(new Set(ids).size).toBe(2);
    expect(ids.at(-1)).not.toBe(ids[0]);
    expect(bed.fake.ddlOf(full).applied).toEqual([[index]]);

    // A slow append (an index backfill): Synced=False says it runs; followed by the same id until done, once.
    bed.fake.opPolls = 4;
    const column = "ALTER TABLE t ADD COLUMN v STRING(MAX)";
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: [table, index, column] } } });
    await settle(bed.reconciler, keyOf(db, name));
    const running = await getMr<Json>(kube, db, name);
    expect(conditionOf(running, "Synced")?.message, JSON.stringify(running?.status)).toContain("is running");
    for (const _ of [1, 2, 3, 4, 5]) await settle(bed.reconciler, keyOf(db, name));
    bed.fake.opPolls = 1;
    const slow = await settled(name);
    expect(conditionOf(slow, "Synced"), JSON.stringify(slow?.status)).toMatchObject({ status: "True" });
    expect(bed.fake.ddlOf(full).applied).toEqual([[index], [column]]);
    expect(bed.fake.ddlOf(full).requests.length).toBeGreaterThan(ids.length + 1);
    expect(JSON.parse(slow?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: [table, index, column],
    });

    // A batch that fails part-way: the statements before the failing one committed (the operation's
    // commitTimestamps) and are recorded; the rest is sent again under a new id, where it fails alone.
    const col2 = "ALTER TABLE t ADD COLUMN x INT64";
    const four = [table, index, column, col2];
    await kube.patch(db, name, {
      spec: { forProvider: { extraStatements: [...four, "ALTR TABLE t DROP COLUMN x"] } },
    });
    const partial = await settled(name);
    expect(conditionOf(partial, "Synced"), JSON.stringify(partial?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("Error parsing Spanner DDL statement: ALTR TABLE"),
    });
    expect(JSON.parse(partial?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: four,
    });
    expect(bed.fake.ddlOf(full).applied).toEqual([[index], [column], [col2]]);
    await kube.patch(db, name, { spec: { forProvider: { extraStatements: four } } });
    const kept = await settled(name);
    expect(conditionOf(kept, "Synced"), JSON.stringify(kept?.status)).toMatchObject({ status: "True" });

    // Imported by full name: the spec's statements are taken as applied and recorded; an append is applied.
    const imported = uniqueName("spddlimp");
    await make(imported, { parent, extraStatements: four }, { [Annotations.externalName]: full });
    const got = await settled(imported);
    expect(conditionOf(got, "Synced"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
    expect(JSON.parse(got?.metadata.annotations?.[CREATED_WITH_ANNOTATION] ?? "null")).toEqual({
      extraStatements: four,
    });
    const view = "CREATE VIEW w SQL SECURITY INVOKER AS SELECT t.id FROM t";
    await kube.patch(db, imported, {
      spec: { forProvider: { extraStatements: [...four, view] } },
    });
    const more = await settled(imported);
    expect(conditionOf(more, "Synced"), JSON.stringify(more?.status)).toMatchObject({ status: "True" });
    expect(bed.fake.ddlOf(full).applied).toEqual([[index], [column], [col2], [view]]);

    // Imported to observe only: nothing to record or send, in sync (UpToDate=True), no record written.
    const observer = uniqueName("spddlobs");
    await make(observer, { parent, extraStatements: four }, { [Annotations.externalName]: full });
    await kube.patch(db, observer, { spec: { managementPolicies: ["Observe"] } });
    const watched = await settled(observer);
    expect(conditionOf(watched, "UpToDate"), JSON.stringify(watched?.status)).toMatchObject({
      status: "True",
    });
    expect(watched?.metadata.annotations?.[CREATED_WITH_ANNOTATION]).toBeUndefined();

    for (const n of [observer, imported, name]) {
      await kube.delete(db, n);
      await settled(n);
    }
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
