// Kinds Google lets a caller read only through a list of their parent's collection (no GET of their name), on a
// real kube-apiserver against the generic fake: Resource Manager's TagBinding (ListTagBindings `?parent=` the
// bound resource's full name; Google names the binding from the resource and the tag value) and Bare Metal
// Solution's SshKey (ListSSHKeys under its location). Each is created and Ready, read by listing only (the
// fake answers a GET of the name as Google's front end does an unbound URL, and none is sent); deleted behind
// driftless's back it is absent from the list and made again; an existing one is imported by its external
// name; a TagBinding whose create answer is lost is found again by its tag value, never made twice; deleting
// the object deletes it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Annotations } from "../../../shared/api/meta.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed, requestsSince } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const RM = "cloudresourcemanager.googleapis.com";
const [TK, TV, TB, SSH] = [
  `${RM}/TagKey`,
  `${RM}/TagValue`,
  `${RM}/TagBinding`,
  "baremetalsolution.googleapis.com/SshKey",
];
const ORG = "organizations/123456789";
const PROJECT = `//cloudresourcemanager.googleapis.com/projects/${gcpProject()}`;

const kube = newKube();
const PC = uniqueName("gcplo");
const bed = googleGenTestbed(kube, PC, [TK, TV, TB, SSH]);

beforeAll(() => bed.start({ opPolls: 1 }), 120_000);
afterAll(() => bed.close());

const settled = async (type: string, name: string) => {
  await settle(bed.reconciler, keyOf(bed.def(type), name));
  await settle(bed.reconciler, keyOf(bed.def(type), name));
  return getMr<Json>(kube, bed.def(type), name);
};

const make = async (
  type: string,
  name: string,
  forProvider: Json,
  spec: Json = {},
  annotations?: Record<string, string>,
) => {
  await kube.create(
    bed.def(type),
    managedObject(bed.def(type), name, PC, {
      forProvider,
      connectionSecret: false,
      spec,
      ...(annotations ? { annotations } : {}),
    }),
  );
  const mr = await settled(type, name);
  expect(conditionOf(mr, "Ready"), `${type} ${JSON.stringify(mr?.status)}`).toMatchObject({ status: "True" });
  return mr;
};

const externalName = (mr: { metadata: { annotations?: Record<string, string> } } | undefined) =>
  mr?.metadata.annotations?.[Annotations.externalName] ?? "";

/** A full name as a path: each segment escaped (a TagBinding's name holds `%2F` itself). */
const asPath = (name: string) => name.split("/").map(encodeURIComponent).join("/");

/** The fake's list of a resource's TagBindings, as ListTagBindings answers it. */
const bindingsOf = async (parent: string) =>
  ((
    (await (
      await fetch(`${bed.fake.url}/cloudresourcemanager/v3/tagBindings?parent=${encodeURIComponent(parent)}`)
    ).json()) as Json
  ).tagBindings ?? []) as Json[];

const tagValue = async (short: string) => {
  const key = await make(TK, uniqueName("lo-k"), { parent: ORG, shortName: uniqueName(short).slice(0, 40) });
  const value = await make(TV, uniqueName("lo-v"), { parent: externalName(key), shortName: "on" });
  return externalName(value);
};

