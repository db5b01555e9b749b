// Which generated driftless kind an Upjet kind without a hand-written twin becomes, from facts only
// (migrate-upjet-facts.ts): AWS by the Terraform resource type's name in the awscc provider's CloudFormation
// type list; Azure by the ARM resource id template in Upjet's external-name configuration; Google by the
// resource-name template there, matched against the generated kinds' resource-name patterns. Also how the
// external name carries over (the target's primary identifier), or why it cannot. Pure once built.
import { loadAwsccCatalog, loadAwsccSpec } from "../api/awscc/catalog.ts";
import { awsccKindOf } from "../api/awscc/kind.ts";
import type { AwsccKindSpec } from "../api/awscc/spec.ts";
import { loadAzureCatalog, loadAzureSpec } from "../api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../api/azure-gen/kind.ts";
import type { AzureKindSpec } from "../api/azure-gen/spec.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../api/googleapis/catalog.ts";
import { googleKindOf } from "../api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../api/googleapis/spec.ts";
import { type ManagedKindDef, once } from "../api/managed.ts";
import type { UpjetFacts } from "./migrate-upjet-facts.ts";

/** How Crossplane's external name becomes the generated kind's. */
export type ExternalNameRule =
  /** Carried as it is (or taken from `field` of forProvider when the annotation is missing). */
  | { carry: string; severity: "note" | "warning"; field?: string; onlyIf?: RegExp; otherwise?: string }
  /** Not derivable from the facts: the object is refused with this explanation. */
  | { refuse: string };

export interface GeneratedTarget {
  def: ManagedKindDef;
  /** The facts that link the two kinds, for the report. */
  via: string;
  externalName: ExternalNameRule;
  /** Upjet fields carried one level down (Azure: ARM's `properties`), by the container's name. */
  nested: Record<string, string>;
  /** Upjet fields that are the external name in driftless (left out of forProvider, with a note). */
  identifierFields: string[];
}

export type GeneratedResolution = GeneratedTarget | { unmapped: string };
/** An Upjet kind (v1 group, kind) → its generated driftless kind, or why there is none; undefined: not an Upjet kind the facts know. */
export type GeneratedKinds = (group: string, kind: string) => GeneratedResolution | undefined;

const camel = (snake: string) => snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Upjet's external-name configuration (config/externalname.go), as far as it is a fact about the name. */
type UpjetIdentifier =
  | { kind: "name"; field: string }
  | { kind: "template"; field: string; template: string }
  | { kind: "provider" }
  | { kind: "other"; expr: string };

export function upjetIdentifier(expr: string): UpjetIdentifier {
  if (expr === "config.NameAsIdentifier") return { kind: "name", field: "name" };
  if (expr === "config.IdentifierFromProvider") return { kind: "provider" };
  const param = /^config\.ParameterAsIdentifier\("(\w+)"\)$/.exec(expr);
  if (param?.[1]) return { kind: "name", field: param[1] };
  const tmpl = /^config\.TemplatedStringAsIdentifier\("(\w+)",\s*(.+)\)$/.exec(expr);
  if (tmpl?.[1] && tmpl[2]) {
    const literal = /^"([^"]*)"$/.exec(tmpl[2]);
    return { kind: "template", field: tmpl[1], template: literal?.[1] ?? tmpl[2] };
  }
  return { kind: "other", expr };
}

const EXTERNAL = "{{ .external_name }}";
/** A resource-name template with every variable as `{}` (`projects/{}/topics/{}`). */
const shapeOf = (template: string) =>
  template
    .replace(/\{\{[^}]*\}\}/g, "{}")
    .replace(/\{[^}]*\}/g, "{}")
    .replace(/^\/+/, "");

export interface GeneratedDirs {
  awscc?: string;
  azure?: string;
  gcp?: string;
}

/**
 * The resolver over the facts and the generated kinds (each cloud's catalog loaded when first asked; a cloud
 * whose kinds are not generated answers with why).
 */
