// Creates that take no id parameter and whose resource's `name` is REQUIRED (Translation's Glossary: "Glossary
// names have the form `projects/…/glossaries/{glossary-id}`"): the facts mark each `namedBy: "fullName"` unless
// the id in the name is Google's (an OUTPUT_ONLY `<resource>_id`: Merchant's DataSource), and every such
// generated kind's create sends `name` = the full name built from its parent and the external name, which the
// generic fake (refusing a create without it, as Google does) takes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFacts } from "../../../infra/gcp/facts.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { connectGoogle } from "../../support/gcp-generated.ts";

let fake: GoogleGenericFake;
beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 0 });
});
afterAll(() => fake?.close());

const snake = (s: string) => s.replace(/(?<=[a-z0-9])([A-Z])/g, "_$1").toLowerCase();

describe("the facts: which creates carry the full name in the resource's name", () => {
  it("every create with no other place for the id and a REQUIRED name is `fullName`, but the one whose id is Google's", () => {
    const facts = loadFacts();
    const noIdElsewhere = facts.resources.filter(
      (r) =>
        r.family === "resource" &&
        r.create &&
        !r.create.idParam &&
        !r.create.wrap &&
        !r.create.request &&
        !r.create.statement &&
        r.create.namedBy !== "field" &&
        r.create.namedBy !== "path" &&
        facts.messages[r.message]?.fields.find((f) => f.j === "name")?.b?.includes("REQUIRED"),
    );
    const googles = (r: (typeof noIdElsewhere)[number]) =>
      facts.messages[r.message]?.fields.some(
        (f) =>
          f.j === `${snake(r.kind).replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())}Id` &&
          f.b?.includes("OUTPUT_ONLY"),
      );
    const fullName = noIdElsewhere
      .filter((r) => r.create?.namedBy === "fullName")
      .map((r) => `${r.proto} ${r.kind}`);
    expect(fullName.sort()).toEqual([
      "google/cloud/aiplatform/v1 SpecialistPool",
      "google/cloud/dataproc/v1 SessionTemplate",
      "google/cloud/dialogflow/cx/v3 SessionEntityType",
      "google/cloud/dialogflow/v2 Context",
      "google/cloud/dialogflow/v2 SessionEntityType",
      "google/cloud/retail/v2 Model",
      "google/cloud/translate/v3 AdaptiveMtDataset",
      "google/cloud/translate/v3 Glossary",
    ]);
    const rest = noIdElsewhere.filter((r) => r.create?.namedBy !== "fullName");
    expect(rest.map((r) => `${r.proto} ${r.kind}`)).toEqual([
      "google/shopping/merchant/datasources/v1 DataSource",
    ]);
    expect(rest.every(googles)).toBe(true);
    // Managed Microsoft AD's CreateMicrosoftAdDomain names the domain in `domain_name`, its id parameter.
    const domain = facts.resources.find((r) => r.type === "managedidentities.googleapis.com/Domain");
    expect(domain?.create).toMatchObject({ idParam: "domain_name" });
    expect(domain?.create?.namedBy).toBeUndefined();
  });
});

describe("every fullName kind's create sends its full name", () => {
  const specs: GoogleKindSpec[] = loadGoogleCatalog()
    .kinds.map((e) => loadGoogleSpec(e))
    .filter((s) => s.google.create?.namedBy === "fullName");

  it("there are 8 such kinds, each named by the external name within its parent", () => {
    expect(specs.length).toBe(8);
    for (const s of specs) expect(s.externalName).toBe("fromAnnotation");
  });

  for (const s of specs)
    it(`${s.typeName} (${s.google.proto}): created with name = <parent>/${s.google.collection}/<external name>`, async () => {
      const parent = s.google.parent.template.replace("*", "p").replaceAll("*", "x");
      const forProvider: Record<string, unknown> = {
        ...Object.fromEntries(s.google.parent.home.map((h) => [h, "x"])),
        ...(s.google.parent.explicit ? { parent } : {}),
        ...Object.fromEntries(
          Object.entries(s.properties)
            .filter(([, p]) => p.req)
            .map(([k, p]) => [k, p.s.t === "array" ? [] : (p.enum?.[1] ?? "x")]),
        ),
      };
      const client = await connectGoogle(s, fake.url);
      const mr = {
        metadata: { name: "n", annotations: {} },
        spec: { forProvider },
      } as unknown as ManagedResource;
      const id = `id-${s.kind.toLowerCase()}`;
      const before = fake.stats();
      await client.create(mr, id);
      const full = `${parent}/${s.google.collection}/${id}`;
      expect(fake.resource(full)).toMatchObject({ name: full });
      expect((await client.observe(mr, id)).resourceExists).toBe(true);
      const creates = Object.entries(fake.stats()).filter(
        ([k, n]) => k.startsWith("POST ") && n > (before[k] ?? 0),
      );
      expect(creates.length).toBe(1);
    });
});

describe("Managed Microsoft AD's Domain: its id is the create's domain_name parameter", () => {
  it("is created with ?domainName=<external name>, its name the full name of it", async () => {
    const e = loadGoogleCatalog().kinds.find((k) => k.typeName === "managedidentities.googleapis.com/Domain");
    if (!e) throw new Error("no Domain kind");
    const s = loadGoogleSpec(e);
    expect(s.externalName).toBe("fromAnnotation");
    expect(s.google.create).toMatchObject({ idParam: "domain_name" });
    const client = await connectGoogle(s, fake.url);
    const forProvider = {
      parent: "projects/p/locations/global",
      ...Object.fromEntries(
        Object.entries(s.properties)
          .filter(([, p]) => p.req)
          .map(([k, p]) => [k, p.s.t === "array" ? ["10.0.0.0/24"] : "x"]),
      ),
    };
    const mr = {
      metadata: { name: "n", annotations: {} },
      spec: { forProvider },
    } as unknown as ManagedResource;
    await client.create(mr, "ad.example.com");
    const full = "projects/p/locations/global/domains/ad.example.com";
    expect(fake.resource(full)).toMatchObject({ name: full });
    expect((await client.observe(mr, "ad.example.com")).resourceExists).toBe(true);
  });
});
