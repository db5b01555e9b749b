// Every generated Google Cloud kind (≈700 resources from Google's protos), both shapes, makes a valid
// structural CRD offline, in groups no hand-written kind uses, activated only by name; and a secrets walk
// over every kind, read from the facts bundle on its own (not through the generator's spec): no
// secret-named string at any depth can be written in spec.forProvider as text (it is a `…SecretRef` or
// gone), and none reaches status.atProvider or the observation the engine compares, even when Google
// answers with it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFacts, loadSensitive } from "../../../infra/gcp/facts.ts";
import { secretNamed } from "../../../infra/gen-awscc.ts";
import { gcpIsCurrent, generateGcp } from "../../../infra/gen-gcp.ts";
import { type JSONSchemaProps, managedCrd } from "../../../shared/api/crd.ts";
import { Bucket } from "../../../shared/api/gcp/storage.ts";
import {
  activatedGoogleEntries,
  googlePatternSelects,
  loadGoogleCatalog,
  loadGoogleSpec,
} from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf, modelOf } from "../../../shared/api/googleapis/kind.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { allCrds } from "../../../shared/crds.ts";
import { atProviderOf, observedOf } from "../../../shared/providers/awscc/model.ts";
import { fromGoogle } from "../../../shared/providers/gcp/generic/sensitive-labels.ts";
import { structuralProblems } from "../../support/structural.ts";
import { shapeAt } from "../../support/zod-shape.ts";

const SENTINEL = "sentinel-secret-value-9c41";
// A private key's bytes (IAM ServiceAccountKey's privateKeyData, "the private key data", bytes in the protos)
// are a secret though the AWS name rule (…PrivateKey$) does not name them.
const PRIVATE_KEY_DATA = /privateKeyData$/i;
type Json = Record<string, unknown>;

beforeAll(() => {
  generateGcp();
}, 60_000);