export function generatedKinds(facts: UpjetFacts, dirs: GeneratedDirs = {}): GeneratedKinds {
  const cache = new Map<string, GeneratedResolution | undefined>();
  const aws = once(() => awsIndex(dirs.awscc));
  const azure = once(() => azureIndex(dirs.azure));
  const gcp = once(() => gcpIndex(dirs.gcp));
  return (group, kind) => {
    const key = `${group}/${kind}`;
    if (cache.has(key)) return cache.get(key);
    const cloud = (["aws", "azure", "gcp"] as const).find(
      (c) => group === `${c}.upbound.io` || group.endsWith(`.${c}.upbound.io`),
    );
    const fact = cloud ? facts.kinds[cloud][key] : undefined;
    let out: GeneratedResolution | undefined;
    if (cloud && fact) {
      const [tf, expr] = fact;
      try {
        out =
          cloud === "aws"
            ? awsTarget(facts, aws(), tf, expr)
            : cloud === "azure"
              ? azureTarget(azure(), tf, expr)
              : gcpTarget(gcp(), group, tf, expr);
      } catch (e) {
        out = { unmapped: `the generated ${cloud} kinds are not available (${(e as Error).message})` };
      }
    }
    cache.set(key, out);
    return out;
  };
}

// AWS: Terraform name → CloudFormation type (awscc's list) → the generated kind of that type.

function awsIndex(dir?: string) {
  const catalog = loadAwsccCatalog(dir);
  const byType = new Map(catalog.kinds.map((e) => [e.typeName, e]));
  return { byType, spec: (e: (typeof catalog.kinds)[number]) => loadAwsccSpec(e, dir) };
}

function awsTarget(
  facts: UpjetFacts,
  index: ReturnType<typeof awsIndex>,
  tf: string,
  expr: string,
): GeneratedResolution {
  const type = facts.awsccTypes[tf];
  if (!type)
    return {
      unmapped: `its Terraform type ${tf} has no CloudFormation type of the same Terraform name (awscc provider's list), so no generated kind is known to be the same resource`,
    };
  const entry = index.byType.get(type);
  if (!entry)
    return { unmapped: `${tf} is ${type}, which Cloud Control cannot provision (no generated kind)` };
  const spec = index.spec(entry);
  return {
    def: awsccKindOf(spec),
    via: `${tf} = ${type} (awscc provider's list)`,
    externalName: awsExternalName(spec, upjetIdentifier(expr)),
    nested: {},
    identifierFields:
      spec.externalName === "fromAnnotation" && spec.identifierField ? [spec.identifierField] : [],
  };
}

function awsExternalName(spec: AwsccKindSpec, id: UpjetIdentifier): ExternalNameRule {
  const ids = spec.primaryIdentifier;
  const p = ids[0] ?? "";
  const theirs = `driftless's ${spec.kind} is found by ${ids.join("|") || "(no identifier)"}`;
  if (ids.length !== 1)
    return {
      refuse: `${theirs} (Cloud Control's composite identifier, joined with |), which Upjet's external name does not hold`,
    };
  const field = id.kind === "name" || id.kind === "template" ? camel(id.field) : undefined;
  const named =
    field && spec.externalName === "fromAnnotation" && spec.identifierField
      ? field === spec.identifierField
        ? `Upjet's external name is its ${field}, the same field as driftless's identifier ${p}`
        : field === "name" && /Name$/.test(p)
          ? `Upjet's external name is the resource's name, driftless's identifier its name property ${p}`
          : undefined
      : undefined;
  if (named) return { carry: named, severity: "note", ...(field ? { field } : {}) };
  if (id.kind === "template" && /Arn$/.test(p))
    return {
      carry: `driftless's identifier is the ARN (${p}); Upjet's annotation holds an ARN`,
      severity: "note",
      onlyIf: /^arn:/,
      otherwise: `${theirs} (an ARN); Upjet's annotation holds the name: set crossplane.io/external-name to the resource's ARN and convert it again`,
    };
  if (id.kind === "provider" && /(Id|Arn)$/.test(p))
    return {
      carry: `Upjet's external name is the Terraform id, whose format the data does not state; ${theirs}: check the annotation holds that value`,
      severity: "warning",
    };
  return { refuse: `${theirs}; Upjet's external name (${describe(id)}) is not known to hold it` };
}

const describe = (id: UpjetIdentifier) =>
  id.kind === "provider"
    ? "the Terraform id"
    : id.kind === "other"
      ? id.expr
      : id.kind === "name"
        ? `its ${id.field}`
        : `its ${id.field}, id ${id.template}`;

// Azure: the ARM id template's provider namespace and type segments → the generated kind of that type.

function azureIndex(dir?: string) {
  const catalog = loadAzureCatalog(dir);
  const byType = new Map(catalog.kinds.map((e) => [e.type.toLowerCase(), e]));
  return { byType, spec: (e: (typeof catalog.kinds)[number]) => loadAzureSpec(e, dir) };
}