describe("TagBinding: read only through ListTagBindings", () => {
  it("created Ready and read by listing (no GET of its name); gone behind our back → made again; deleted with its object", {
    timeout: 120_000,
  }, async () => {
    const value = await tagValue("lo-a");
    const name = uniqueName("lo-tb");
    const before = bed.fake.stats();
    const mr = await make(TB, name, { parent: PROJECT, tagValue: value });
    // Google's name: the bound resource's full name URL-encoded, then the tag value.
    const full = `tagBindings/${encodeURIComponent(PROJECT)}/${value}`;
    expect(externalName(mr)).toBe(full);
    expect(mr?.status?.atProvider).toMatchObject({ name: full });
    expect(bed.fake.resource(full)).toMatchObject({ parent: PROJECT, tagValue: value });
    // Only lists and operations are read: never a GET of the binding's name (its last segment is the value's id).
    const gets = requestsSince(bed.fake, before, /^GET cloudresourcemanager /).map(([k]) => k);
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.filter((k) => !/ (v3|operations)$/.test(k))).toEqual([]);
    // Google's answer to a GET of it: no method is bound to that URL.
    const get = await fetch(`${bed.fake.url}/cloudresourcemanager/v3/${asPath(full)}`);
    expect(get.status).toBe(404);

    // Deleted behind driftless's back: absent from the list, so made again (one POST), the same name.
    const del = await fetch(`${bed.fake.url}/cloudresourcemanager/v3/${asPath(full)}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    await bindingsOf(PROJECT); // the delete's operation finishes as the collection is read
    expect(await bindingsOf(PROJECT)).not.toContainEqual(expect.objectContaining({ name: full }));
    const again = bed.fake.stats();
    const back = await settled(TB, name);
    expect(conditionOf(back, "Ready"), JSON.stringify(back?.status)).toMatchObject({ status: "True" });
    expect(requestsSince(bed.fake, again, /^POST cloudresourcemanager /)).toEqual([
      ["POST cloudresourcemanager v3", (again["POST cloudresourcemanager v3"] ?? 0) + 1],
    ]);
    expect(bed.fake.resource(full)).toMatchObject({ tagValue: value });

    await kube.delete(bed.def(TB), name);
    await settled(TB, name);
    await settled(TB, name);
    expect(await getMr(kube, bed.def(TB), name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });

  it("a create whose answer is lost is found again by its tag value: one binding, never two", {
    timeout: 120_000,
  }, async () => {
    const value = await tagValue("lo-b");
    const name = uniqueName("lo-tb2");
    await kube.create(
      bed.def(TB),
      managedObject(bed.def(TB), name, PC, {
        forProvider: { parent: PROJECT, tagValue: value },
        connectionSecret: false,
      }),
    );
    bed.fake.loseAnswerNext(/^POST cloudresourcemanager v3$/);
    const first = await bed.reconciler.reconcile(keyOf(bed.def(TB), name));
    expect(first.outcome).toBe("error");
    expect(externalName(await getMr(kube, bed.def(TB), name))).toBe("");
    const before = bed.fake.stats();
    const mr = await settled(TB, name);
    const mine = (await bindingsOf(PROJECT)).filter((b) => b.tagValue === value);
    expect(mine).toHaveLength(1);
    expect(externalName(mr)).toBe(mine[0]?.name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    expect(requestsSince(bed.fake, before, /^POST /)).toEqual([]);
    await kube.delete(bed.def(TB), name);
    await settled(TB, name);
    expect(await bindingsOf(PROJECT)).not.toContainEqual(expect.objectContaining({ tagValue: value }));
  });

  it("an existing binding is imported by its external name (Observe only) and its object's delete leaves it", {
    timeout: 120_000,
  }, async () => {
    const value = await tagValue("lo-c");
    const made = await fetch(`${bed.fake.url}/cloudresourcemanager/v3/tagBindings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ parent: PROJECT, tagValue: value }),
    });
    expect(made.status).toBe(200);
    await bindingsOf(PROJECT); // its operation finishes as the collection is read
    const full = `tagBindings/${encodeURIComponent(PROJECT)}/${value}`;
    expect(bed.fake.resource(full)).toBeDefined();
    const name = uniqueName("lo-imp");
    const before = bed.fake.stats();
    const mr = await make(
      TB,
      name,
      { parent: PROJECT, tagValue: value },
      { managementPolicies: ["Observe"] },
      { [Annotations.externalName]: full },
    );
    expect(mr?.status?.atProvider).toMatchObject({ name: full });
    expect(requestsSince(bed.fake, before, /^(POST|PATCH|DELETE) /)).toEqual([]);
    await kube.delete(bed.def(TB), name);
    await settled(TB, name);
    expect(await getMr(kube, bed.def(TB), name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeDefined();
  });
});

describe("Bare Metal Solution SshKey: read only through ListSSHKeys", () => {
  it("created Ready with its id, read by listing its location; gone behind our back → made again; deleted", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("lo-ssh");
    const before = bed.fake.stats();
    const mr = await make(SSH, name, { location: "us-central1", publicKey: "ssh-ed25519 AAAAC3Nza lo@test" });
    const full = `projects/${gcpProject()}/locations/us-central1/sshKeys/${name}`;
    expect(externalName(mr)).toBe(name);
    expect(bed.fake.resource(full)).toMatchObject({ publicKey: "ssh-ed25519 AAAAC3Nza lo@test" });
    expect(requestsSince(bed.fake, before, new RegExp(`^GET baremetalsolution ${name}$`))).toEqual([]);
    expect(requestsSince(bed.fake, before, /^GET baremetalsolution /).length).toBeGreaterThan(0);

    const del = await fetch(`${bed.fake.url}/baremetalsolution/v2/${full}`, { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(bed.fake.resource(full)).toBeUndefined();
    const back = await settled(SSH, name);
    expect(conditionOf(back, "Ready"), JSON.stringify(back?.status)).toMatchObject({ status: "True" });
    expect(bed.fake.resource(full)).toBeDefined();

    await kube.delete(bed.def(SSH), name);
    await settled(SSH, name);
    expect(await getMr(kube, bed.def(SSH), name)).toBeUndefined();
    expect(bed.fake.resource(full)).toBeUndefined();
  });
});
