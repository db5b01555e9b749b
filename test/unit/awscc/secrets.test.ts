// Every generated AWS kind, both shapes, against its CloudFormation registry schema read here on its own
// (not through the generator's path resolution): no secret — a write-only string named like one, or any
// string at any depth named like one — can be written in spec.forProvider as plain text (its place is
// either gone from the structural schema or a `…SecretRef(s)`, never inside a free-form value), and none
// reaches status.atProvider or the observation the engine compares and writes, even when the cloud
// answers with it. Write-only inputs are never compared; create-only paths at any depth are immutable
// and never patched.
import { beforeAll, describe, expect, it } from "vitest";
import { loadRegistryBundle, type RegistrySchema } from "../../../infra/awscc/registry.ts";
import { generateAwscc, secretNamed } from "../../../infra/gen-awscc.ts";
import { readableModel } from "../../../infra/local/fakes/cloudcontrol-fake.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../../shared/api/awscc/catalog.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { type AwsccKindSpec, type AwsccNode, camelOf } from "../../../shared/api/awscc/spec.ts";
import { type JSONSchemaProps, managedCrd } from "../../../shared/api/crd.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import {
  atProviderOf,
  desiredModel,
  equal,
  observedOf,
  patchOf,
} from "../../../shared/providers/awscc/model.ts";

type Schema = Record<string, unknown>;
const SENTINEL = "sentinel-secret-value-7f3a";

/** One step of a registry path: the property's name and whether it holds a list of its type. */
interface Step {
  name: string;
  list: boolean;
}

/** The alternatives a registry schema node stands for: itself, its $ref, its oneOf/anyOf/allOf members. */
function alternatives(reg: RegistrySchema, s: Schema, seen: Set<string>): Schema[] {
  const out: Schema[] = [s];
  const ref = s.$ref;
  if (typeof ref === "string" && ref.startsWith("#/definitions/")) {
    const name = ref.slice("#/definitions/".length);
    const def = (reg.definitions as Record<string, Schema> | undefined)?.[name];
    if (def && !seen.has(name)) out.push(...alternatives(reg, def, new Set([...seen, name])));
  }
  for (const k of ["oneOf", "anyOf", "allOf"])
    for (const x of (s[k] as Schema[] | undefined) ?? []) out.push(...alternatives(reg, x, seen));
  return out;
}

const typesOf = (alts: Schema[]) => alts.flatMap((a) => (Array.isArray(a.type) ? a.type : [a.type]));

/** Every string (or list of strings) below a type's properties, with the steps to it. */
function stringPaths(reg: RegistrySchema): Array<{ steps: Step[]; writeOnly: boolean }> {
  const out: Array<{ steps: Step[]; writeOnly: boolean }> = [];
  const wo = new Set(reg.writeOnlyProperties ?? []);
  const walk = (props: Record<string, Schema>, steps: Step[], pointer: string, refs: Set<string>) => {
    for (const [name, s] of Object.entries(props)) {
      let alts = alternatives(reg, s, refs);
      const list = typesOf(alts).includes("array");
      if (list) alts = alts.flatMap((a) => (a.items ? alternatives(reg, a.items as Schema, refs) : []));
      const here = [...steps, { name, list }];
      const p = `${pointer}/${name}${list ? "/*" : ""}`;
      if (typesOf(alts).includes("string"))
        out.push({ steps: here, writeOnly: wo.has(`${pointer}/${name}`) });
      const refNames = alts.flatMap((a) =>
        typeof a.$ref === "string" ? [a.$ref.slice("#/definitions/".length)] : [],
      );
      if (refNames.some((r) => refs.has(r)) || here.length > 12) continue;
      for (const a of alts)
        if (a.properties)
          walk(a.properties as Record<string, Schema>, here, p, new Set([...refs, ...refNames]));
    }
  };
  walk((reg.properties ?? {}) as Record<string, Schema>, [], "/properties", new Set());
  return out;
}

