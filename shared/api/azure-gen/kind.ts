// A generated Azure kind as the engine sees it: its compact spec (spec.ts) turned into a managed kind
// definition — zod forProvider (ARM's body: location, tags, sku, properties…; the resource group and parent
// names with references) and atProvider (the read-only members), immutable fields, write-only fields —
// so the CRD, docs, validation, drift comparison and late-initialization are the hand-written kinds' own.
import { z } from "zod";
import { ResourceGroup } from "../azure/resources.ts";
import { childPath, crdPathOfMember, nodeAtPath, secretRefFieldOf, zodSchemaOf } from "../generated-spec.ts";
import {
  defineManagedKindLazily,
  type FieldBehaviour,
  type ManagedKindDef,
  type ReferenceDef,
} from "../managed.ts";
import { API_DOMAIN, Reference, SecretKeySelector, Selector } from "../meta.ts";
import { anyKindReferenceTo } from "../reference.ts";
import { armIdKindOf, armIdOf } from "./scope.ts";
import {
  type AzNode,
  type AzParent,
  type AzProp,
  type AzUnion,
  type AzureKindSpec,
  azureGenGroupOf,
  pathWithin,
} from "./spec.ts";

// The generated kinds' providers and tests take these from the kind module.
export { childPath, secretRefFieldOf };

function describe(spec: AzureKindSpec, p: AzProp, path: string) {
  const enumText = p.enum ? ` One of: ${p.enum.join(", ")}.` : "";
  const immutable = spec.createOnly.includes(path) ? " Immutable." : "";
  const writeOnly = spec.writeOnly.includes(path)
    ? " Write-only: sent to Azure, never read back or compared."
    : "";
  return `${p.doc ?? path}${enumText}${p.req ? " Required on create." : ""}${immutable}${writeOnly}`;
}

function members(
  spec: AzureKindSpec,
  props: Record<string, AzProp>,
  path: string,
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, p] of Object.entries(props)) {
    const at = childPath(path, k);
    if (spec.secrets.includes(at)) {
      const ref = SecretKeySelector.describe(
        `${describe(spec, p, at)} Secret: read from this Secret key when a request is made; never stored in the spec or status, never compared.`,
      );
      shape[secretRefFieldOf(k, p.s)] = (p.s.t === "array" ? z.array(ref) : ref).optional();
      continue;
    }
    shape[k] = zodOf(spec, p.s, at)
      .optional()
      .describe(describe(spec, p, at));
  }
  return shape;
}

/** The zod schema of one value at member path `path`. */
export function zodOf(spec: AzureKindSpec, node: AzNode, path = ""): z.ZodType {
  return zodSchemaOf(node, (n) => {
    const def = n.t === "ref" ? spec.defs[n.ref] : undefined;
    return def && z.object(members(spec, def.props, path));
  });
}

/** The CRD field path of a member path: a secret's last step is its `…SecretRef(s)` field. */
export function crdPathOf(spec: AzureKindSpec, path: string): string {
  return crdPathOfMember(spec.secrets, path, (p) => nodeAt(spec, spec.body, p));
}

/** The node at a member path (undefined below free-form values). */
export function nodeAt(spec: AzureKindSpec, top: Record<string, AzProp>, path: string): AzNode | undefined {
  return nodeAtPath(top, spec.defs, path);
}

/** The generated kind of an ARM type, as a reference target (the parent of a child type). */
export function generatedTarget(p: AzParent) {
  const group = `${azureGenGroupOf(p.type)}.${API_DOMAIN}`;
  return {
    group,
    version: "v1alpha1",
    kind: p.kind,
    plural: p.plural,
    namespaced: false,
    apiVersion: `${group}/v1alpha1`,
  };
}

/** The extension scope's reference: any driftless Azure kind with an ARM id fills `scope`. */
const extensionScope = () =>
  anyKindReferenceTo("scope", ResourceGroup, {
    fills: "Azure resource id (status.atProvider.id)",
    extract: armIdOf,
    anyKind: armIdKindOf,
    what: "any driftless Azure kind with an Azure resource id, hand-written or generated",
  });

/** The forProvider fields naming where the resource lives (resource group, parents): each with a Ref and a Selector. */
function homeReferences(spec: AzureKindSpec) {
  const out: Array<{ def: ReferenceDef; what: string; kindText: string }> = [];
  const reference = (field: string, what: string, to: ReferenceDef["to"], kindText: string) =>
    out.push({
      def: { field, refField: `${field}Ref`, selectorField: `${field}Selector`, to },
      what,
      kindText,
    });
  if (spec.scope === "resourceGroup")
    reference(
      "resourceGroupName",
      "The resource group the resource lives in.",
      ResourceGroup,
      "ResourceGroup (resources.azure)",
    );
  if (spec.managementGroup) {
    const to = generatedTarget(spec.managementGroup);
    reference(
      spec.managementGroup.field,
      "The management group the resource lives in (its id, the name in /providers/Microsoft.Management/managementGroups/{id}).",
      to,
      `${to.kind} (${to.group})`,
    );
  }
  for (const p of spec.parents) {
    const to = generatedTarget(p);
    reference(p.field, `The name of the parent ${p.type}.`, to, `${to.kind} (${to.group})`);
  }
  return out;
}

/** Field behaviours, references and immutable fields of a generated kind: plain data, no schema built. */
export function azureGenFacts(spec: AzureKindSpec) {
  const fields: Record<string, FieldBehaviour> = {};
  for (const p of [...spec.writeOnly, ...spec.secrets]) fields[crdPathOf(spec, p)] = { writeOnly: true };
  const references = [
    ...(spec.scope === "extension" ? [extensionScope().def] : []),
    ...homeReferences(spec).map((r) => r.def),
  ];
  const immutable = [...references.map((r) => r.field), ...spec.createOnly.map((p) => crdPathOf(spec, p))];
  return { fields, references, immutable };
}

