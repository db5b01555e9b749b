// Resource Manager v3's Folder, Project, TagKey and TagValue as generated kinds: created at a top-level
// collection with the parent in the body (a third parent style), their parent the immutable home with a
// reference to the kind above, the field unique in the parent that finds a lost create again, and the soft
// delete of Folder and Project.
import { describe, expect, it } from "vitest";
import type { GoogleGenericFake } from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { InvalidSpecError, NotListableError, recordedHome } from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { findsByOwnerLabel, findsByUniqueField, googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { homeChanges } from "../../../shared/reconciler/plan.ts";
import { connectGoogle, withGoogleFake } from "../../support/gcp-generated.ts";

const RM = "cloudresourcemanager.googleapis.com";
const spec = (kind: string): GoogleKindSpec => {
  const e = loadGoogleCatalog().kinds.find((k) => k.typeName === `${RM}/${kind}`);
  if (!e) throw new Error(`${kind} is not generated`);
  return loadGoogleSpec(e);
};

/** A managed resource of the given forProvider, named and with a uid. */
const mrNamed = (name: string, uid: string) => (forProvider: Record<string, unknown>) =>
  ({
    metadata: { name, uid, annotations: {} },
    spec: { forProvider },
  }) as unknown as ManagedResource<Record<string, unknown>, Record<string, unknown>>;

let fake: GoogleGenericFake;
withGoogleFake({ opPolls: 0 }, (f) => {
  fake = f;
});

describe("Resource Manager v3 kinds", () => {
  it("are generated, none of them skipped", () => {
    const c = loadGoogleCatalog();
    expect(c.skipped.filter((s) => s.typeName.startsWith(`${RM}/`))).toEqual([]);
    for (const k of ["Folder", "Project", "TagKey", "TagValue"])
      expect(spec(k).group).toBe("cloudresourcemanager.googleapis");
  });

  it("take the parent in the body, as their home: immutable, one of the documented kinds, by reference", () => {
    const cases = [
      ["Folder", "organizations/*|folders/*", "Folder"],
      ["Project", "organizations/*|folders/*", "Folder"],
      ["TagKey", "organizations/*|projects/*", "Project"],
      ["TagValue", "tagKeys/*", "TagKey"],
    ] as const;
    for (const [kind, template, to] of cases) {
      const s = spec(kind);
      expect(s.google.create?.p).toMatch(/^\/v3\/[a-zA-Z]+$/);
      expect(s.google.parent).toEqual({
        template,
        home: [],
        explicit: true,
        inBody: true,
        ...(kind === "Project" ? { optional: true } : {}),
      });
      expect(s.google.refs).toContainEqual(expect.objectContaining({ field: "parent", kind: to }));
      expect(googleKindOf(s).immutable).toContain("parent");
    }
  });

  it("name Folder, TagKey and TagValue by Google and find a lost create by the field unique in the parent", () => {
    for (const [kind, field] of [
      ["Folder", "displayName"],
      ["TagKey", "shortName"],
      ["TagValue", "shortName"],
    ] as const) {
      const s = spec(kind);
      expect(s.externalName).toBe("providerChosen");
      expect(s.google.uniqueIn).toBe(field);
      // Required here: without it a second create could not be told from the first.
      expect(s.properties[field]?.req).toBe(true);
      expect(findsByUniqueField(s)).toBe(true);
      expect(findsByOwnerLabel(s)).toBe(false);
      expect(googleKindOf(s).ownershipLookup).toBe(true);
    }
  });

  it("name a Project by the user's projectId; its resource name projects/{number} is atProvider's", () => {
    const s = spec("Project");
    expect(s.externalName).toBe("fromAnnotation");
    expect(s.identifierField).toBe("projectId");
    expect(s.attributes.name).toBeDefined();
    expect(googleKindOf(s).description).toContain("(projectId)");
  });

  it("read Folder's and Project's soft delete as gone; keep etag and state server state", () => {
    for (const kind of ["Folder", "Project"]) {
      expect(spec(kind).google.softDelete).toBe("DELETE_REQUESTED");
      expect(googleKindOf(spec(kind)).description).toContain("DELETE_REQUESTED");
      expect(spec(kind).attributes.state).toBeDefined();
    }
    for (const kind of ["TagKey", "TagValue"]) {
      expect(spec(kind).google.softDelete).toBeUndefined();
      expect(spec(kind).attributes.etag).toBeDefined();
      expect(spec(kind).properties.etag).toBeUndefined();
    }
  });
});

describe("the generic provider on a top-level collection", () => {
  const connect = (s: GoogleKindSpec) => connectGoogle(s, fake.url);
  const mr = mrNamed("f", "u1");

  it("refuses a parent of a kind Google does not take, before any call", async () => {
    const client = await connect(spec("TagValue"));
    const before = JSON.stringify(fake.stats());
    await expect(client.create(mr({ parent: "organizations/1", shortName: "x" }), undefined)).rejects.toThrow(
      InvalidSpecError,
    );
    expect(JSON.stringify(fake.stats())).toBe(before);
  });

  it("checks a sweep's Folders with one list per parent (?parent=); a soft-deleted one is gone", async () => {
    const client = await connect(spec("Folder"));
    const made: Array<{ fp: Record<string, unknown>; name: string }> = [];
    for (const [parent, displayName] of [
      ["organizations/7", "a"],
      ["organizations/7", "b"],
      ["organizations/7", "c"],
      ["organizations/8", "a"],
    ] as const) {
      const fp = { parent, displayName };
      const out = await client.create(mr(fp), undefined);
      made.push({ fp, name: String(out.externalName) });
    }
    expect(made.map((m) => m.name)).toEqual(made.map(() => expect.stringMatching(/^folders\/\d+$/)));
    // One is deleted (Google marks it DELETE_REQUESTED and still answers a GET with it).
    await client.delete(mr(made[2]?.fp ?? {}), made[2]?.name as string);
    expect(fake.resource(made[2]?.name as string)?.state).toBe("DELETE_REQUESTED");
    fake.reset();
    const seen = await client.observeMany?.(made.map((m) => ({ mr: mr(m.fp), externalName: m.name })));
    expect(seen?.map((o) => (o instanceof Error ? o.message : o.resourceExists))).toEqual([
      true,
      true,
      false,
      true,
    ]);
    // Two lists (one per organization) and one GET, for the one the lists do not show: 3 calls, not 4 GETs.
    expect(Object.values(fake.stats()).reduce((a, b) => a + b, 0)).toBe(3);
  });
});

describe("a parent written projects/<id> against Google's projects/<number>", () => {
  const connect = (s: GoogleKindSpec) => connectGoogle(s, fake.url);
  const mr = mrNamed("k", "u2");
  const calls = () => Object.values(fake.stats()).reduce((a, b) => a + b, 0);

  it("reads as the same parent (one projects.get per project and container); another project stays a change", async () => {
    const projects = await connect(spec("Project"));
    for (const id of ["tag-home-1", "tag-home-2"])
      await projects.create(mr({ parent: "organizations/7", projectId: id }), id);
    const number = String(
      (await projects.observe(mr({ parent: "organizations/7" }), "tag-home-1")).atProvider?.name,
    );
    expect(number).toMatch(/^projects\/\d+$/);
    const keys = await connect(spec("TagKey"));
    const fp = { parent: "projects/tag-home-1", shortName: "env" };
    const made = String((await keys.create(mr(fp), undefined)).externalName);
    // Google answers the project's number form, whatever form the parent was sent in.
    expect(fake.resource(made)?.parent).toBe(number);
    fake.reset();
    const seen = await keys.observe(mr(fp), made);
    expect(seen.observed?.parent).toBe("projects/tag-home-1");
    const first = calls();
    expect(first).toBe(2); // the TagKey, and projects.get of tag-home-1
    await keys.observe(mr(fp), made);
    expect(calls() - first).toBe(1); // resolved once: only the TagKey
    // Reading the parent project is in the kind's permissions (and so in its custom role).
    expect(spec("TagKey").permissions.read).toContain("resourcemanager.projects.get");
    expect(spec("TagValue").permissions.read).not.toContain("resourcemanager.projects.get");
    // The number form is the same project without a call.
    expect((await keys.observe(mr({ ...fp, parent: number }), made)).observed?.parent).toBe(number);
    // Another project is a changed parent: Google's answer stands (immutable, refused by the engine).
    const other = await keys.observe(mr({ ...fp, parent: "projects/tag-home-2" }), made);
    expect(other.observed?.parent).toBe(number);
    // The batched check agrees (its list takes the id form as Google's does).
    const many = await keys.observeMany?.([{ mr: mr(fp), externalName: made }]);
    const checked = many?.[0] as { observed?: Record<string, unknown> } | undefined;
    expect(checked?.observed?.parent).toBe("projects/tag-home-1");
  });
});

describe("the home of a TagKey whose parent is a project (id or number form)", () => {
  const calls = () => Object.values(fake.stats()).reduce((a, b) => a + b, 0);
  /** A TagKey whose spec says `parent` and whose recorded home (create or import) says `recorded`. */
  const tagKey = (parent: string, recorded?: string) =>
    ({
      metadata: {
        name: "hk",
        uid: "u5",
        annotations: recorded
          ? { [Annotations.home]: JSON.stringify({ parent: recorded, project: "p" }) }
          : {},
      },
      spec: { forProvider: { parent, shortName: "h" } },
    }) as unknown as ManagedResource<Record<string, unknown>, Record<string, unknown>>;

  it("is one home for both forms of one project (one projects.get per id); another or unknown project is a changed home", async () => {
    const projects = await connectGoogle(spec("Project"), fake.url);
    for (const id of ["home-form-1", "home-form-2"])
      await projects.create(mrNamed("hp", "u6")({ parent: "organizations/7", projectId: id }), id);
    const numberOf = async (id: string) =>
      String(
        (await projects.observe(mrNamed("hp", "u6")({ parent: "organizations/7" }), id)).atProvider?.name,
      );
    const [n1, n2] = [await numberOf("home-form-1"), await numberOf("home-form-2")];
    const keys = await connectGoogle(spec("TagKey"), fake.url);
    if (!keys.home) throw new Error("TagKey has no home");
    fake.reset();
    // [spec's parent, recorded parent, projects.get calls, changed?]
    const rows: Array<[string, string | undefined, number, boolean]> = [
      ["projects/home-form-1", undefined, 0, false], // nothing recorded: nothing to compare, no call
      ["projects/home-form-1", "projects/home-form-1", 0, false], // the same text: no call
      [n1, "projects/home-form-1", 1, false], // id recorded, number written: one project
      ["projects/home-form-1", n1, 0, false], // number recorded, id written: resolved once already
      ["projects/home-form-2", "projects/home-form-1", 1, true], // another project
      [n2, "projects/home-form-1", 0, true], // another project's number (home-form-2 resolved already)
      [n2, n1, 0, true], // two numbers: compared as they are
      ["projects/nowhere-9", "projects/home-form-1", 1, true], // a project Google does not know
      ["projects/home-form-1", "organizations/7", 0, true], // another kind of parent
    ];
    for (const [parent, recorded, gets, changed] of rows) {
      const before = calls();
      const mr = tagKey(parent, recorded);
      const home = await keys.home(mr);
      const moved = homeChanges(recordedHome(mr), home);
      expect({ parent, recorded, changed: moved.length > 0 }).toEqual({ parent, recorded, changed });
      expect({ parent, recorded, gets: calls() - before }).toEqual({ parent, recorded, gets });
      // A changed home names the spec's parent as written, so the refusal says what the person wrote.
      if (changed) expect(moved).toEqual([{ key: "parent", recorded, requested: parent }]);
    }
    // A TagValue's parent (tagKeys/N) is never resolved: its text is its home.
    const values = await connectGoogle(spec("TagValue"), fake.url);
    const before = calls();
    expect(await values.home?.(tagKey("tagKeys/2", "tagKeys/1"))).toMatchObject({ parent: "tagKeys/2" });
    expect(calls()).toBe(before);
  });
});

describe("a Project without a parent (the proto's parent is OPTIONAL)", () => {
  const mr = mrNamed("np", "u3");
  it("is generated with an optional parent; the others' stays required", () => {
    expect(spec("Project").google.parent.optional).toBe(true);
    for (const k of ["Folder", "TagKey", "TagValue"]) expect(spec(k).google.parent.optional).toBeUndefined();
  });

  it("is created with none and observed with none (no drift); a Folder without one is refused before any call", async () => {
    const client = await connectGoogle(spec("Project"), fake.url);
    await client.create(mr({ displayName: "alone" }), "no-parent-1");
    const seen = await client.observe(mr({ displayName: "alone" }), "no-parent-1");
    expect(seen.resourceExists).toBe(true);
    expect(seen.observed?.parent).toBeUndefined();
    expect(fake.resource(String(seen.atProvider?.name))?.parent).toBeUndefined();
    // The batched check has no parent to list: it reads the project alone.
    const many = await client.observeMany?.([
      { mr: mr({ displayName: "alone" }), externalName: "no-parent-1" },
    ]);
    expect((many?.[0] as { resourceExists?: boolean } | undefined)?.resourceExists).toBe(true);
    const folders = await connectGoogle(spec("Folder"), fake.url);
    const before = JSON.stringify(fake.stats());
    await expect(folders.create(mr({ displayName: "x" }), undefined)).rejects.toThrow(InvalidSpecError);
    expect(JSON.stringify(fake.stats())).toBe(before);
  });
});

describe("driftless import of the Resource Manager kinds (listed under a given parent)", () => {
  it("lists a parent's folders, projects (by id) and tag keys with ?parent=; without one, or of another kind, says why", async () => {
    const mr = mrNamed("imp", "u4");
    const folders = await connectGoogle(spec("Folder"), fake.url);
    const f = String(
      (await folders.create(mr({ parent: "organizations/31", displayName: "imp" }), undefined)).externalName,
    );
    const projects = await connectGoogle(spec("Project"), fake.url);
    await projects.create(mr({ parent: f, projectId: "imp-p" }), "imp-p");
    const keys = await connectGoogle(spec("TagKey"), fake.url);
    const k = String(
      (await keys.create(mr({ parent: "projects/imp-p", shortName: "imp" }), undefined)).externalName,
    );
    expect(await folders.list?.({ parent: "organizations/31" })).toEqual([
      { externalName: f, forProvider: { parent: "organizations/31" }, fullName: f },
    ]);
    // Google keeps a project parent in its number form: the listing says it so (and a project's full name).
    const number = fake.resource(k)?.parent;
    expect(await projects.list?.({ parent: f })).toEqual([
      { externalName: "imp-p", forProvider: { parent: f }, fullName: number },
    ]);
    expect(await keys.list?.({ parent: "projects/imp-p" })).toEqual([
      { externalName: k, forProvider: { parent: number }, fullName: k },
    ]);
    await expect(folders.list?.({})).rejects.toThrow(NotListableError);
    await expect(
      (await connectGoogle(spec("TagValue"), fake.url)).list?.({ parent: "organizations/31" }),
    ).rejects.toThrow(/not one of tagKeys/);
  });
});
