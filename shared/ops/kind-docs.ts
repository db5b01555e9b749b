// Reference pages for docs/kinds/, generated from the same schemas as the CRDs (infra/gen-docs.ts writes
// them; a unit test fails when they are stale). One page per managed kind and per ProviderConfig: fields
// with types, descriptions, immutability, references, connection-Secret keys, printer columns and an
// example (from examples/ when one exists there, else a skeleton of the required fields).

import { parse, stringify } from "yaml";
import type { z } from "zod";
import { jsonSchemaOf, managedCrd, providerConfigCrd } from "../api/crd.ts";
import { type ManagedKindDef, namespacedVariantOf } from "../api/managed.ts";
import type { ResourceType } from "../api/meta.ts";

type Schema = { [key: string]: unknown };

export interface ExampleObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string };
  [key: string]: unknown;
}

export interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  description: string;
  immutable: boolean;
  /** Defaults, enums, bounds, patterns. */
  constraints: string[];
}

const asSchema = (v: unknown): Schema | undefined =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : undefined;

/** `[]string`, `map[string]string`, `object`, `integer`… as kubectl explain words it. */
export function typeOf(s: Schema): string {
  if (s.type === "array") return `[]${typeOf(asSchema(s.items) ?? {})}`;
  if (s.type === "object") {
    const values = asSchema(s.additionalProperties);
    if (values && !s.properties) return `map[string]${typeOf(values)}`;
    return "object";
  }
  return typeof s.type === "string" ? s.type : "any";
}

function constraintsOf(s: Schema): string[] {
  const out: string[] = [];
  if (Array.isArray(s.enum)) out.push(`one of: ${s.enum.map((e) => `\`${String(e)}\``).join(", ")}`);
  if (s.default !== undefined) out.push(`default: \`${JSON.stringify(s.default)}\``);
  if (s.minimum !== undefined || s.maximum !== undefined)
    out.push(`range: ${s.minimum ?? "…"}–${s.maximum ?? "…"}`);
  if (s.maxLength !== undefined) out.push(`length: ${s.minLength ?? 0}–${s.maxLength}`);
  else if (typeof s.minLength === "number" && s.minLength > 1) out.push(`min length: ${s.minLength}`);
  else if (s.minLength === 1) out.push("not empty");
  if (s.minItems !== undefined) out.push(`at least ${s.minItems} item(s)`);
  if (typeof s.pattern === "string") out.push(`pattern: \`${s.pattern}\``);
  return out;
}

