// IAM Admin v1's ServiceAccountKey as a generated kind on a real kube-apiserver, against the generic fake: a
// create whose request holds no resource message (`CreateServiceAccountKey {name, privateKeyType,
// keyAlgorithm}`), under a generated ServiceAccount referenced by name. The key's privateKeyData is only in
// the create's answer: it reaches the connection Secret and nothing else (spec, status, annotations, events,
// logs), and stays in the Secret through later reconciles although Google never answers it again; an imported
// key's Secret has none. Every field is immutable: a change is refused (Synced=False), never a second key.
// The fake refuses what Google refuses: an unknown field, an enum outside its values, a missing account.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { CREATED_WITH_ANNOTATION } from "../../../shared/providers/gcp/generic/client.ts";
import { managedObject } from "../../support/conformance.ts";
import { removeCrds } from "../../support/crd-holds.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenSpecs, requestsSince, serveGoogleKinds } from "../../support/gcp-generated.ts";
import { captureLogger, conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import type { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
const kube = newKube();
const PC = uniqueName("gcpkey");
const { lines, logger } = captureLogger();
let fake: GoogleGenericFake;
let r: Reconciler;
let sa: ManagedKindDef;
let key: ManagedKindDef;

beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 0 });
  const specs = [...googleGenSpecs(["iam.googleapis.com/ServiceAccount", "iam.googleapis.com/Key"]).values()];
  [sa, key] = specs.map((s) => googleKindOf(s)) as [ManagedKindDef, ManagedKindDef];
  r = await serveGoogleKinds(kube, { specs, defs: [sa, key], pc: PC, fakeUrl: fake.url, logger });
}, 120_000);

afterAll(async () => {
  await removeCrds(kube, [sa, key]);
  await fake?.close();
});

const twice = async (def: ManagedKindDef, name: string) => {
  await settle(r, keyOf(def, name));
  await settle(r, keyOf(def, name));
};

const secretData = async (name: string) => {
  const s = await kube.getSecret("default", `${name}-conn`);
  return Object.fromEntries(
    Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
  );
};

/** A generated ServiceAccount, Ready: its object's name and its full name at Google. */
const newAccount = async (prefix: string) => {
  const name = uniqueName(`sa-${prefix}`);
  const accountId = `${prefix}-${Date.now().toString(36)}`.slice(0, 30);
  await kube.create(sa, managedObject(sa, name, PC, { forProvider: { accountId }, connectionSecret: false }));
  await twice(sa, name);
  const project = gcpProject();
  return {
    name,
    full: `projects/${project}/serviceAccounts/${accountId}@${project}.iam.gserviceaccount.com`,
  };
};

/** A key (RSA 2048) under the generated ServiceAccount `account`, by reference, reconciled to Ready. */
const readyKey = async (name: string, account: string) => {
  await kube.create(
    key,
    managedObject(key, name, PC, {
      forProvider: { parentRef: { name: account }, keyAlgorithm: "KEY_ALG_RSA_2048" },
    }),
  );
  await twice(key, name);
  const mr = await getMr<Json>(kube, key, name);
  expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
  return mr;
};

