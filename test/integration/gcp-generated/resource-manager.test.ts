// Resource Manager v3's Folder, Project, TagKey and TagValue as generated kinds on a real kube-apiserver,
// against the generic fake: creates that POST to a top-level collection with the parent in the body, each
// under the one before by reference (Folder → Project → TagKey → TagValue); drift corrected; a changed parent
// refused, never moved; Project's and Folder's soft delete (DELETE_REQUESTED) read as gone, and a soft-deleted
// project id refused by Google on a re-create; a create whose answer is lost found again by the field Google
// documents as unique within the parent, never made twice.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { Annotations } from "../../../shared/api/meta.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { googleGenTestbed, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import { cli } from "../cli/helpers.ts";

type Json = Record<string, unknown>;
const KINDS = ["Folder", "Project", "TagKey", "TagValue"] as const;
type Kind = (typeof KINDS)[number];
const ORG = "organizations/123456789";
const typeOf = (k: Kind) => `cloudresourcemanager.googleapis.com/${k}`;

const kube = newKube();
const PC = uniqueName("gcprm");
const bed = googleGenTestbed(kube, PC, KINDS.map(typeOf));
const def = (k: Kind) => bed.def(typeOf(k));

beforeAll(() => bed.start({ opPolls: 1 }), 120_000);
afterAll(() => bed.close());

const make = async (k: Kind, name: string, forProvider: Json) => {
  await kube.create(def(k), managedObject(def(k), name, PC, { forProvider, connectionSecret: false }));
  await settle(bed.reconciler, keyOf(def(k), name));
  await settle(bed.reconciler, keyOf(def(k), name));
  const mr = await getMr<Json>(kube, def(k), name);
  expect(conditionOf(mr, "Ready"), `${k} ${JSON.stringify(mr?.status)}`).toMatchObject({ status: "True" });
  return String(mr?.status?.atProvider?.name);
};

const gone = async (k: Kind, name: string) => {
  await kube.delete(def(k), name);
  await settle(bed.reconciler, keyOf(def(k), name));
  await settle(bed.reconciler, keyOf(def(k), name));
  expect(await getMr(kube, def(k), name)).toBeUndefined();
};

/** What the fake's list of a parent shows (active ones only, as Google's list does by default). */
const listed = async (collection: string, parent: string) =>
  (
    (await (
      await fetch(
        `${bed.fake.url}/cloudresourcemanager/v3/${collection}?parent=${encodeURIComponent(parent)}`,
      )
    ).json()) as Json
  )[collection] as Json[] | undefined;