/** forProvider and atProvider of a generated kind (zod: the costly part, built on a kind's first use). */
export function azureGenSchemas(spec: AzureKindSpec) {
  const fp: Record<string, z.ZodType> = {};
  if (spec.scope === "extension") {
    fp.scope = z
      .string()
      .min(1)
      .optional()
      .describe(
        `The Azure Resource Manager id the resource is written under ({scope}/providers/${spec.type}/{name}): the subscription (/subscriptions/{id}), a resource group's id or any resource's id, in the ProviderConfig's subscription. Required. Immutable.`,
      );
    Object.assign(fp, extensionScope().fields);
  }
  for (const { def, what, kindText } of homeReferences(spec)) {
    fp[def.field] = z.string().min(1).optional().describe(`${what} Required. Immutable.`);
    fp[def.refField] = Reference.optional().describe(
      `A ${kindText} managed resource whose external name fills ${def.field} once it is Ready.`,
    );
    fp[def.selectorField] = Selector.optional().describe(
      `Selects a ${kindText} managed resource by labels to fill ${def.field}.`,
    );
  }
  Object.assign(fp, members(spec, spec.body, ""));
  const forProvider = spec.union ? oneVariant(spec.union, z.object(fp)) : z.object(fp);
  const ap: Record<string, z.ZodType> = {};
  const outSpec = { ...spec, secrets: [], createOnly: [], writeOnly: [] };
  for (const [k, p] of Object.entries(spec.out)) {
    if (spec.outSecrets.some((s) => pathWithin(k, s))) continue;
    ap[k] = zodOfOut(outSpec, spec.outSecrets, p.s, k)
      .optional()
      .describe(p.doc ?? k);
  }
  return { forProvider, atProvider: z.object(ap) };
}

/**
 * A union kind's forProvider: at most one variant member set — the CRD's CEL rule (the API server refuses
 * two) and the same check in the schema (Synced=False where the API server does not check, e.g. a manifest
 * validated offline). None set is allowed here (an Observe-only or imported resource); create needs one.
 */
function oneVariant<T extends z.ZodObject>(union: AzUnion, schema: T): T {
  const fields = Object.values(union.variants);
  const message = `set at most one of ${fields.join(", ")} (the ${union.on === "name" ? "resource name" : union.disc} is that variant's)`;
  return schema
    .meta({
      "x-kubernetes-validations": [
        { rule: `[${fields.map((f) => `has(self.${f})`).join(", ")}].filter(x, x).size() <= 1`, message },
      ],
    })
    .superRefine((v, ctx) => {
      const set = fields.filter((f) => (v as Record<string, unknown>)[f] !== undefined);
      if (set.length > 1) ctx.addIssue({ code: "custom", message: `${message}; ${set.join(", ")} are set` });
    }) as T;
}

/** atProvider's schema of a read-only member, without its secret strings (they go to the connection Secret). */
function zodOfOut(spec: AzureKindSpec, outSecrets: readonly string[], node: AzNode, path: string): z.ZodType {
  return zodSchemaOf(node, (n) => {
    const def = n.t === "ref" ? spec.defs[n.ref] : undefined;
    if (!def) return undefined;
    const shape: Record<string, z.ZodType> = {};
    for (const [k, p] of Object.entries(def.props)) {
      const at = childPath(path, k);
      if (outSecrets.includes(at)) continue;
      shape[k] = zodOfOut(spec, outSecrets, p.s, at)
        .optional()
        .describe(p.doc ?? k);
    }
    return z.object(shape);
  });
}

const isStringMap = (n: AzNode | undefined) => n?.t === "map" && n.of.t === "string";

/**
 * The managed kind definition of a generated kind (cluster-scoped; withNamespacedVariants adds `.m.`). Its
 * zod schemas are built on first use (defineManagedKindLazily): activating 50 kinds builds none of them,
 * and every path that validates reads the same forProvider, built once per kind and shape.
 */
export function azureGenKindOf(spec: AzureKindSpec): ManagedKindDef {
  const facts = azureGenFacts(spec);
  const name = spec.fixedName
    ? `Its name is always "${spec.fixedName}" (ARM allows no other).`
    : spec.union?.on === "name"
      ? `Its name is the variant's: set one of ${Object.values(spec.union.variants).join(", ")} (ARM names the resource after it); another variant is another resource, refused as a change of home.`
      : "The external name (crossplane.io/external-name, default metadata.name) is its name in Azure.";
  const where =
    spec.scope === "tenant"
      ? " It lives at the tenant (/providers/…), the ProviderConfig's tenantID: no subscription."
      : spec.scope === "managementGroup"
        ? " It lives in a management group (managementGroupId), in the ProviderConfig's tenantID: no subscription."
        : "";
  const variants =
    spec.union?.on === "body"
      ? ` Its body is one of ${Object.keys(spec.union.variants).length} variants by ${spec.union.disc}: set exactly one of ${Object.values(spec.union.variants).join(", ")}.`
      : "";
  return defineManagedKindLazily(
    {
      group: spec.group,
      kind: spec.kind,
      plural: spec.plural,
      cloud: "azure",
      description: `${spec.description} ${name}${where}${variants}`,
      immutable: facts.immutable,
      externalName: "fromAnnotation",
      references: facts.references,
      fields: facts.fields,
      // ARM's tags: a top-level map of strings on the types that have one (bicep-types' body).
      ...(isStringMap(spec.body.tags?.s) ? { tagging: { field: "tags", format: "tags" as const } } : {}),
    },
    () => azureGenSchemas(spec),
  );
}