/** Every field of an object schema, depth first, with dotted paths (`[]` for list items, `{}` for map values). */
export function fieldRows(schema: Schema, immutableTop: readonly string[] = [], prefix = ""): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, raw] of Object.entries(asSchema(schema.properties) ?? {})) {
    const s = asSchema(raw) ?? {};
    const path = prefix ? `${prefix}.${name}` : name;
    const top = path.split(/[.[{]/)[0] ?? "";
    rows.push({
      path,
      type: typeOf(s),
      required: required.has(name),
      description: typeof s.description === "string" ? s.description : "",
      immutable: immutableTop.includes(top),
      constraints: constraintsOf(s),
    });
    if (asSchema(s.properties)) rows.push(...fieldRows(s, immutableTop, path));
    const items = asSchema(s.items);
    if (items && asSchema(items.properties)) rows.push(...fieldRows(items, immutableTop, `${path}[]`));
    const values = asSchema(s.additionalProperties);
    if (values && asSchema(values.properties)) rows.push(...fieldRows(values, immutableTop, `${path}{}`));
  }
  return rows;
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("<", "&lt;").replaceAll("\n", " ");

function fieldTable(rows: readonly FieldRow[]): string {
  if (rows.length === 0) return "_No fields._\n";
  const lines = ["| field | type | description |", "| --- | --- | --- |"];
  for (const r of rows) {
    const flags = [r.required ? "**required**" : "", r.immutable ? "**immutable**" : ""].filter(Boolean);
    const extra = [...flags, ...r.constraints].join("; ");
    lines.push(
      `| \`${r.path}\` | ${cell(r.type)} | ${cell(r.description)}${extra ? ` <br>${cell(extra)}` : ""} |`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** File name of a kind's page: the CRD name, e.g. `queues.sqs.aws.driftless.dev.md`. */
export const pageName = (t: Pick<ResourceType, "plural" | "group">) => `${t.plural}.${t.group}.md`;

function placeholder(s: Schema): unknown {
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.default !== undefined) return s.default;
  switch (s.type) {
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? s.minimum : 1;
    case "boolean":
      return true;
    case "array":
      return [placeholder(asSchema(s.items) ?? {})];
    case "object": {
      const props = asSchema(s.properties);
      if (!props) return {};
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      return Object.fromEntries(required.map((k) => [k, placeholder(asSchema(props[k]) ?? {})]));
    }
    default:
      return "<string>";
  }
}

function exampleYaml(
  apiVersion: string,
  kind: string,
  spec: Schema,
  examples: readonly ExampleObject[],
  fallback?: object,
): { yaml: string; source: string | undefined } {
  const found = examples.find((e) => e.apiVersion === apiVersion && e.kind === kind);
  if (found) return { yaml: stringify(found), source: "examples/" };
  const obj = fallback ?? { apiVersion, kind, metadata: { name: "example" }, spec: placeholder(spec) };
  return { yaml: stringify(obj), source: undefined };
}

function parseExample(yaml: string): ExampleObject {
  return parse(yaml) as ExampleObject;
}

function columnsTable(columns: ReadonlyArray<Record<string, unknown>>): string {
  const lines = ["| column | from |", "| --- | --- |"];
  for (const c of columns) lines.push(`| ${String(c.name)} | \`${cell(String(c.jsonPath))}\` |`);
  return `${lines.join("\n")}\n`;
}

const NAMESPACED_SPEC = `| field | what |
| --- | --- |
| \`spec.providerConfigRef\` | \`kind\`: \`ClusterProviderConfig\` (default; the platform's, if it allows this namespace) or \`ProviderConfig\` (one in this namespace), and \`name\` (default \`default\`). |
| \`spec.writeConnectionSecretToRef.name\` | The Secret in this object's namespace the connection details are written to (owned by this resource; keys are only ever added). |
| \`spec.managementPolicies\` | What driftless may do: \`Observe\`, \`Create\`, \`Update\`, \`Delete\`, \`LateInitialize\` or \`*\` (default). Leave out \`Delete\` to keep the cloud resource when this object is deleted (there is no deletionPolicy). |

References name objects of the namespaced kinds in the same namespace, and Secret references (\`name\`, \`key\`) Secrets in the same namespace: a namespaced object can never reach another namespace.
`;

/**
 * The namespaced form of an example of the cluster-scoped shape: in a namespace, no deletionPolicy,
 * Secrets by name only, the ClusterProviderConfig of the same name.
 */
export function namespacedExample(def: ManagedKindDef, example: ExampleObject): ExampleObject {
  const variant = namespacedVariantOf(def);
  const spec = structuredClone((example.spec ?? {}) as Record<string, unknown>);
  const policy = spec.deletionPolicy;
  delete spec.deletionPolicy;
  if (policy === "Orphan") spec.managementPolicies = ["Observe", "Create", "Update", "LateInitialize"];
  const conn = spec.writeConnectionSecretToRef as { name?: string } | undefined;
  if (conn) spec.writeConnectionSecretToRef = { name: conn.name };
  const pc = spec.providerConfigRef as { name?: string } | undefined;
  if (pc) spec.providerConfigRef = { kind: "ClusterProviderConfig", name: pc.name ?? "default" };
  const fp = spec.forProvider as Record<string, unknown> | undefined;
  for (const path of variant.secretRefPaths) {
    const ref = path
      .split(".")
      .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], fp);
    if (ref && typeof ref === "object") delete (ref as Record<string, unknown>).namespace;
  }
  const { name, ...rest } = example.metadata ?? {};
  const metadata = { name, namespace: "team-a", ...rest };
  return { ...example, apiVersion: variant.apiVersion, kind: def.kind, metadata, spec };
}

const COMMON_SPEC = `| field | what |
| --- | --- |
| \`spec.providerConfigRef.name\` | The ProviderConfig with the credentials; default \`default\`. |
| \`spec.writeConnectionSecretToRef\` | \`namespace\` and \`name\` of the Secret the connection details are written to (owned by this resource; keys are only ever added). |
| \`spec.deletionPolicy\` | \`Delete\` (default) deletes the cloud resource with this object; \`Orphan\` leaves it. |
| \`spec.managementPolicies\` | What driftless may do: \`Observe\`, \`Create\`, \`Update\`, \`Delete\`, \`LateInitialize\` or \`*\` (default). \`[Observe]\` imports read-only. |
`;

const ANNOTATIONS = `| annotation | what |
| --- | --- |
| \`crossplane.io/external-name\` | The cloud resource's name or id. |
| \`crossplane.io/paused: "true"\` | No cloud calls until removed (\`Synced=False, ReconcilePaused\`). |
| \`crossplane.io/poll-interval\` | Drift-check interval of this resource, e.g. \`1m\`, \`30m\` (default: the deployment's). |
| \`crossplane.io/external-create-pending\` / \`-succeeded\` / \`-failed\` | Written by driftless around every create (the create-pending guard); see [troubleshooting](../troubleshooting.md). |
`;

/** The reference page of one managed kind. */
export function managedKindPage(def: ManagedKindDef, examples: readonly ExampleObject[] = []): string {
  const crd = managedCrd(def);
  const forProvider = jsonSchemaOf(def.forProvider as z.ZodType);
  const atProvider = jsonSchemaOf(def.atProvider as z.ZodType);
  const example = exampleYaml(
    def.apiVersion,
    def.kind,
    asSchema(crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec) ?? {},
    examples,
  );
  const variant = namespacedVariantOf(def);
  const clusterExample = parseExample(example.yaml);
  const namespaced = exampleYaml(
    variant.apiVersion,
    def.kind,
    {},
    examples,
    namespacedExample(def, clusterExample),
  );
  const externalName =
    def.externalName === "providerChosen"
      ? `chosen by the cloud on create (an id): driftless records it in \`crossplane.io/external-name\`. To import an existing ${def.kind}, set the annotation to its id.`
      : `\`crossplane.io/external-name\`, default \`metadata.name\`. To import an existing ${def.kind}, set the annotation to its name.`;
  const refs = def.references.map(
    (r) =>
      `- \`${r.at ? `${r.at}[].` : ""}${r.field}\` is filled from a ${r.to.kind} (\`${r.to.apiVersion}\`)${r.anyKind ? ", or the kind the reference's or selector's `apiVersion` and `kind` name" : ""}: by name with \`${r.refField}\`, or by labels with \`${r.selectorField}\`${r.at ? ` beside it (in every \`${r.at}\` object or list item)` : ""}${r.list ? " (a list: every selected resource)" : ""}. It waits until the ${r.anyKind ? "target" : r.to.kind} is Ready ("referenced resource may not yet be ready").`,
  );
  return `<!-- Generated by npm run gen:docs from shared/api — do not edit. -->
# ${def.kind} — \`${def.apiVersion}\`, \`${variant.apiVersion}\`

${def.description}

- **Shapes:** cluster-scoped \`${def.apiVersion}\` (the Crossplane v1 shape) and namespaced \`${variant.apiVersion}\` (the Crossplane v2 shape): the same \`forProvider\`, \`atProvider\` and behaviour; only the [other \`spec\` fields](#other-spec-fields) differ.
- **Cloud:** ${def.cloud.toUpperCase()}, credentials from a [\`ProviderConfig.${def.providerConfig.group}\`](${pageName(def.providerConfig)}) (cluster-scoped shape), or a [\`ProviderConfig.${variant.providerConfigKinds?.ProviderConfig.group}\`](${pageName(variant.providerConfigKinds?.ProviderConfig ?? def.providerConfig)}) in the same namespace or a [\`ClusterProviderConfig.${variant.providerConfig.group}\`](${pageName(variant.providerConfig)}) (namespaced shape)
- **External name:** ${externalName}
- **Immutable fields:** ${def.immutable.length ? def.immutable.map((f) => `\`${f}\``).join(", ") : "none"} — changing one is reported in \`Synced\` (ReconcileError), never applied by deleting and recreating.
- **Connection Secret keys:** ${def.connectionKeys.length ? def.connectionKeys.map((k) => `\`${k}\``).join(", ") : "none"}
${def.shortNames?.length ? `- **Short names:** ${def.shortNames.join(", ")}\n` : ""}
## Example