describe("Resource Manager v3 kinds (parent in the body, soft delete)", () => {
  it("Folder → Project → TagKey → TagValue by reference; drift corrected; a changed parent refused; soft delete is gone", {
    timeout: 120_000,
  }, async () => {
    const [f, p, k, v] = ["rm-folder", "rm-proj", "rm-key", "rm-val"].map((x) => uniqueName(x)) as [
      string,
      string,
      string,
      string,
    ];
    // Server-assigned names: folders/<n>; the Project's id is its external name, its name projects/<number>.
    const folder = await make("Folder", f, { parent: ORG, displayName: f.slice(0, 30) });
    expect(folder).toMatch(/^folders\/\d+$/);
    expect((await getMr(kube, def("Folder"), f))?.metadata.annotations?.[Annotations.externalName]).toBe(
      folder,
    );
    const project = await make("Project", p, { parentRef: { name: f }, displayName: "p" });
    expect(project).toMatch(/^projects\/\d+$/);
    const pmr = await getMr<Json>(kube, def("Project"), p);
    expect(pmr?.spec.forProvider.parent).toBe(folder);
    expect(bed.fake.resource(project)).toMatchObject({ projectId: p, parent: folder, state: "ACTIVE" });
    const key = await make("TagKey", k, { parentRef: { name: p }, shortName: "env" });
    expect(bed.fake.resource(key)).toMatchObject({ parent: project, shortName: "env" });
    const value = await make("TagValue", v, { parentRef: { name: k }, shortName: "prod" });
    expect(bed.fake.resource(value)).toMatchObject({ parent: key, shortName: "prod" });
    // OUTPUT_ONLY in atProvider: state, etag, namespacedName.
    expect((await getMr<Json>(kube, def("TagValue"), v))?.status?.atProvider).toMatchObject({
      namespacedName: `${project.split("/")[1]}/env/prod`,
      etag: expect.any(String),
    });

    // Drift (a console edit) is put back, with an update mask of only that field.
    bed.fake.mutate(folder, { displayName: "console" });
    bed.fake.mutate(value, { description: "console" });
    await kube.patch(def("TagValue"), v, { spec: { forProvider: { description: "mine" } } });
    for (const [kind, n] of [
      ["Folder", f],
      ["TagValue", v],
    ] as const) {
      await settle(bed.reconciler, keyOf(def(kind), n));
      await settle(bed.reconciler, keyOf(def(kind), n));
    }
    expect(bed.fake.resource(folder)?.displayName).toBe(f.slice(0, 30));
    expect(bed.fake.resource(value)?.description).toBe("mine");

    // A changed parent is refused (never a move): the parent is the Folder's home, so Synced=False names the
    // recorded one and nothing is read or written; Google's folder stays put.
    await kube.patch(def("Folder"), f, { spec: { forProvider: { parent: "organizations/999" } } });
    await bed.reconciler.reconcile(keyOf(def("Folder"), f));
    const moved = await getMr<Json>(kube, def("Folder"), f);
    expect(conditionOf(moved, "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining(`lives in parent "${ORG}"`),
    });
    expect(bed.fake.resource(folder)?.parent).toBe(ORG);
    await kube.patch(def("Folder"), f, { spec: { forProvider: { parent: ORG } } });

    // Deletes, children first: TagValue and TagKey go; the Project and the Folder are only marked
    // DELETE_REQUESTED by Google, which the managed resources read as gone.
    await gone("TagValue", v);
    expect(bed.fake.resource(value)).toBeUndefined();
    await gone("TagKey", k);
    await gone("Project", p);
    expect(bed.fake.resource(project)).toMatchObject({
      state: "DELETE_REQUESTED",
      deleteTime: expect.any(String),
    });
    await gone("Folder", f);
    expect(bed.fake.resource(folder)?.state).toBe("DELETE_REQUESTED");
    expect((await listed("folders", ORG)) ?? []).not.toContainEqual(
      expect.objectContaining({ name: folder }),
    );
  });

  it("a soft-deleted project's id is refused on a re-create with Google's error in Synced, never undeleted", {
    timeout: 60_000,
  }, async () => {
    const [f, p] = [uniqueName("rm-f2"), uniqueName("rm-p2")];
    const folder = await make("Folder", f, { parent: ORG, displayName: f.slice(0, 30) });
    const project = await make("Project", p, { parent: folder });
    // Deleted in the console: DELETE_REQUESTED, so the managed resource's project does not exist.
    await (await fetch(`${bed.fake.url}/cloudresourcemanager/v3/${project}`, { method: "DELETE" })).text();
    await settle(bed.reconciler, keyOf(def("Project"), p));
    const mr = await getMr<Json>(kube, def("Project"), p);
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("FAILED_PRECONDITION"),
    });
    // Google's own message is kept only from Google's hosts (the fake is not one): its status and reason are.
    expect(conditionOf(mr, "Synced")?.message).toContain("cannot create external resource");
    expect(bed.fake.resource(project)?.state).toBe("DELETE_REQUESTED");
    await gone("Project", p);
    await gone("Folder", f);
  });

  it("a create whose answer is lost is found again by its unique shortName: one TagValue, never two", {
    timeout: 60_000,
  }, async () => {
    const [k, v] = [uniqueName("rm-k3"), uniqueName("rm-v3")];
    const key = await make("TagKey", k, { parent: ORG, shortName: "team" });
    await kube.create(
      def("TagValue"),
      managedObject(def("TagValue"), v, PC, {
        forProvider: { parent: key, shortName: "blue" },
        connectionSecret: false,
      }),
    );
    // Google makes it; the answer never arrives.
    bed.fake.loseAnswerNext(/^POST cloudresourcemanager /);
    const first = await bed.reconciler.reconcile(keyOf(def("TagValue"), v));
    expect(first.outcome).toBe("error");
    expect(
      (await getMr(kube, def("TagValue"), v))?.metadata.annotations?.[Annotations.externalName],
    ).toBeUndefined();
    const before = bed.fake.stats();
    await settle(bed.reconciler, keyOf(def("TagValue"), v));
    await settle(bed.reconciler, keyOf(def("TagValue"), v));
    const mine = (await listed("tagValues", key)) ?? [];
    expect(mine).toHaveLength(1);
    const mr = await getMr<Json>(kube, def("TagValue"), v);
    expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(mine[0]?.name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    // No second create was sent.
    expect(requestsSince(bed.fake, before, /^POST/)).toEqual([]);
    await gone("TagValue", v);
    await gone("TagKey", k);
  });
});

