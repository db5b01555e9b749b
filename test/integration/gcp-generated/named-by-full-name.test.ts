// Generated Google kinds whose create takes no id parameter and whose resource's `name` is REQUIRED, the full
// resource name (Translation's Glossary: "Glossary names have the form
// `projects/{project-number-or-id}/locations/{location-id}/glossaries/{glossary-id}`", created long-running;
// its AdaptiveMtDataset, created at once), on a real kube-apiserver against the generic fake, which refuses
// such a create without the name (400 INVALID_ARGUMENT, google.rpc.BadRequest naming `glossary.name`, as
// Google does): the create sends the full name built from the parent and the external name; Ready, drift
// corrected, delete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, rawGoogleRequest, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("gcpfullname");
const GLOSSARY = "translate.googleapis.com/Glossary";
const DATASET = "translate.googleapis.com/AdaptiveMtDataset";
const bed = googleGenTestbed(kube, PC, [GLOSSARY, DATASET]);

beforeAll(() => bed.start({ opPolls: 1 }), 120_000);
afterAll(() => bed.close());

const settled = async (type: string, name: string) => {
  const def = bed.def(type);
  for (const _ of [1, 2, 3]) await settle(bed.reconciler, keyOf(def, name));
  return getMr<Json>(kube, def, name);
};

describe("a create named by the resource's full name in its body", () => {
  it("Google (the fake) refuses a Glossary create without its name: 400 INVALID_ARGUMENT naming glossary.name", async () => {
    const parent = `projects/${gcpProject()}/locations/us-central1`;
    const { status, body } = await rawGoogleRequest(
      bed.fake.url,
      "POST",
      `translate/v3/${parent}/glossaries`,
      {
        languageCodesSet: { languageCodes: ["en", "de"] },
      },
    );
    expect(status).toBe(400);
    expect(body.error).toMatchObject({
      status: "INVALID_ARGUMENT",
      details: [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "glossary.name" }],
        },
      ],
    });
  });

  for (const [type, forProvider, drift] of [
    [
      GLOSSARY,
      { location: "us-central1", displayName: "g", languageCodesSet: { languageCodes: ["en", "de"] } },
      { displayName: "console" },
    ],
    [
      DATASET,
      { location: "us-central1", displayName: "d", sourceLanguageCode: "en", targetLanguageCode: "de" },
      undefined,
    ],
  ] as const)
    it(`${type}: created with name = its full name (parent + external name), Ready; drift corrected (where an update exists); delete`, {
      timeout: 120_000,
    }, async () => {
      const def = bed.def(type);
      const name = uniqueName("full");
      const before = bed.fake.stats();
      await kube.create(def, managedObject(def, name, PC, { forProvider, connectionSecret: false }));
      const mr = await settled(type, name);
      expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
      expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
      const collection = bed.spec(type).google.collection;
      const full = `projects/${gcpProject()}/locations/us-central1/${collection}/${name}`;
      // The object's id is the external name (metadata.name), Google's resource named by it.
      expect(mr?.metadata.annotations?.[Annotations.externalName]).toBe(name);
      expect(bed.fake.resource(full)).toMatchObject({ name: full, displayName: forProvider.displayName });
      const posts = requestsSince(bed.fake, before, /^POST translate /);
      expect(posts.reduce((n, [k, now]) => n + now - (before[k] ?? 0), 0)).toBe(1);

      // Drift corrected where the API publishes an update (the AdaptiveMtDataset has none).
      if (drift) {
        bed.fake.mutate(full, drift);
        await settled(type, name);
        expect(bed.fake.resource(full)).toMatchObject({ displayName: forProvider.displayName });
      }

      await kube.delete(def, name);
      await settled(type, name);
      expect(await getMr(kube, def, name)).toBeUndefined();
      expect(bed.fake.resource(full)).toBeUndefined();
    });
});