Cluster-scoped${example.source ? `, from \`${example.source}\`` : ""}:

\`\`\`yaml
${example.yaml.trimEnd()}
\`\`\`

Namespaced${namespaced.source ? `, from \`${namespaced.source}\`` : ""}:

\`\`\`yaml
${namespaced.yaml.trimEnd()}
\`\`\`

## \`spec.forProvider\`

${fieldTable(fieldRows(forProvider, def.immutable))}
${refs.length ? `### References\n\n${refs.join("\n")}\n\n` : ""}## Other \`spec\` fields

Cluster-scoped:

${COMMON_SPEC}
Namespaced:

${NAMESPACED_SPEC}
## \`status.atProvider\`

${fieldTable(fieldRows(atProvider))}
\`status.conditions\`: \`Ready\` (Available, Creating, Deleting, Unavailable) and \`Synced\` (ReconcileSuccess, ReconcileError, ReconcilePaused) — see [troubleshooting](../troubleshooting.md).

## Annotations

${ANNOTATIONS}
## \`kubectl get\` / \`driftless get\` columns

${columnsTable(crd.spec.versions[0]?.additionalPrinterColumns ?? [])}`;
}

/** ProviderConfigs have no file in examples/ (the local ones are made by infra/local): these are typical. */
const PROVIDER_CONFIG_EXAMPLES: Record<string, object> = {
  aws: {
    spec: {
      credentials: {
        source: "Secret",
        secretRef: { namespace: "driftless-system", name: "aws-credentials", key: "credentials" },
      },
      region: "eu-west-1",
    },
  },
  gcp: {
    spec: { projectID: "my-project", credentials: { source: "InjectedIdentity" } },
  },
  azure: {
    spec: {
      tenantID: "00000000-0000-0000-0000-000000000000",
      subscriptionID: "00000000-0000-0000-0000-000000000000",
      clientID: "00000000-0000-0000-0000-000000000000",
      credentials: {
        source: "Secret",
        secretRef: { namespace: "driftless-system", name: "azure-credentials", key: "clientSecret" },
      },
      storage: { accountName: "mystorageaccount" },
    },
  },
};