/** `/subscriptions/…/providers/Microsoft.Network/virtualNetworks/{{…}}/subnets/{{ .external_name }}` → its ARM type. */
export function armTypeOf(template: string): string | undefined {
  const at = template.lastIndexOf("/providers/");
  if (at < 0 || !template.endsWith(`/${EXTERNAL}`)) return undefined;
  const [ns, ...rest] = template.slice(at + "/providers/".length).split("/");
  if (!ns || rest.length % 2 !== 0) return undefined;
  return [ns, ...rest.filter((_, i) => i % 2 === 0)].join("/");
}

function azureTarget(index: ReturnType<typeof azureIndex>, tf: string, expr: string): GeneratedResolution {
  const id = upjetIdentifier(expr);
  const type = id.kind === "template" ? armTypeOf(id.template) : undefined;
  if (!type)
    return {
      unmapped: `Upjet's external-name configuration of ${tf} (${describe(id)}) names no ARM resource id, so its ARM type is not known`,
    };
  const entry = index.byType.get(type.toLowerCase());
  if (!entry) return { unmapped: `${tf} is ${type}, of which no kind is generated` };
  const spec: AzureKindSpec = index.spec(entry);
  const nested: Record<string, string> = {};
  const props = spec.body.properties?.s;
  if (props?.t === "ref")
    for (const k of Object.keys(spec.defs[props.ref]?.props ?? {})) nested[k] = "properties";
  return {
    def: azureGenKindOf(spec),
    via: `${tf} = ${spec.type} (Upjet's ARM id template)`,
    externalName:
      id.kind === "template" && id.field === "name" && !spec.fixedName
        ? {
            carry: "Upjet's external name is the resource's name in Azure, as driftless's is",
            severity: "note",
          }
        : {
            refuse: `driftless's ${spec.kind} is named ${spec.fixedName ?? "by its name"}; Upjet's external name is its ${id.kind === "template" ? id.field : "id"}`,
          },
    nested,
    identifierFields: [],
  };
}

// Google: the resource-name template → the generated kind whose name pattern has the same shape.

function gcpIndex(dir?: string) {
  const catalog = loadGoogleCatalog(dir);
  const byShape = new Map<string, GoogleKindSpec[]>();
  for (const e of catalog.kinds) {
    const spec = loadGoogleSpec(e, dir);
    const g = spec.google;
    const pattern =
      g.pattern ?? (g.family === "compute" && g.get ? g.get.p.replace(/^\/compute\/v1\//, "") : undefined);
    if (!pattern) continue;
    const shape = shapeOf(pattern);
    byShape.set(shape, [...(byShape.get(shape) ?? []), spec]);
  }
  return byShape;
}

function gcpTarget(
  byShape: ReturnType<typeof gcpIndex>,
  group: string,
  tf: string,
  expr: string,
): GeneratedResolution {
  const id = upjetIdentifier(expr);
  if (id.kind !== "template" || !id.template.endsWith(`/${EXTERNAL}`) || !id.template.startsWith("projects/"))
    return {
      unmapped: `Upjet's external-name configuration of ${tf} (${describe(id)}) is no resource-name template, so its Google resource type is not known`,
    };
  const shape = shapeOf(id.template);
  const all = byShape.get(shape) ?? [];
  const service = group.split(".")[0] ?? "";
  const candidates = all.length > 1 ? all.filter((s) => s.google.api === service) : all;
  const spec = candidates.length === 1 ? candidates[0] : undefined;
  if (!spec)
    return {
      unmapped:
        all.length === 0
          ? `no generated Google kind has the resource-name pattern ${shape} of ${tf}`
          : `${all.length} generated Google kinds have the resource-name pattern ${shape} (${all.map((s) => s.typeName).join(", ")}), none only of API ${service}`,
    };
  return {
    def: googleKindOf(spec),
    via: `${tf} = ${spec.typeName} (resource name ${shape})`,
    externalName:
      spec.externalName === "fromAnnotation" && id.field === "name"
        ? {
            carry:
              "Upjet's external name is the resource's id (the name's last segment), which driftless's takes",
            severity: "note",
          }
        : {
            refuse: `driftless's ${spec.kind} is found by its full resource name, chosen by Google; Upjet's external name is its ${id.field}`,
          },
    nested: {},
    identifierFields: [],
  };
}