describe("IAM ServiceAccountKey (a create whose request holds no resource message)", () => {
  it("created under a referenced account; privateKeyData only in the connection Secret, kept; an immutable change refused; import; delete", {
    timeout: 180_000,
  }, async () => {
    const name = uniqueName("sakey");
    const { name: account, full: saName } = await newAccount("key");
    expect(fake.resource(saName)).toBeDefined();

    const mr = await readyKey(name, account);
    const full = mr?.metadata.annotations?.[Annotations.externalName] as string;
    expect(full).toMatch(new RegExp(`^${saName.replaceAll(".", "\\.")}/keys/[0-9a-f]{40}$`));
    expect(mr?.spec.forProvider.parent).toBe(saName);
    // The key as Google keeps it: no private key, no private key type (both only in the create's answer).
    const stored = fake.resource(full);
    expect(stored).toMatchObject({ keyAlgorithm: "KEY_ALG_RSA_2048", keyType: "USER_MANAGED" });
    expect(stored).not.toHaveProperty("privateKeyData");

    // The connection Secret has the private key data Google answered once: a credentials file.
    const data = await secretData(name);
    expect(Object.keys(data)).toContain("privateKeyData");
    const privateKeyData = data.privateKeyData as string;
    const file = JSON.parse(Buffer.from(privateKeyData, "base64").toString("utf8")) as Json;
    expect(file).toMatchObject({ type: "service_account", private_key_id: full.split("/").at(-1) });

    // …and nowhere else: not the object (spec, status, annotations), not an event, not a log line.
    const events = await kube.listEvents<Json>("default");
    const shown = JSON.stringify([await getMr<Json>(kube, key, name), events]) + lines.join("\n");
    expect(shown).not.toContain(privateKeyData);
    expect(shown).not.toContain(String(file.private_key));

    // Later reconciles (Google's get answers no key data) keep the Secret's key.
    await twice(key, name);
    expect((await secretData(name)).privateKeyData).toBe(privateKeyData);
    expect(conditionOf(await getMr(kube, key, name), "Synced")).toMatchObject({ status: "True" });

    // Every field is immutable: a change is refused and no second key is made.
    const keysOf = () =>
      fake
        .assets()
        .filter((a) => JSON.stringify(a).includes(`${saName}/keys/`))
        .map((a) => JSON.stringify(a));
    const before = keysOf().length;
    await kube.patch(key, name, { spec: { forProvider: { keyAlgorithm: "KEY_ALG_RSA_1024" } } });
    await r.reconcile(keyOf(key, name));
    const changed = await getMr<Json>(kube, key, name);
    expect(conditionOf(changed, "Synced"), JSON.stringify(changed?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("keyAlgorithm"),
    });
    await kube.patch(key, name, {
      spec: { forProvider: { privateKeyType: "TYPE_PKCS12_FILE", keyAlgorithm: "KEY_ALG_RSA_2048" } },
    });
    await r.reconcile(keyOf(key, name));
    expect(conditionOf(await getMr<Json>(kube, key, name), "Synced")).toMatchObject({
      status: "False",
      message: expect.stringContaining("privateKeyType"),
    });
    expect(keysOf().length).toBe(before);
    expect(fake.resource(full)).toBeDefined();
    await kube.patch(key, name, { spec: { forProvider: { privateKeyType: null } } });
    await twice(key, name);
    expect(conditionOf(await getMr(kube, key, name), "Synced")).toMatchObject({ status: "True" });

    // Import by the full name: observed, Ready, and its Secret has no key data (Google never answers it).
    const imported = uniqueName("sakey-import");
    await kube.create(key, {
      ...managedObject(key, imported, PC, { forProvider: { parent: saName } }),
      metadata: { name: imported, annotations: { [Annotations.externalName]: full } },
    } as never);
    await twice(key, imported);
    const imp = await getMr<Json>(kube, key, imported);
    expect(conditionOf(imp, "Ready"), JSON.stringify(imp?.status)).toMatchObject({ status: "True" });
    expect(await secretData(imported)).not.toHaveProperty("privateKeyData");
    await kube.patch(key, imported, { spec: { deletionPolicy: "Orphan" } });
    await kube.delete(key, imported);
    await twice(key, imported);
    expect(fake.resource(full)).toBeDefined();

    // Delete removes the key at Google.
    await kube.delete(key, name);
    await twice(key, name);
    expect(await getMr(kube, key, name)).toBeUndefined();
    expect(fake.resource(full)).toBeUndefined();
    await kube.delete(sa, account);
    await twice(sa, account);
  });

  it("a hand-edited created-with record: unreadable is Synced=False saying how to restore it, nothing sent; one edited to hide a change is checked against Google's keyAlgorithm", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("sakey-cw");
    const { name: account } = await newAccount("cw");
    const made = await readyKey(name, account);
    const recorded = String(made?.metadata.annotations?.[CREATED_WITH_ANNOTATION]);
    expect(JSON.parse(recorded)).toEqual({ keyAlgorithm: "KEY_ALG_RSA_2048" });
    const before = fake.stats();
    const synced = async () => conditionOf(await getMr<Json>(kube, key, name), "Synced");
    // [the annotation as edited, what the message says is wrong]
    const rows: Array<[string, RegExp]> = [
      ['{"keyAlgorithm": "KEY_ALG_RSA_2048"', /is not JSON/],
      ['["KEY_ALG_RSA_2048"]', /is not a JSON object/],
      ['{"keyAlgorithm":"KEY_ALG_RSA_2048","colour":"red"}', /colour is not one of the create's inputs/],
      ['{"keyAlgorithm":2048}', /keyAlgorithm is not a string/],
    ];
    for (const [edited, why] of rows) {
      await kube.patch(key, name, { metadata: { annotations: { [CREATED_WITH_ANNOTATION]: edited } } });
      await r.reconcile(keyOf(key, name));
      const c = await synced();
      expect({ edited, c }).toMatchObject({
        edited,
        c: { status: "False", message: expect.stringMatching(why) },
      });
      // What to do: restore the record the create wrote (a person reads it in Git or the last applied object).
      expect(c?.message).toContain(`set the annotation ${CREATED_WITH_ANNOTATION} back`);
      expect(c?.message).not.toMatch(/SyntaxError|Unexpected token|position \d/);
    }
    expect(requestsSince(fake, before, /^(POST|PATCH|DELETE)/)).toEqual([]);
    // Edited to say the key was made with RSA 1024, the spec changed to match: Google answers 2048, refused.
    await kube.patch(key, name, {
      metadata: { annotations: { [CREATED_WITH_ANNOTATION]: '{"keyAlgorithm":"KEY_ALG_RSA_1024"}' } },
      spec: { forProvider: { keyAlgorithm: "KEY_ALG_RSA_1024" } },
    });
    await r.reconcile(keyOf(key, name));
    expect(await synced()).toMatchObject({
      status: "False",
      message: expect.stringContaining("keyAlgorithm"),
    });
    expect(requestsSince(fake, before, /^(POST|PATCH|DELETE)/)).toEqual([]);
    await kube.patch(key, name, {
      metadata: { annotations: { [CREATED_WITH_ANNOTATION]: recorded } },
      spec: { forProvider: { keyAlgorithm: "KEY_ALG_RSA_2048" } },
    });
    await twice(key, name);
    expect(await synced()).toMatchObject({ status: "True" });
    await kube.delete(key, name);
    await twice(key, name);
    expect(await getMr(kube, key, name)).toBeUndefined();
    await kube.delete(sa, account);
    await twice(sa, account);
  });

  it("is not created without a connection Secret: its private key could never be given to anyone", {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName("sakey-nosecret");
    const { name: owner, full: saName } = await newAccount("nokey");
    await kube.create(
      key,
      managedObject(key, name, PC, { forProvider: { parent: saName }, connectionSecret: false }),
    );
    await twice(key, name);
    const mr = await getMr<Json>(kube, key, name);
    expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({
      status: "False",
      message: expect.stringContaining("writeConnectionSecretToRef"),
    });
    expect(mr?.metadata.annotations?.[Annotations.externalName] ?? "").not.toContain("/keys/");
    expect(fake.assets().filter((a) => JSON.stringify(a).includes(`${saName}/keys/`))).toEqual([]);
    await kube.delete(key, name);
    await twice(key, name);
    expect(await getMr(kube, key, name)).toBeUndefined();
    await kube.delete(sa, owner);
    await twice(sa, owner);
  });

  it("the fake refuses what Google refuses and answers the private key only to the create", async () => {
    const project = gcpProject();
    const accountId = `raw-${Date.now().toString(36)}`.slice(0, 30);
    const saName = `projects/${project}/serviceAccounts/${accountId}@${project}.iam.gserviceaccount.com`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${fake.url}/iam/v1/${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Json & { error?: Json } };
    };
    // No such account: 404, as Google answers.
    expect((await call("POST", `${saName}/keys`, {})).status).toBe(404);
    expect(
      (await call("POST", `projects/${project}/serviceAccounts`, { accountId, serviceAccount: {} })).status,
    ).toBe(200);
    const unknown = await call("POST", `${saName}/keys`, { keyAlgorithm: "KEY_ALG_RSA_2048", colour: "red" });
    expect(unknown).toMatchObject({ status: 400, body: { error: { status: "INVALID_ARGUMENT" } } });
    expect(String(unknown.body.error?.message)).toContain('Unknown name "colour"');
    // Output of the key (its data, its name) is not a field of the request.
    const output = await call("POST", `${saName}/keys`, { privateKeyData: "eA==" });
    expect(output.status).toBe(400);
    expect(String(output.body.error?.message)).toContain('Unknown name "privateKeyData"');
    const badEnum = await call("POST", `${saName}/keys`, { keyAlgorithm: "KEY_ALG_RSA_4096" });
    expect(badEnum.status).toBe(400);
    const made = await call("POST", `${saName}/keys`, {});
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({
      privateKeyType: "TYPE_GOOGLE_CREDENTIALS_FILE",
      keyAlgorithm: "KEY_ALG_RSA_2048",
      privateKeyData: expect.any(String),
    });
    const got = await call("GET", String(made.body.name));
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("privateKeyData");
    expect(got.body).not.toHaveProperty("privateKeyType");
    expect(got.body).toHaveProperty("publicKeyData");
    const listed = await call("GET", `${saName}/keys`);
    expect(JSON.stringify(listed.body)).not.toContain(String(made.body.privateKeyData));
    expect((await call("DELETE", String(made.body.name))).status).toBe(200);
    expect((await call("GET", String(made.body.name))).status).toBe(404);
  });
});