/**
 * The secrets of a registry schema: strings anywhere (write-only or not) named like secrets, except the
 * members of a "…Units" object, which name time units (Cognito's TokenValidityUnits.AccessToken: "hours").
 */
const secretsOf = (reg: RegistrySchema) =>
  stringPaths(reg).filter(
    (p) => secretNamed(p.steps.at(-1)?.name ?? "") && !/Units$/.test(p.steps.at(-2)?.name ?? ""),
  );

const props = (s: JSONSchemaProps | undefined) => (s?.properties ?? {}) as Record<string, JSONSchemaProps>;
const freeForm = (s: JSONSchemaProps) => s["x-kubernetes-preserve-unknown-fields"] === true && !s.properties;
/** Through lists and maps to the object schema that holds members. */
const inner = (s: JSONSchemaProps): JSONSchemaProps => {
  let x = s;
  while (x.items || typeof x.additionalProperties === "object")
    x = (x.items ?? x.additionalProperties) as JSONSchemaProps;
  return x;
};

/** Where plain text could be written at `steps` below `root`: a problem, or undefined when nowhere. */
function plainTextAt(root: JSONSchemaProps, steps: Step[]): string | undefined {
  let node = root;
  for (const [i, step] of steps.entries()) {
    if (freeForm(node))
      return `free-form at ${
        steps
          .slice(0, i)
          .map((s) => s.name)
          .join(".") || "root"
      }`;
    const last = i === steps.length - 1;
    const key = [camelOf(step.name), step.name].find((k) => props(node)[k]);
    if (!key) return undefined; // not in the structural schema: the API server prunes it
    if (last) return `plain field ${key}`;
    node = inner(props(node)[key] as JSONSchemaProps);
  }
  return undefined;
}

/** A wire model with `value` at every registry path in `paths` (lists of one item). */
function modelWith(paths: Step[][], value: string): Record<string, unknown> {
  const model: Record<string, unknown> = {};
  for (const steps of paths) {
    let at: Record<string, unknown> = model;
    for (const [i, s] of steps.entries()) {
      const last = i === steps.length - 1;
      if (last) {
        at[s.name] = s.list ? [value] : value;
        break;
      }
      if (s.list) {
        const list = (Array.isArray(at[s.name]) ? at[s.name] : [{}]) as Array<Record<string, unknown>>;
        at[s.name] = list;
        at = list[0] as Record<string, unknown>;
      } else {
        const next = (typeof at[s.name] === "object" && at[s.name] !== null ? at[s.name] : {}) as Record<
          string,
          unknown
        >;
        at[s.name] = next;
        at = next;
      }
    }
  }
  return model;
}

let catalog: ReturnType<typeof loadAwsccCatalog>;
let registry: Record<string, RegistrySchema>;
beforeAll(() => {
  generateAwscc();
  catalog = loadAwsccCatalog();
  registry = loadRegistryBundle().bundle.schemas;
}, 60_000);