describe("generated Google Cloud kinds", () => {
  it("every generated CRD, both shapes, is a structural schema the API server accepts", {
    timeout: 300_000,
  }, () => {
    const catalog = loadGoogleCatalog();
    expect(catalog.kinds.length).toBeGreaterThan(650);
    expect(catalog.kinds.filter((k) => k.family === "compute").length).toBeGreaterThan(80);
    const problems: string[] = [];
    const names = new Set<string>();
    for (const e of catalog.kinds) {
      const def = googleKindOf(loadGoogleSpec(e));
      for (const d of [def, namespacedVariantOf(def)]) {
        const crd = managedCrd(d);
        const name = crd.metadata.name;
        if (names.has(name)) problems.push(`${name}: twice`);
        names.add(name);
        if (name.length > 253 || name.split(".").some((l) => !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(l)))
          problems.push(`${name}: not a DNS subdomain`);
        const schema = crd.spec.versions[0]?.schema.openAPIV3Schema as unknown as JSONSchemaProps;
        structuralProblems(schema, name, problems);
        if (JSON.stringify(crd).length > 1_000_000) problems.push(`${name}: larger than 1 MB`);
      }
    }
    expect(problems.slice(0, 20)).toEqual([]);
  });

  it("gives every field Google marks as naming a generated kind's resource a …Ref and …Selector to that kind", () => {
    const catalog = loadGoogleCatalog();
    const served = new Map<string, { typeName: string; plural: string }>(
      catalog.kinds.map((k) => [`${k.group}/${k.kind}`, k]),
    );
    // The one hand-written kind a generated kind refers to (Compute BackendBucket's bucketName).
    served.set("storage.gcp/Bucket", { typeName: "storage.googleapis.com/Bucket", plural: Bucket.plural });
    const facts = loadFacts();
    const typed = new Set(catalog.kinds.map((k) => k.typeName));
    let refs = 0;
    let parents = 0;
    const problems: string[] = [];
    for (const e of catalog.kinds) {
      const spec = loadGoogleSpec(e);
      const def = googleKindOf(spec);
      for (const r of spec.google.refs ?? []) {
        refs++;
        if (r.field === "parent") parents++;
        const to = served.get(`${r.group}/${r.kind}`);
        if (!to || to.typeName !== r.type)
          problems.push(`${e.kind}.${r.field}: ${r.type} is not ${r.group}/${r.kind}`);
        // A nested reference's fields sit beside its field, in the same object (every list item's own).
        const shape = shapeAt(def.forProvider, r.at);
        const ref = def.references.find((x) => x.field === r.field && x.at === r.at);
        if (!ref || !shape?.[ref.refField] || !shape[ref.selectorField] || !shape[r.field])
          problems.push(`${e.kind}.${r.at ? `${r.at}.` : ""}${r.field}: no ref/selector field`);
        if (ref?.to.plural !== to?.plural) problems.push(`${e.kind}.${r.field}: plural ${ref?.to.plural}`);
      }
      // Every top-level string field with a resource_reference to a served type has its reference.
      const msg = facts.resources.find(
        (x) => x.type === e.typeName && x.service === spec.google.service,
      )?.message;
      for (const f of msg ? (facts.messages[msg]?.fields ?? []) : [])
        if (f.ref && typed.has(f.ref) && spec.properties[f.j] && !f.map && !spec.secrets.includes(f.j))
          if (!spec.google.refs?.some((r) => r.field === f.j && !r.at))
            problems.push(`${e.kind}.${f.j}: ${f.ref} has no reference`);
    }
    expect(problems.slice(0, 20)).toEqual([]);
    // Measured on the pinned facts: 298 references in 227 kinds, 124 of them a parent.
    expect(refs).toBeGreaterThan(250);
    expect(parents).toBeGreaterThan(100);
  });

  it("uses groups no hand-written kind has, and installs none unless activated", () => {
    const generated = new Set(loadGoogleCatalog().kinds.map((k) => `${k.group}.driftless.dev`));
    const handWritten = allCrds().map((c) => c.spec.group);
    expect(handWritten.filter((g) => generated.has(g))).toEqual([]);
    expect(handWritten.filter((g) => g.includes(".googleapis."))).toEqual([]);
  });

  it("activates generated kinds only by naming them with googleapis", () => {
    const catalog = loadGoogleCatalog();
    const names = (p: string[]) => activatedGoogleEntries(p, catalog).map((e) => `${e.group}/${e.kind}`);
    expect(names([])).toEqual([]);
    expect(names(["*"])).toEqual([]);
    expect(names(["run.*", "compute.*", "*.gcp.driftless.dev"])).toEqual([]);
    expect(names(["run.googleapis.service"])).toEqual(["run.googleapis/Service"]);
    expect(names(["compute.googleapis.*"]).length).toBe(
      catalog.kinds.filter((k) => k.family === "compute").length,
    );
    expect(names(["*.googleapis.*"]).length).toBe(catalog.kinds.length);
    const svc = { group: "run.googleapis", kind: "Service" };
    expect(
      googlePatternSelects(
        "services.run.googleapis.driftless.dev",
        "services.run.googleapis.driftless.dev",
        svc,
      ),
    ).toBe(true);
    expect(
      googlePatternSelects(
        "services.run.googleapis.driftless.dev",
        "services.run.googleapis.m.driftless.dev",
        svc,
      ),
    ).toBe(false);
  });

  it("records the facts it was made from, and the data's README names the same origin", () => {
    const { origin } = loadFacts();
    expect(loadGoogleCatalog().source).toEqual(origin);
    expect(gcpIsCurrent()).toBe(true);
    const readme = readFileSync(join(import.meta.dirname, "../../../infra/gcp/README.md"), "utf8");
    expect(readme).toContain(origin.commit);
    expect(readme).toContain(origin.committed);
    const sensitive = loadSensitive().origin;
    expect(loadGoogleCatalog().sensitiveSource).toEqual(sensitive);
    expect(readme).toContain(sensitive.commit);
  });

  it("keeps every secret-named string, at any depth, out of spec text, atProvider and the observation", {
    timeout: 300_000,
  }, () => {
    const facts = loadFacts();
    // Credentials by key in a map (NotificationChannel's labels.auth_token…), as Magic Modules names them.
    const sensitive = new Map(loadSensitive().resources.map((x) => [x.type, x]));
    const catalog = loadGoogleCatalog();
    const problems: string[] = [];
    let secrets = 0;
    let sensitiveKinds = 0;
    for (const e of catalog.kinds) {
      const spec = loadGoogleSpec(e);
      const r = facts.resources.find(
        (x) => x.type === e.typeName && (x.kind === e.kind || e.kind.endsWith(x.kind)),
      );
      if (!r) continue;
      // A resource as Google could answer it: every field of every message down to depth 6, each secret-named
      // string holding the sentinel; the paths of those strings.
      const paths: string[] = [];
      const build = (message: string, prefix: string, depth: number): Json => {
        const out: Json = {};
        for (const f of facts.messages[message]?.fields ?? []) {
          const at = prefix ? `${prefix}.${f.j}` : f.j;
          let v: unknown;
          if (facts.messages[f.t] && depth < 6) v = build(f.t, at, depth + 1);
          else if (
            ["string", "bytes"].includes(f.t) &&
            (secretNamed(f.j) || PRIVATE_KEY_DATA.test(f.j)) &&
            !/^secretManager/i.test(f.j)
          ) {
            v = SENTINEL;
            paths.push(at);
          } else continue;
          out[f.j] = f.rep ? [v] : f.map ? { k: v } : v;
        }
        return out;
      };
      const resource = build(r.message, "", 0);
      const keys = sensitive.get(e.typeName);
      if (keys) {
        sensitiveKinds++;
        resource[keys.map] = { ...Object.fromEntries(keys.keys.map((k) => [k.key, SENTINEL])), plain: "x" };
        paths.push(...keys.keys.map((k) => `${keys.map}.${k.key}`));
      }
      if (paths.length === 0) continue;
      secrets += paths.length;
      const model = modelOf(spec);
      // What Google answers, as the provider reads it before comparing or reporting anything.
      const read = fromGoogle(spec, resource);
      const seen = JSON.stringify([observedOf(model, read, "", {}), atProviderOf(model, read)]);
      if (seen.includes(SENTINEL))
        problems.push(
          `${e.group}/${e.kind}: a secret reaches the observation or atProvider (${paths.slice(0, 3).join(", ")})`,
        );
      // The CRD: no secret-named string property anywhere below forProvider or atProvider.
      const crd = JSON.stringify(managedCrd(googleKindOf(spec)));
      for (const p of paths) {
        const last = p.split(".").at(-1) as string;
        if (new RegExp(`"${last}":\\{"type":"string"`).test(crd))
          problems.push(`${e.group}/${e.kind}: ${p} is a plain string field`);
      }
    }
    expect(secrets).toBeGreaterThan(100);
    expect(sensitiveKinds).toBeGreaterThanOrEqual(1);
    expect(problems.slice(0, 20)).toEqual([]);
  });
});
