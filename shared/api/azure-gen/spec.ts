// The compact, JSON form of one generated Azure kind: an Azure Resource Manager resource type at its newest
// stable api-version, as infra/gen-azure.ts writes it from bicep-types-az's type data (infra/azure/), and
// what the CRD, the docs, the generic ARM provider and the generic ARM fake are built from. Plain data: a
// kind is loaded on demand (one small file), never the whole type database.

export const AZURE_GEN_SPEC_VERSION = 1;
/** `<rp>.azure.gen` + `.driftless.dev`: a group no hand-written Azure kind (`<rp>.azure`) can take. */
export const AZURE_GEN_GROUP_SUFFIX = "azure.gen";

/** A value's shape, bicep's type system reduced to what a structural CRD schema can hold. */
export type AzNode =
  | { t: "string" | "integer" | "boolean" | "json" }
  | { t: "array" | "map"; of: AzNode }
  /** An object type (its `defs` entry). */
  | { t: "ref"; ref: string };

export interface AzProp {
  s: AzNode;
  /** Required by the type on create. */
  req?: true;
  /** Allowed values (string literal unions), for the docs and the fake. */
  enum?: string[];
  doc?: string;
}

export interface AzObjectDef {
  name: string;
  props: Record<string, AzProp>;
  /** A discriminated object: the member whose value selects the variant. */
  disc?: string;
}

/** A parent resource of a child type: its name is a forProvider field, filled directly or by reference. */
export interface AzParent {
  /** The type segment in the id, e.g. `virtualNetworks`. */
  segment: string;
  /** The forProvider field holding its name, e.g. `virtualNetworkName`. */
  field: string;
  /** The parent's ARM type, e.g. Microsoft.Network/virtualNetworks. */
  type: string;
  /** The parent's generated kind and plural (its group is its type's). */
  kind: string;
  plural: string;
}

export interface AzUnion {
  /** The discriminator, e.g. `kind`. */
  disc: string;
  /** Where its value goes: a body member, or the resource's name. */
  on: "body" | "name";
  /** Discriminator value → the forProvider member of that variant. */
  variants: Record<string, string>;
}

/** The variant member of a union kind's spec that is set (the first, when more are), and its discriminator value. */
export function variantOf(
  spec: Pick<AzureKindSpec, "union">,
  forProvider: Record<string, unknown>,
): { value: string; field: string } | undefined {
  for (const [value, field] of Object.entries(spec.union?.variants ?? {}))
    if (forProvider[field] !== undefined && forProvider[field] !== null) return { value, field };
  return undefined;
}

/** The variant of an ARM document: its discriminator's value (case-insensitive, as ARM reads it). */
export function variantOfValue(
  spec: Pick<AzureKindSpec, "union">,
  value: unknown,
): { value: string; field: string } | undefined {
  if (typeof value !== "string") return undefined;
  const hit = Object.entries(spec.union?.variants ?? {}).find(
    ([v]) => v.toLowerCase() === value.toLowerCase(),
  );
  return hit ? { value: hit[0], field: hit[1] } : undefined;
}

/** A variant's forProvider member from its discriminator value: camelCase (AzureCLI → azureCLI, IOT → iot, Microsoft.EventHub → microsoftEventHub). */
export function variantFieldOf(value: string): string {
  const words = value.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join("");
  const lead = /^[A-Z0-9]+(?=[A-Z][a-z]|$)|^[A-Z]/.exec(joined)?.[0] ?? "";
  const out = lead.toLowerCase() + joined.slice(lead.length);
  return /^[a-z]/.test(out) ? out : `v${out}`;
}