describe("secrets of every generated AWS kind", () => {
  it("finds the secrets the issue names, at any depth, in the registry schemas", () => {
    const names = (t: string) =>
      secretsOf(registry[t] as RegistrySchema).map((p) => p.steps.map((s) => s.name).join("."));
    expect(names("AWS::IAM::User")).toContain("LoginProfile.Password");
    expect(names("AWS::AmazonMQ::Broker")).toContain("Users.Password");
    expect(names("AWS::Events::Connection")).toContain(
      "AuthParameters.OAuthParameters.ClientParameters.ClientSecret",
    );
    expect(names("AWS::OpenSearchService::Domain")).toContain(
      "AdvancedSecurityOptions.MasterUserOptions.MasterUserPassword",
    );
  });

  it("no secret can be written in spec.forProvider as plain text, in any kind, either shape", () => {
    const problems: string[] = [];
    let checked = 0;
    for (const e of catalog.kinds) {
      const reg = registry[e.typeName];
      if (!reg) continue;
      const secrets = secretsOf(reg);
      if (secrets.length === 0) continue;
      const def = awsccKindOf(loadAwsccSpec(e));
      for (const d of [def, namespacedVariantOf(def)]) {
        const schema = managedCrd(d).spec.versions[0]?.schema.openAPIV3Schema as unknown as JSONSchemaProps;
        const forProvider = props(props(schema).spec).forProvider as JSONSchemaProps;
        for (const s of secrets) {
          checked++;
          const problem = plainTextAt(forProvider, s.steps);
          if (problem)
            problems.push(`${d.kind} (${d.group}) ${s.steps.map((x) => x.name).join(".")}: ${problem}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(250);
    expect(problems).toEqual([]);
  });

  it("no secret the cloud answers with reaches status.atProvider or the observation, in any kind", () => {
    const problems: string[] = [];
    let kinds = 0;
    for (const e of catalog.kinds) {
      const reg = registry[e.typeName];
      if (!reg) continue;
      const secrets = secretsOf(reg);
      const spec = loadAwsccSpec(e);
      const secretAttributes = Object.values(spec.attributes).filter((a) => a.secret);
      if (secrets.length === 0 && secretAttributes.length === 0) continue;
      kinds++;
      const model = modelWith(
        [
          ...secrets.map((s) => s.steps),
          ...secretAttributes.map((a) => a.n.split(".").map((name) => ({ name, list: false }))),
        ],
        SENTINEL,
      );
      const seen = JSON.stringify({ o: observedOf(spec, model, "us-east-1"), a: atProviderOf(spec, model) });
      if (seen.includes(SENTINEL)) problems.push(`${e.typeName}: ${seen.slice(0, 300)}`);
      // The CRD's status schema has no place for them either.
      const def = awsccKindOf(spec);
      const atProvider = props(
        props(managedCrd(def).spec.versions[0]?.schema.openAPIV3Schema as unknown as JSONSchemaProps).status,
      ).atProvider as JSONSchemaProps;
      for (const a of secretAttributes)
        if (props(atProvider)[camelOf(a.n)]) problems.push(`${e.typeName}: atProvider.${a.n}`);
    }
    expect(kinds).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it("publishes the secret attributes the issue names to the connection Secret, not to atProvider", () => {
    const secretAttrs = (t: string) => {
      const spec = loadAwsccSpec(catalog.kinds.find((k) => k.typeName === t) as never);
      return Object.entries(spec.attributes)
        .filter(([, a]) => a.secret)
        .map(([k]) => k);
    };
    expect(secretAttrs("AWS::Cognito::UserPoolClient")).toEqual(["clientSecret"]);
    // IAM::AccessKey and AppSync::ApiKey are NON_PROVISIONABLE: Cloud Control refuses them, none is generated.
    expect(catalog.kinds.some((k) => k.typeName === "AWS::IAM::AccessKey")).toBe(false);
  });

  it("never compares a write-only input: each is declared so, or overlaid from the spec in a list", () => {
    const problems: string[] = [];
    for (const e of catalog.kinds) {
      const reg = registry[e.typeName];
      const spec = loadAwsccSpec(e);
      if (!reg || spec.writeOnly.length + spec.secrets.length === 0) continue;
      const def = awsccKindOf(spec);
      for (const p of spec.writeOnly) if (!def.fields[p]?.writeOnly) problems.push(`${e.typeName} ${p}`);
      // A resource made from a spec with every hidden path set, as GetResource shows it: the same spec.
      const hiddenPaths = [...spec.writeOnly, ...spec.secrets];
      const withRefs = forProviderWith(spec, hiddenPaths, true);
      const plain = forProviderWith(spec, hiddenPaths, false);
      const model = readableModel(spec, desiredModel(spec, { forProvider: plain, externalName: undefined }));
      const observed = observedOf(spec, model, "us-east-1", withRefs);
      for (const p of Object.keys(withRefs))
        if (!equal(observed[p], withRefs[p]))
          problems.push(
            `${e.typeName} ${p}: ${JSON.stringify(observed[p])} vs ${JSON.stringify(withRefs[p])}`.slice(
              0,
              400,
            ),
          );
    }
    expect(problems).toEqual([]);
  });
});

describe("create-only paths of every generated AWS kind", () => {
  it("are immutable at any depth and never in an update patch", () => {
    const problems: string[] = [];
    let nested = 0;
    for (const e of catalog.kinds) {
      const spec = loadAwsccSpec(e);
      if (spec.createOnly.length === 0) continue;
      const def = awsccKindOf(spec);
      for (const c of spec.createOnly) {
        if (c.includes(".")) nested++;
        if (!def.immutable.some((i) => i === c || i.startsWith(`${c}`)))
          problems.push(`${e.typeName} ${c} not immutable`);
      }
      // Every create-only path set to one value in the spec and another in the cloud: nothing to patch.
      const desired = wireWith(spec, spec.createOnly, "wanted");
      const current = wireWith(spec, spec.createOnly, "current");
      for (const op of patchOf(spec, desired, current)) problems.push(`${e.typeName} patches ${op.path}`);
    }
    expect(nested).toBeGreaterThan(150);
    expect(problems).toEqual([]);
  });
});

/** The node at a field path of the spec, with whether each step is a list. */
function stepsOf(
  spec: AwsccKindSpec,
  path: string,
): Array<{ key: string; wire: string; node: AwsccNode }> | undefined {
  let members = spec.properties;
  const out: Array<{ key: string; wire: string; node: AwsccNode }> = [];
  for (const k of path.split(".")) {
    const p = members[k];
    if (!p) return undefined;
    out.push({ key: k, wire: p.n, node: p.s });
    let n = p.s;
    while (n.t === "array" || n.t === "map") n = n.of;
    members = n.t === "ref" ? (spec.defs[n.ref]?.props ?? {}) : {};
  }
  return out;
}

/** A value of a node's leaf kind (a list of one where the node is a list). */
function leafOf(node: AwsccNode, v: string): unknown {
  if (node.t === "array") return [leafOf(node.of, v)];
  if (node.t === "map") return { k: leafOf(node.of, v) };
  if (node.t === "integer" || node.t === "number") return v.length;
  if (node.t === "boolean") return v === "wanted";
  if (node.t === "tags") return [{ Key: "k", Value: v }];
  if (node.t === "ref") return {};
  return v;
}

function setAt(root: Record<string, unknown>, steps: Array<{ name: string; node: AwsccNode }>, v: string) {
  let at = root;
  for (const [i, s] of steps.entries()) {
    if (i === steps.length - 1) {
      at[s.name] = leafOf(s.node, v);
      return;
    }
    const list = s.node.t === "array";
    const existing = at[s.name];
    const next = list
      ? ((existing as Array<Record<string, unknown>> | undefined)?.[0] ?? {})
      : ((existing as Record<string, unknown> | undefined) ?? {});
    at[s.name] = list ? [next] : next;
    at = next;
  }
}

/** A wire model with a value at each field path (CloudFormation names). */
function wireWith(spec: AwsccKindSpec, paths: readonly string[], v: string) {
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    const steps = stepsOf(spec, p);
    if (steps)
      setAt(
        out,
        steps.map((s) => ({ name: s.wire, node: s.node })),
        v,
      );
  }
  return out;
}

/** A forProvider with a value at each field path (camelCase; with `refs`, a secret's reference in its place). */
function forProviderWith(spec: AwsccKindSpec, paths: readonly string[], refs: boolean) {
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    const steps = stepsOf(spec, p);
    if (!steps || steps[0]?.key === spec.identifierField) continue;
    const named = steps.map((s, i) => {
      const last = i === steps.length - 1;
      const secret = refs && last && spec.secrets.includes(p);
      return {
        name: secret ? `${s.key}${s.node.t === "array" ? "SecretRefs" : "SecretRef"}` : s.key,
        node: secret ? ({ t: "string" } as AwsccNode) : s.node,
      };
    });
    setAt(out, named, "wanted");
  }
  return out;
}
