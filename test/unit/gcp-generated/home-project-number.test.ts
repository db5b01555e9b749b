// A parent deeper than a project (`projects/<x>/locations/<l>/entryGroups/<g>`) names its project by id or by
// number: both forms of one project are one home, compared by identity through Resource Manager's cached
// projects.get (the TagKey's `projects/<x>` rule, every depth); another project, location or parent below is
// still a changed home. A resource Google names with the project number (as many APIs answer) is found in a
// parent the spec writes with the id, by import and by the batched drift check.
import { describe, expect, it } from "vitest";
import type { GoogleGenericFake } from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { recordedHome } from "../../../shared/api/external.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { homeChanges } from "../../../shared/reconciler/plan.ts";
import { connectGoogle, googleGenSpecs, withGoogleFake } from "../../support/gcp-generated.ts";

type MR = ManagedResource<Record<string, unknown>, Record<string, unknown>>;
const TYPES = {
  Project: "cloudresourcemanager.googleapis.com/Project",
  EntryGroup: "datacatalog.googleapis.com/EntryGroup",
  Entry: "datacatalog.googleapis.com/Entry",
} as const;

let fake: GoogleGenericFake;
withGoogleFake({ opPolls: 0 }, (f) => {
  fake = f;
});

const mr = (forProvider: Record<string, unknown>, recordedParent?: string) =>
  ({
    metadata: {
      name: "pn",
      uid: "u-pn",
      annotations: recordedParent
        ? { [Annotations.home]: JSON.stringify({ parent: recordedParent, project: "hn-one" }) }
        : {},
    },
    spec: { forProvider },
  }) as unknown as MR;

describe("a parent under a project, written with the project's id or its number", () => {
  it("is one home for both forms at any depth; another project, location or parent is a changed home naming both", async () => {
    const specs = googleGenSpecs(Object.values(TYPES));
    const spec = (t: keyof typeof TYPES) => specs.get(TYPES[t]) as NonNullable<ReturnType<typeof specs.get>>;
    // Reading the parent's project is among the kind's permissions (an EntryGroup's parent is no field).
    expect(spec("Entry").permissions.read).toContain("resourcemanager.projects.get");
    expect(spec("EntryGroup").permissions.read ?? []).not.toContain("resourcemanager.projects.get");
    const projects = await connectGoogle(spec("Project"), fake.url, "hn-one");
    const numberOf = async (id: string) => {
      await projects.create(mr({ parent: "organizations/7", projectId: id }), id);
      return String((await projects.observe(mr({ parent: "organizations/7" }), id)).atProvider?.name).split(
        "/",
      )[1] as string;
    };
    const [n1, n2] = [await numberOf("hn-one"), await numberOf("hn-two")];
    const groups = await connectGoogle(spec("EntryGroup"), fake.url, "hn-one");
    await groups.create(mr({ location: "us" }), "g");
    const entries = await connectGoogle(spec("Entry"), fake.url, "hn-one");
    const byId = "projects/hn-one/locations/us/entryGroups/g";
    const byNumber = `projects/${n1}/locations/us/entryGroups/g`;
    await entries.create(
      mr({ parent: byId, type: "FILESET", gcsFilesetSpec: { filePatterns: ["gs://b/*"] } }),
      "e1",
    );
    if (!entries.home) throw new Error("Entry has no home");
    const calls = () => Object.values(fake.stats()).reduce((a, b) => a + b, 0);
    // [spec's parent, recorded parent, projects.get calls, changed?]
    const rows: Array<[string, string, number, boolean]> = [
      [byId, byId, 0, false], // the same text: no call
      [byNumber, byId, 1, false], // id recorded, number written: one project (hn-one resolved once)
      [byId, byNumber, 0, false], // number recorded, id written: cached
      [`projects/${n2}/locations/us/entryGroups/g`, byId, 0, true], // another project's number
      ["projects/hn-two/locations/us/entryGroups/g", byNumber, 1, true], // another project by id
      [`projects/${n1}/locations/eu/entryGroups/g`, byId, 0, true], // another location
      [`projects/${n1}/locations/us/entryGroups/h`, byId, 0, true], // another entry group
      ["projects/nowhere-9/locations/us/entryGroups/g", byId, 1, true], // a project Google does not know
      [`projects/${n2}/locations/us/entryGroups/g`, `projects/${n1}/locations/us/entryGroups/g`, 0, true], // two numbers
    ];
    for (const [parent, recorded, gets, changed] of rows) {
      const before = calls();
      const m = mr({ parent, type: "FILESET" }, recorded);
      const moved = homeChanges(recordedHome(m), await entries.home(m));
      expect({ parent, recorded, changed: moved.length > 0 }).toEqual({ parent, recorded, changed });
      expect({ parent, recorded, gets: calls() - before }).toEqual({ parent, recorded, gets });
      // The refusal names what was recorded and what the spec now says, as written.
      if (changed) expect(moved).toEqual([{ key: "parent", recorded, requested: parent }]);
    }
  });

  it("finds a resource Google names with the project number: read by that name, imported, checked in a batch", async () => {
    const specs = googleGenSpecs([TYPES.Entry]);
    const entries = await connectGoogle(specs.get(TYPES.Entry) as never, fake.url, "hn-one");
    const byId = "projects/hn-one/locations/us/entryGroups/g";
    const fp = { parent: byId, type: "FILESET", gcsFilesetSpec: { filePatterns: ["gs://b/*"] } };
    await entries.create(mr(fp), "e2");
    const seen = await entries.observe(mr(fp), "e2");
    expect(seen.resourceExists).toBe(true);
    // Google answers the name with the project's number.
    const full = String(seen.atProvider?.name);
    expect(full).toMatch(/^projects\/\d+\/locations\/us\/entryGroups\/g\/entries\/e2$/);
    // Imported by that full name under the parent written with the id: the same parent, observed.
    expect((await entries.observe(mr(fp), full)).resourceExists).toBe(true);
    // A full name in another parent is still refused before any call.
    await expect(entries.observe(mr(fp), full.replace("/us/", "/eu/"))).rejects.toThrow(
      /is not a entries of/,
    );
    // The batched check lists the parent and finds it there (one list, no GET of its own).
    const before = { ...fake.stats() };
    const many = await entries.observeMany?.([{ mr: mr(fp), externalName: "e2" }]);
    expect((many?.[0] as { resourceExists?: boolean } | undefined)?.resourceExists).toBe(true);
    const sent = Object.entries(fake.stats()).filter(([k, n]) => n > (before[k] ?? 0));
    expect(sent.map(([k, n]) => [k.split(" ")[0], n])).toEqual([["GET", 1]]);
  });
});
