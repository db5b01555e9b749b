// Resource Manager v3's Folder, Project, TagKey and TagValue as generated kinds: created at a top-level
// collection with the parent in the body (a third parent style), their parent the immutable home with a
// reference to the kind above, the field unique in the parent that finds a lost create again, and the soft
// delete of Folder and Project.
import { beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { findsByOwnerLabel, findsByUniqueField, googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";

const RM = "cloudresourcemanager.googleapis.com";
const spec = (kind: string): GoogleKindSpec => {
  const e = loadGoogleCatalog().kinds.find((k) => k.typeName === `${RM}/${kind}`);
  if (!e) throw new Error(`${kind} is not generated`);
  return loadGoogleSpec(e);
};

beforeAll(() => {
  generateGcp();
}, 60_000);

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
      expect(s.google.create.p).toMatch(/^\/v3\/[a-zA-Z]+$/);
      expect(s.google.parent).toEqual({ template, home: [], explicit: true, inBody: true });
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
