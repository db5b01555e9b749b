// `driftless import --parent` beyond Resource Manager, and `--depth` walking down levels, by the real CLI on
// the real kube-apiserver against the generic Google fake. A Data Catalog Entry (its parent
// `projects/*/locations/*/entryGroups/*` a spec field, `{parent}` in its list path) is listed under the entry
// group given, the managed one skipped, the written one Ready in Observe with no write to Google. With
// `--depth`, the kinds whose parent is a spec field are listed again under every resource found whose name
// fits their parent (an organization's folders, their folders and projects, a project's tag keys, a tag key's
// values), bounded by the depth, what is already managed never written, and what the bound left unwalked named.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { MAX_IMPORT_PARENTS } from "../../../shared/ops/import-limits.ts";
import { managedObject } from "../../support/conformance.ts";
import { removeCrds } from "../../support/crd-holds.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { requestsSince, serveGoogleKinds } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import type { Reconciler } from "../../support/routed.ts";
import { cli } from "../cli/helpers.ts";

type Json = Record<string, unknown>;
const TYPES = {
  EntryGroup: "datacatalog.googleapis.com/EntryGroup",
  Entry: "datacatalog.googleapis.com/Entry",
  Folder: "cloudresourcemanager.googleapis.com/Folder",
  Project: "cloudresourcemanager.googleapis.com/Project",
  TagKey: "cloudresourcemanager.googleapis.com/TagKey",
  TagValue: "cloudresourcemanager.googleapis.com/TagValue",
} as const;
type Kind = keyof typeof TYPES;

const kube = newKube();
const PC = uniqueName("gcpimp");
let fake: GoogleGenericFake;
let r: Reconciler;
const defs = new Map<Kind, ManagedKindDef>();
const def = (k: Kind) => defs.get(k) as ManagedKindDef;
const activate = () => ({
  DRIFTLESS_ACTIVATE: [...defs.values()].map((d) => `${d.plural}.${d.group}`).join(","),
});

beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 0 });
  const catalog = loadGoogleCatalog();
  const specs: GoogleKindSpec[] = [];
  for (const [k, t] of Object.entries(TYPES) as Array<[Kind, string]>) {
    const e = catalog.kinds.find((x) => x.typeName === t && x.kind === k);
    if (!e) throw new Error(`${t} is not generated`);
    const s = loadGoogleSpec(e);
    specs.push(s);
    defs.set(k, googleKindOf(s));
  }
  r = await serveGoogleKinds(kube, { specs, defs: [...defs.values()], pc: PC, fakeUrl: fake.url });
}, 120_000);

afterAll(async () => {
  await removeCrds(kube, [...defs.values()]);
  await fake?.close();
});