/** A typical spec of a cloud's ProviderConfig kind: a namespaced one names Secrets without a namespace. */
function typicalProviderConfig(cloud: string, type: ResourceType): object | undefined {
  const typical = PROVIDER_CONFIG_EXAMPLES[cloud];
  if (!typical || !type.namespaced) return typical;
  const copy = structuredClone(typical) as { spec: Record<string, unknown> };
  const walk = (o: unknown) => {
    if (!o || typeof o !== "object") return;
    const r = o as Record<string, unknown>;
    if (typeof r.name === "string" && typeof r.key === "string") delete r.namespace;
    for (const v of Object.values(r)) walk(v);
  };
  walk(copy.spec);
  const credentials = copy.spec.credentials as { source?: string } | undefined;
  // A namespaced ProviderConfig names a Secret: the ambient identity is the platform's.
  if (credentials?.source === "InjectedIdentity")
    copy.spec.credentials = {
      source: "Secret",
      secretRef: { name: `${cloud}-credentials`, key: "credentials" },
    };
  return copy;
}

/** The reference page of one cloud's ProviderConfig. */
export function providerConfigPage(
  cloud: string,
  type: ResourceType,
  spec: z.ZodType,
  examples: readonly ExampleObject[] = [],
): string {
  const crd = providerConfigCrd(type, spec as Parameters<typeof providerConfigCrd>[1], cloud);
  const apiVersion = `${type.group}/${type.version}`;
  const typical = typicalProviderConfig(cloud, type);
  const example = exampleYaml(
    apiVersion,
    type.kind,
    asSchema(crd.spec.versions[0]?.schema.openAPIV3Schema.properties.spec) ?? {},
    examples,
    typical
      ? {
          apiVersion,
          kind: type.kind,
          metadata: { name: "default", ...(type.namespaced ? { namespace: "team-a" } : {}) },
          ...typical,
        }
      : undefined,
  );
  const usedBy =
    type.kind === "ClusterProviderConfig"
      ? `Namespaced managed resources name it in \`spec.providerConfigRef\` (\`kind: ClusterProviderConfig\`, the default, and \`name\`, default \`default\`), from the namespaces \`spec.allowedNamespaces\` allows (every namespace when unset). It may use \`InjectedIdentity\`: the platform creates it.`
      : type.namespaced
        ? `Namespaced managed resources in the same namespace name it in \`spec.providerConfigRef\` (\`kind: ProviderConfig\`, \`name\`). Its Secrets are read from its own namespace. It may not use \`InjectedIdentity\` unless the platform allows it for this namespace (\`DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES\`), and its endpoints may not reach link-local or cloud-metadata addresses: otherwise \`Ready=False, NotAllowed\` says which rule ([security](../security.md#namespaces-and-tenants)).`
        : `Cluster-scoped managed resources name it in \`spec.providerConfigRef.name\` (default \`default\`).`;
  return `<!-- Generated by npm run gen:docs from shared/api — do not edit. -->
# ${type.kind} — \`${apiVersion}\`

${crd.spec.versions[0]?.schema.openAPIV3Schema.description}

${usedBy} driftless checks its
credentials (\`Ready\`), counts its users (\`status.users\`) and holds its deletion while any resource uses it.
\`driftless doctor\` checks every ProviderConfig's credentials. Least-privilege permissions: [security](../security.md).

## Example

${example.source ? `From \`${example.source}\`:\n\n` : ""}\`\`\`yaml
${example.yaml.trimEnd()}
\`\`\`

## \`spec\`

${fieldTable(fieldRows(jsonSchemaOf(spec)))}
## \`kubectl get\` / \`driftless get\` columns

${columnsTable(crd.spec.versions[0]?.additionalPrinterColumns ?? [])}`;
}