describe("a TagKey under projects/<id> (Google answers projects/<number>)", () => {
  it("stays in sync, nothing patched; another project is refused as a changed parent", {
    timeout: 90_000,
  }, async () => {
    const [f, p, k] = [uniqueName("rm-f4"), uniqueName("rm-p4"), uniqueName("rm-k4")];
    const folder = await make("Folder", f, { parent: ORG, displayName: f.slice(0, 30) });
    const project = await make("Project", p, { parent: folder });
    const key = await make("TagKey", k, { parent: `projects/${p}`, shortName: "tier" });
    expect(bed.fake.resource(key)?.parent).toBe(project);
    const before = bed.fake.stats();
    await settle(bed.reconciler, keyOf(def("TagKey"), k));
    await settle(bed.reconciler, keyOf(def("TagKey"), k));
    const mr = await getMr<Json>(kube, def("TagKey"), k);
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.spec.forProvider.parent).toBe(`projects/${p}`);
    expect(requestsSince(bed.fake, before, /^(PATCH|POST)/)).toEqual([]);
    // Written in the number form of the same project: the same home, still in sync, nothing sent to Google.
    await kube.patch(def("TagKey"), k, { spec: { forProvider: { parent: project } } });
    await settle(bed.reconciler, keyOf(def("TagKey"), k));
    await settle(bed.reconciler, keyOf(def("TagKey"), k));
    const switched = await getMr<Json>(kube, def("TagKey"), k);
    expect(conditionOf(switched, "Synced"), JSON.stringify(switched?.status)).toMatchObject({
      status: "True",
    });
    expect(conditionOf(switched, "Ready")).toMatchObject({ status: "True" });
    expect(requestsSince(bed.fake, before, /^(PATCH|POST)/)).toEqual([]);
    // Written as another project's id: a changed parent, refused (the recorded home), Google's key untouched.
    await kube.patch(def("TagKey"), k, { spec: { forProvider: { parent: "projects/someone-else" } } });
    await bed.reconciler.reconcile(keyOf(def("TagKey"), k));
    expect(conditionOf(await getMr<Json>(kube, def("TagKey"), k), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining(
        `lives in parent "projects/${p}", but its spec and ProviderConfig now reach parent "projects/someone-else"`,
      ),
    });
    expect(bed.fake.resource(key)?.parent).toBe(project);
    await kube.patch(def("TagKey"), k, { spec: { forProvider: { parent: `projects/${p}` } } });
    await gone("TagKey", k);
    await gone("Project", p);
    await gone("Folder", f);
  });
});