/** A resource made in Google by hand (the console): the fake's own API, the operation done at once. */
const byHand = async (path: string, body: Json): Promise<string> => {
  const res = await fetch(`${fake.url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out = (await res.json()) as Json;
  expect(res.status, JSON.stringify(out)).toBe(200);
  const made = (out.response as Json | undefined)?.name ?? out.name;
  expect(typeof made).toBe("string");
  return String(made);
};

const settled = async (k: Kind, name: string) => {
  await settle(r, keyOf(def(k), name));
  await settle(r, keyOf(def(k), name));
  return getMr<Json>(kube, def(k), name);
};

/** Writes what `driftless import` wrote, by external name. */
const written = (dir: string) =>
  new Map(
    readdirSync(dir).map((x) => {
      const o = parse(readFileSync(join(dir, x), "utf8")) as Json;
      const name = (o.metadata as { annotations?: Json }).annotations?.[Annotations.externalName];
      return [String(name), o] as const;
    }),
  );

/** A managed Entry under `parent`, its external name the entry id from `name`, reconciled to Ready. */
const readyEntry = async (name: string, parent: string, system: string) => {
  await kube.create(
    def("Entry"),
    managedObject(def("Entry"), name, PC, {
      forProvider: { parent, userSpecifiedSystem: system, userSpecifiedType: "t" },
      // Entry ids take letters, digits and underscores only.
      annotations: { [Annotations.externalName]: name.replaceAll("-", "_") },
      connectionSecret: false,
    }),
  );
  const made = await settled("Entry", name);
  expect(conditionOf(made, "Ready"), JSON.stringify(made?.status)).toMatchObject({ status: "True" });
  return made;
};

const writes = (before: Record<string, number>) =>
  Object.entries(fake.stats()).filter(([x, n]) => /^(PATCH|POST|DELETE)/.test(x) && n > (before[x] ?? 0));

describe("driftless import --parent for another API's kind (Data Catalog Entry)", () => {
  it("lists an entry group's entries ({parent} in the path), skips the managed one; the written Entry is Ready in Observe", {
    timeout: 120_000,
  }, async () => {
    const group = `projects/p/locations/us-central1/entryGroups/${uniqueName("eg").replaceAll("-", "_")}`;
    const mine = uniqueName("entry-mine");
    await readyEntry(mine, group, "mine");
    const console = await byHand(`datacatalog/v1/${group}/entries?entryId=by_hand`, {
      userSpecifiedSystem: "console",
      userSpecifiedType: "t",
    });
    expect(console).toBe(`${group}/entries/by_hand`);
    const out = mkdtempSync(join(tmpdir(), "driftless-import-entry-"));
    const args = ["import", "--provider-config", PC, "--kinds", "datacatalog.entry", "-o", out];
    const without = await cli(args, { env: activate() });
    expect(without.code, without.stderr).toBe(0);
    expect(without.stderr).toMatch(/^datacatalog\.entry: not imported: .*--parent/m);
    const res = await cli([...args, "--parent", group], { env: activate() });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^datacatalog\.entry: 2 found, 1 written, 1 already managed$/m);
    // Named as a create names it: the entry id within its parent (the managed one holds `mine_…`, not the
    // full name Google lists, and is still skipped).
    const objects = written(out);
    expect([...objects.keys()]).toEqual(["by_hand"]);
    const obj = objects.get("by_hand") as Json;
    expect(obj.spec).toEqual({
      managementPolicies: ["Observe"],
      providerConfigRef: { name: PC },
      forProvider: { parent: group },
    });
    const name = String((obj.metadata as Json).name);
    const before = fake.stats();
    await kube.create(def("Entry"), obj as never);
    const mr = await settled("Entry", name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(mr?.status?.atProvider).toMatchObject({ name: console });
    expect(writes(before)).toEqual([]);
    await kube.delete(def("Entry"), name);
    await settle(r, keyOf(def("Entry"), name));
    expect(fake.resource(console)).toBeDefined();
    await kube.delete(def("Entry"), mine);
    await settle(r, keyOf(def("Entry"), mine));
  });
});

describe("an Entry whose parent names its project by id, then by its number", () => {
  it("is one home: in sync and nothing sent to Google; another location is refused, the message naming both", {
    timeout: 120_000,
  }, async () => {
    const org = `organizations/${(Date.now() % 1_000_000_000) + 11}`;
    const pid = uniqueName("pn-p").slice(0, 30);
    const project = await byHand("cloudresourcemanager/v3/projects", { parent: org, projectId: pid });
    expect(project).toMatch(/^projects\/\d+$/);
    const gid = uniqueName("eg").replaceAll("-", "_");
    await byHand(`datacatalog/v1/projects/${pid}/locations/us/entryGroups?entryGroupId=${gid}`, {});
    const byId = `projects/${pid}/locations/us/entryGroups/${gid}`;
    const byNumber = `${project}/locations/us/entryGroups/${gid}`;
    const e = uniqueName("entry-pn");
    const made = await readyEntry(e, byId, "pn");
    // Google answers the entry's name with the project's number.
    const full = String(made?.status?.atProvider?.name);
    expect(full).toBe(`${byNumber}/entries/${e.replaceAll("-", "_")}`);
    const before = fake.stats();
    await kube.patch(def("Entry"), e, { spec: { forProvider: { parent: byNumber } } });
    const switched = await settled("Entry", e);
    expect(conditionOf(switched, "Synced"), JSON.stringify(switched?.status)).toMatchObject({
      status: "True",
    });
    expect(conditionOf(switched, "Ready")).toMatchObject({ status: "True" });
    expect(writes(before)).toEqual([]);
    // Another location of the same project: a changed home, refused, nothing sent.
    const elsewhere = byNumber.replace("/us/", "/europe-west1/");
    await kube.patch(def("Entry"), e, { spec: { forProvider: { parent: elsewhere } } });
    await r.reconcile(keyOf(def("Entry"), e));
    expect(conditionOf(await getMr<Json>(kube, def("Entry"), e), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining(
        `lives in parent "${byId}", but its spec and ProviderConfig now reach parent "${elsewhere}"`,
      ),
    });
    expect(writes(before)).toEqual([]);
    await kube.patch(def("Entry"), e, { spec: { forProvider: { parent: byId } } });
    await kube.delete(def("Entry"), e);
    await settle(r, keyOf(def("Entry"), e));
    expect(await getMr<Json>(kube, def("Entry"), e)).toBeUndefined();
    expect(fake.resource(full)).toBeUndefined();
  });
});

describe("driftless import --depth (walks down levels)", () => {
  it("lists each kind whose parent is a spec field under every resource found, to the depth given; managed ones skipped, not walked ones named", {
    timeout: 180_000,
  }, async () => {
    const org = `organizations/${(Date.now() % 1_000_000_000) + 7}`;
    const rm = "cloudresourcemanager/v3";
    // organizations/N ─ Fa ─ Fb ─ project P ─ TagKey K ─ TagValue V
    //                 │    └ M (managed by driftless) ─ Fc
    //                 └ TagKey K0
    const fa = await byHand(`${rm}/folders`, { parent: org, displayName: "fa" });
    const fb = await byHand(`${rm}/folders`, { parent: fa, displayName: "fb" });
    const pid = uniqueName("imp-p").slice(0, 30);
    const p = await byHand(`${rm}/projects`, { parent: fb, projectId: pid, displayName: "p" });
    const k = await byHand(`${rm}/tagKeys`, { parent: `projects/${pid}`, shortName: "k" });
    const v = await byHand(`${rm}/tagValues`, { parent: k, shortName: "v" });
    const k0 = await byHand(`${rm}/tagKeys`, { parent: org, shortName: "k0" });
    const m = uniqueName("imp-m");
    await kube.create(
      def("Folder"),
      managedObject(def("Folder"), m, PC, {
        forProvider: { parent: fa, displayName: "m" },
        connectionSecret: false,
      }),
    );
    const mmr = await settled("Folder", m);
    expect(conditionOf(mmr, "Ready"), JSON.stringify(mmr?.status)).toMatchObject({ status: "True" });
    const mf = String(mmr?.metadata.annotations?.[Annotations.externalName]);
    const fc = await byHand(`${rm}/folders`, { parent: mf, displayName: "fc" });
    const before = fake.stats();

    const importArgs = (out: string, ...more: string[]) => [
      "import",
      "--provider-config",
      PC,
      "--kinds",
      "cloudresourcemanager.*",
      "-o",
      out,
      ...more,
    ];
    const run = async (depth?: number) => {
      const out = mkdtempSync(join(tmpdir(), "driftless-import-depth-"));
      const more = depth === undefined ? [] : ["--depth", String(depth)];
      const res = await cli(importArgs(out, "--parent", org, ...more), { env: activate() });
      expect(res.code, res.stderr).toBe(0);
      return { res, objects: written(out) };
    };

    // Without --depth: only what lies directly under the organization (as before).
    const flat = await run();
    expect(flat.res.stdout).toMatch(/^cloudresourcemanager\.folder: 1 found, 1 written, 0 already managed$/m);
    expect(flat.res.stdout).toMatch(/^cloudresourcemanager\.tagkey: 1 found, 1 written, 0 already managed$/m);
    expect([...flat.objects.keys()].sort()).toEqual([fa, k0].sort());
    expect(flat.res.stderr).toMatch(/^cloudresourcemanager\.tagvalue: not imported: .*not one of tagKeys/m);

    // --depth 3: three levels below the organization; the TagKey K's values (a fourth) are not walked.
    const three = await run(3);
    expect(three.res.stdout).toMatch(
      /^cloudresourcemanager\.folder: 4 found, 3 written, 1 already managed$/m,
    );
    expect(three.res.stdout).toMatch(
      /^cloudresourcemanager\.project: 1 found, 1 written, 0 already managed$/m,
    );
    expect(three.res.stdout).toMatch(
      /^cloudresourcemanager\.tagkey: 2 found, 2 written, 0 already managed$/m,
    );
    expect(three.res.stdout).toMatch(
      /^cloudresourcemanager\.tagvalue: 0 found, 0 written, 0 already managed$/m,
    );
    expect(three.res.stdout).toMatch(
      /^walked 3 levels below organizations\/\d+: \d+ lists under 7 parents$/m,
    );
    expect(three.res.stdout).toContain(`not walked (--depth 3 reached): 1 parent: ${k}`);
    // Nothing of the managed folder is written; what lies under it is.
    expect([...three.objects.keys()].sort()).toEqual([fa, fb, fc, pid, k, k0].sort());
    expect(three.objects.get(pid)?.spec).toMatchObject({ forProvider: { parent: fb } });
    expect(three.objects.get(k)?.spec).toMatchObject({ forProvider: { parent: p } });
    expect(three.objects.get(fc)?.spec).toMatchObject({ forProvider: { parent: mf } });
    // The TagValue is not named as not listable: it was listed under the tag keys found.
    expect(three.res.stderr).not.toContain("cloudresourcemanager.tagvalue");

    // --depth 4 reaches the value; nothing is left unwalked.
    const four = await run(4);
    expect(four.res.stdout).toMatch(
      /^cloudresourcemanager\.tagvalue: 1 found, 1 written, 0 already managed$/m,
    );
    expect(four.res.stdout).not.toContain("not walked");
    expect(four.objects.get(v)?.spec).toMatchObject({ forProvider: { parent: k } });
    expect(four.objects.size).toBe(7);

    // A depth beyond the bound is refused before anything is listed.
    const listsBefore = JSON.stringify(fake.stats());
    const tooDeep = await cli(importArgs(tmpdir(), "--depth", "11"), { env: activate() });
    expect(tooDeep.code).not.toBe(0);
    expect(tooDeep.stderr).toContain("--depth");
    expect(JSON.stringify(fake.stats())).toBe(listsBefore);

    // The imported TagValue is Ready in Observe; nothing was ever written to Google by the imports.
    const vo = four.objects.get(v) as Json;
    await kube.create(def("TagValue"), vo as never);
    const vmr = await settled("TagValue", String((vo.metadata as Json).name));
    expect(conditionOf(vmr, "Ready"), JSON.stringify(vmr?.status)).toMatchObject({ status: "True" });
    expect(writes(before)).toEqual([]);
    await kube.delete(def("TagValue"), String((vo.metadata as Json).name));
    await settle(r, keyOf(def("TagValue"), String((vo.metadata as Json).name)));
    expect(fake.resource(v)).toBeDefined();
    // The managed folder holds a folder driftless does not manage: left in Google, only the object goes.
    await kube.patch(def("Folder"), m, { spec: { deletionPolicy: "Orphan" } });
    await kube.delete(def("Folder"), m);
    expect(await settled("Folder", m)).toBeUndefined();
    expect(fake.resource(mf)?.state).toBe("ACTIVE");
  });
});

describe("driftless import --depth: the bound of MAX_IMPORT_PARENTS parents", () => {
  it("lists under at most that many parents in one run and names every one it did not walk", {
    timeout: 300_000,
  }, async () => {
    const org = `organizations/${(Date.now() % 1_000_000_000) + 13}`;
    // One more folder under the organization than the walk may list under (the organization counts too).
    const folders: string[] = [];
    for (let i = 0; i < MAX_IMPORT_PARENTS + 1; i += 50) {
      const batch = Array.from({ length: Math.min(50, MAX_IMPORT_PARENTS + 1 - i) }, (_, j) =>
        byHand("cloudresourcemanager/v3/folders", { parent: org, displayName: `wide-${i + j}` }),
      );
      folders.push(...(await Promise.all(batch)));
    }
    const before = fake.stats();
    const out = mkdtempSync(join(tmpdir(), "driftless-import-wide-"));
    const args = ["import", "--provider-config", PC, "--kinds", "cloudresourcemanager.folder", "-o", out];
    const res = await cli([...args, "--parent", org, "--depth", "1"], { env: activate() });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      new RegExp(
        `^cloudresourcemanager\\.folder: ${folders.length} found, ${folders.length} written, 0 already managed$`,
        "m",
      ),
    );
    // The organization and 999 folders were listed under; the last 2 folders found were not.
    expect(res.stdout).toMatch(
      new RegExp(
        `^walked 1 level below ${org}: ${MAX_IMPORT_PARENTS - 1} lists under ${MAX_IMPORT_PARENTS} parents$`,
        "m",
      ),
    );
    const line = res.stdout.split("\n").find((l) => l.startsWith("not walked")) ?? "";
    expect(line).toBe(
      `not walked (${MAX_IMPORT_PARENTS} parents reached): 2 parents: ${folders.slice(-2).join(", ")}`,
    );
    // Lists under the organization (3 pages of 500) and under each walked folder: no list under the 2 others.
    const lists = requestsSince(fake, before, /^GET cloudresourcemanager /).reduce(
      (n, [k, now]) => n + now - (before[k] ?? 0),
      0,
    );
    expect(lists).toBe(3 + MAX_IMPORT_PARENTS - 1);
    expect(writes(before)).toEqual([]);
  });
});

describe("driftless import --depth without --parent (from an account-wide kind)", () => {
  it("lists the project's entry groups, then each one's entries", { timeout: 120_000 }, async () => {
    const id = uniqueName("eg_walk").replaceAll("-", "_");
    const group = `projects/${gcpProject()}/locations/europe-west1/entryGroups/${id}`;
    expect(
      await byHand(
        `datacatalog/v1/${group.replace(/\/entryGroups\/.*$/, "")}/entryGroups?entryGroupId=${id}`,
        {},
      ),
    ).toBe(group);
    for (const e of ["one", "two"])
      await byHand(`datacatalog/v1/${group}/entries?entryId=${e}`, {
        userSpecifiedSystem: "s",
        userSpecifiedType: "t",
      });
    const out = mkdtempSync(join(tmpdir(), "driftless-import-walk-"));
    const res = await cli(
      [
        "import",
        "--provider-config",
        PC,
        "--kinds",
        "datacatalog.entrygroup,datacatalog.entry",
        "-o",
        out,
        "--depth",
        "1",
      ],
      { env: activate() },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^datacatalog\.entrygroup: 1 found, 1 written, 0 already managed$/m);
    expect(res.stdout).toMatch(/^datacatalog\.entry: 2 found, 2 written, 0 already managed$/m);
    expect(res.stdout).toMatch(/^walked 1 level below what was listed: 1 list under 1 parent$/m);
    // Listed below the group, the entry kind is not named as not listable.
    expect(res.stderr).not.toContain("datacatalog.entry");
    const objects = written(out);
    expect([...objects.keys()].sort()).toEqual([id, "one", "two"].sort());
    expect(objects.get("one")?.spec).toMatchObject({ forProvider: { parent: group } });
    expect(objects.get(id)?.spec).toMatchObject({ forProvider: { location: "europe-west1" } });
  });
});