/** The index page: every kind with its apiVersion and cloud. */
export function kindsIndex(
  defs: readonly ManagedKindDef[],
  pcs: readonly { cloud: string; type: ResourceType }[],
) {
  const rows = defs
    .filter((d) => d.scope === "Cluster")
    .map(
      (d) =>
        `| [${d.kind}](${pageName(d)}) | \`${d.apiVersion}\`<br>\`${namespacedVariantOf(d).apiVersion}\` | ${d.cloud.toUpperCase()} | ${cell(d.description.split(". ")[0] ?? "")} |`,
    );
  const pcRows = pcs.map(
    (p) =>
      `| [${p.type.kind}](${pageName(p.type)}) | \`${p.type.group}/${p.type.version}\` | ${p.cloud.toUpperCase()} | ${pcWhat(p.type)} |`,
  );
  return `<!-- Generated by npm run gen:docs from shared/api — do not edit. -->
# Kinds

Every kind driftless serves, generated from the schemas in \`shared/api/\` (the same source as the CRDs).
\`kubectl explain <kind>.<group>\` shows the same descriptions.

| kind | apiVersion | cloud | what |
| --- | --- | --- | --- |
${[...rows, ...pcRows].join("\n")}
`;
}

function pcWhat(t: ResourceType): string {
  if (t.kind === "ClusterProviderConfig")
    return "Credentials, region/project and endpoints for namespaced kinds, in the namespaces it allows";
  if (t.namespaced) return "Credentials, region/project and endpoints for namespaced kinds in its namespace";
  return "Credentials, region/project and endpoints for cluster-scoped kinds";
}

/** Every generated page: file name → Markdown. */
export function kindPages(
  defs: readonly ManagedKindDef[],
  pcs: readonly { cloud: string; type: ResourceType; spec: z.ZodType }[],
  examples: readonly ExampleObject[] = [],
): Map<string, string> {
  const pages = new Map<string, string>();
  pages.set("README.md", kindsIndex(defs, pcs));
  // One page per kind shows both shapes (the namespaced variant has no page of its own).
  for (const d of defs) if (d.scope === "Cluster") pages.set(pageName(d), managedKindPage(d, examples));
  for (const p of pcs) pages.set(pageName(p.type), providerConfigPage(p.cloud, p.type, p.spec, examples));
  return pages;
}