export interface AzureKindSpec {
  v: typeof AZURE_GEN_SPEC_VERSION;
  /** ARM resource type, e.g. Microsoft.Storage/storageAccounts. */
  type: string;
  /** The api-version every request carries (the newest stable one in the data). */
  apiVersion: string;
  /** e.g. storage.azure.gen (→ storage.azure.gen.driftless.dev). */
  group: string;
  kind: string;
  plural: string;
  description: string;
  /**
   * Where it lives: in a resource group, directly in the subscription, or (an extension type: locks, role
   * assignments, diagnostic settings…) under any resource id — `{scope}/providers/{type}/{name}`.
   */
  scope: "resourceGroup" | "subscription" | "extension" | "managementGroup" | "tenant";
  parents: AzParent[];
  /**
   * A management-group type's home: the management group (`managementGroupId`, or a reference to a
   * generated ManagementGroup) its id starts with, `/providers/Microsoft.Management/managementGroups/{id}`.
   */
  managementGroup?: AzParent;
  /**
   * A body that is a discriminated union (bicep's DiscriminatedObjectType): one optional member of `body`
   * per variant, named from the discriminator value (AzureCLI → azureCLI); at most one is set (the CRD's
   * CEL rule and the schema), one is needed to create. On the wire the set variant's members are the
   * body's own and the discriminator carries its value — a body member (`kind`), or, `on: "name"`, the
   * resource's name (Microsoft.Web/sites/config: appsettings, web…).
   */
  union?: AzUnion;
  /** The only name ARM accepts (singletons such as blobServices/default); else the external name. */
  fixedName?: string;
  /** The PUT body's writable top-level members (location, tags, sku, properties…), ARM's own names. */
  body: Record<string, AzProp>;
  /** The read-only members (id, properties.provisioningState…): atProvider's shape. */
  out: Record<string, AzProp>;
  defs: Record<string, AzObjectDef>;
  /** DeployTimeConstant members (and location): immutable field paths (`properties.x.y`, lists without index). */
  createOnly: string[];
  /** WriteOnly members that are not secrets: sent, never read back or compared. */
  writeOnly: string[];
  /** Secret strings at any depth (sensitive, WriteOnly or secret-named): read from `<name>SecretRef(s)`. */
  secrets: string[];
  /** Secret strings among the read-only members: connection Secret keys, never atProvider. */
  outSecrets: string[];
  /** `list*` functions without input whose answer holds secrets (listKeys…): their strings go to the connection Secret. */
  functions: string[];
}

export interface AzureCatalogEntry {
  type: string;
  apiVersion: string;
  group: string;
  kind: string;
  plural: string;
  file: string;
}

export interface AzureCatalog {
  /** The type data the kinds come from (infra/azure/arm-types.json.gz's origin). */
  origin: { source: string; commit: string; date: string; licence: string };
  generator: number;
  stamp: string;
  kinds: AzureCatalogEntry[];
  /** Types in the data the generator made no kind of, with why (extension/tenant scope…). */
  skipped: Record<string, number>;
}

/** `a.b` is `path` or lies below it. */
export const pathWithin = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}.`);

/** English plural of a lowercased kind (policy → policies, address → addresses). */
export function pluralOf(kind: string): string {
  const k = kind.toLowerCase();
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(k)) return `${k}es`;
  return `${k}s`;
}

/** ARM's plural type segment as a singular word (virtualNetworks → virtualNetwork, policies → policy). */
export function singularOf(segment: string): string {
  if (/(is|us|ss)$/.test(segment)) return segment;
  if (/ies$/.test(segment)) return `${segment.slice(0, -3)}y`;
  if (/(sses|xes|ches|shes|zes)$/.test(segment)) return segment.slice(0, -2);
  if (/[^s]s$/.test(segment)) return segment.slice(0, -1);
  return segment;
}

/** `Microsoft.Storage` → `storage`; other publishers keep theirs (`Dynatrace.Observability` → `dynatrace-observability`). */
export function rpOf(namespace: string): string {
  const [vendor = "", ...rest] = namespace.split(".");
  const tail = rest
    .join("")
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
  return vendor.toLowerCase() === "microsoft"
    ? tail
    : `${vendor.toLowerCase().replace(/[^a-z0-9]/g, "")}-${tail}`;
}

export const azureGenGroupOf = (type: string) =>
  `${rpOf(type.split("/")[0] ?? "")}.${AZURE_GEN_GROUP_SUFFIX}`;

/** The short activation alias: `<rp>.<kind>` lowercased (`storage.storageaccount`). */
export const azureGenAliasOf = (e: { group: string; kind: string }) =>
  `${e.group.slice(0, -`.${AZURE_GEN_GROUP_SUFFIX}`.length)}.${e.kind.toLowerCase()}`;