describe("a Project without a parent", () => {
  it("is created with none and stays in sync; a parent set later is refused, never a move", {
    timeout: 90_000,
  }, async () => {
    const p = uniqueName("rm-np");
    const project = await make("Project", p, { displayName: "no parent" });
    expect(project).toMatch(/^projects\/\d+$/);
    expect(bed.fake.resource(project)?.parent).toBeUndefined();
    await settle(bed.reconciler, keyOf(def("Project"), p));
    const mr = await getMr<Json>(kube, def("Project"), p);
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.spec.forProvider.parent).toBeUndefined();
    const before = bed.fake.stats();
    await kube.patch(def("Project"), p, { spec: { forProvider: { parent: ORG } } });
    await bed.reconciler.reconcile(keyOf(def("Project"), p));
    expect(conditionOf(await getMr<Json>(kube, def("Project"), p), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining("parent"),
    });
    expect(bed.fake.resource(project)?.parent).toBeUndefined();
    expect(requestsSince(bed.fake, before, /^(PATCH|POST)/)).toEqual([]);
    await gone("Project", p);
  });
});

describe("driftless import under a given parent", () => {
  it("lists an organization's folders with ?parent=, skips the managed one; the written Folder becomes Ready in Observe", {
    timeout: 120_000,
  }, async () => {
    const org = `organizations/${Date.now() % 1_000_000_000}`;
    const f = uniqueName("rm-imp");
    const managed = await make("Folder", f, { parent: org, displayName: f.slice(0, 30) });
    const byHand = await fetch(`${bed.fake.url}/cloudresourcemanager/v3/folders`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ parent: org, displayName: "made by hand" }),
    });
    expect(byHand.status, await byHand.text()).toBe(200);
    const folder = (await listed("folders", org))?.find((x) => x.displayName === "made by hand");
    expect(folder?.name).toMatch(/^folders\/\d+$/);
    const out = mkdtempSync(join(tmpdir(), "driftless-import-rm-"));
    const activate = { DRIFTLESS_ACTIVATE: `${def("Folder").plural}.${def("Folder").group}` };
    const args = ["import", "--provider-config", PC, "--kinds", "cloudresourcemanager.folder", "-o", out];
    // Without a parent it is named as not listable, with why.
    const without = await cli(args, { env: activate });
    expect(without.code, without.stderr).toBe(0);
    expect(without.stderr).toContain("--parent");
    const res = await cli([...args, "--parent", org], { env: activate });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^cloudresourcemanager\.folder: 2 found, 1 written, 1 already managed$/m);
    const objects = readdirSync(out).map((x) => parse(readFileSync(join(out, x), "utf8")) as Json);
    const written = objects.find(
      (o) => (o.metadata as { annotations?: Json }).annotations?.[Annotations.externalName] === folder?.name,
    );
    expect(written?.spec).toEqual({
      managementPolicies: ["Observe"],
      providerConfigRef: { name: PC },
      forProvider: { parent: org },
    });
    expect(objects.map((o) => (o.metadata as Json).annotations)).not.toContainEqual(
      expect.objectContaining({ [Annotations.externalName]: managed }),
    );
    const name = String((written?.metadata as Json | undefined)?.name);
    const posts = bed.fake.stats();
    await kube.create(def("Folder"), written as never);
    await settle(bed.reconciler, keyOf(def("Folder"), name));
    await settle(bed.reconciler, keyOf(def("Folder"), name));
    const mr = await getMr<Json>(kube, def("Folder"), name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(requestsSince(bed.fake, posts, /^(PATCH|POST|DELETE)/)).toEqual([]);
    await kube.delete(def("Folder"), name);
    await settle(bed.reconciler, keyOf(def("Folder"), name));
    expect(bed.fake.resource(String(folder?.name))?.state).toBe("ACTIVE");
    await gone("Folder", f);
  });
});
