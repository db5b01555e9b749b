// Generates the Azure kinds reconciled by the one generic ARM provider (shared/providers/azure/arm-generic):
// one compact JSON spec per resource type ARM can PUT (at its newest stable api-version) plus a catalog,
// from the committed bicep-types-az data (infra/azure/arm-types.json.gz, `npm run refresh:azure-types`),
// into .generated/azure/ (git-ignored). Run by `npm run gen:azure` and by tests that need it; skipped when
// the output is current. Decisions: docs/adr/0008-azure-generated-kinds.md.
//
//   node infra/gen-azure.ts            generate if stale
//   node infra/gen-azure.ts --force    generate again
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  AZURE_GEN_SPEC_VERSION,
  type AzNode,
  type AzObjectDef,
  type AzParent,
  type AzProp,
  type AzUnion,
  type AzureCatalog,
  type AzureKindSpec,
  azureGenGroupOf,
  pluralOf,
  singularOf,
  variantFieldOf,
} from "../shared/api/azure-gen/spec.ts";
import {
  ARM_TYPES_FILE,
  type ArmData,
  ArmFlag,
  type ArmProp,
  type ArmResource,
  ArmScope,
  type ArmType,
  loadArmData,
} from "./azure/types-data.ts";

const ROOT = resolve(import.meta.dirname, "..");
export const AZURE_GEN_DIR = join(ROOT, ".generated/azure");
/** Bumped whenever the output format or a mapping rule changes. */
export const GENERATOR_VERSION = 3;
/** Object types nest at most this deep in the CRD; deeper values are free-form JSON. */
export const MAX_DEPTH = 5;

// Names of strings whose value is a secret, when the data neither marks them sensitive nor write-only.
const SECRET_NAME =
  /(password|passphrase|secret|privatekey|accesskey|sharedkey|primarykey|secondarykey|connectionstring|sastoken|authtoken|accesstoken|refreshtoken|apikey|presharedkey|sharedaccesskey|clientsecret)s?$/i;
const NOT_SECRET =
  /(Id|Ids|Name|Names|Uri|Url|Urls|Type|Version|Expiry|ExpiryTime|Time|Enabled|Policy|Policies|Source|Settings|Properties|Permissions|Reference|Configuration|Mode|Status|State|Count|Length|Format|Kind|Rotation|Location|Set)$/;
const NEVER_RETURNED = /never be returned|is never returned|not returned in (the )?response/i;
export const secretNamed = (name: string) => SECRET_NAME.test(name) && !NOT_SECRET.test(name);

const ENVELOPE = new Set(["id", "name", "type", "apiVersion"]);

type Mode = "in" | "out";

class Builder {
  readonly defs: Record<string, AzObjectDef> = {};
  readonly createOnly: string[] = [];
  readonly writeOnly: string[] = [];
  readonly secrets: string[] = [];
  readonly outSecrets: string[] = [];
  readonly #keys = new Map<string, string>();
  readonly #types: ArmType[];
  constructor(types: ArmType[]) {
    this.#types = types;
  }

  /** The enum of a literal or a union of literals. */
  enumOf(i: number): string[] | undefined {
    const t = this.#types[i];
    if (t?.k === "l") return [t.v];
    if (t?.k !== "u") return undefined;
    const vals = t.el.map((e) => this.#types[e]).filter((x): x is { k: "l"; v: string } => x?.k === "l");
    return vals.length > 0 && vals.length <= 40 ? vals.map((v) => v.v) : undefined;
  }

  /** Whether a type (through lists) is a string a secret can be. */
  stringy(i: number): boolean {
    const t = this.#types[i];
    if (!t) return false;
    if (t.k === "s" || t.k === "l") return true;
    if (t.k === "arr") return this.#types[t.of]?.k === "s";
    if (t.k === "u") return t.el.every((e) => ["s", "l"].includes(this.#types[e]?.k ?? ""));
    return false;
  }

  sensitive(i: number): boolean {
    const t = this.#types[i];
    if (t?.k === "s" || t?.k === "o") return t.sens === 1;
    if (t?.k === "arr") return this.sensitive(t.of);
    return false;
  }

  /**
   * The node of type `i` at `path` for the "in" (writable) or "out" (read-only) projection; undefined when
   * nothing of it belongs there. `all`: the whole value (below a read-only member in "out").
   */
  node(
    i: number,
    mode: Mode,
    all: boolean,
    path: string,
    depth: number,
    seen: readonly number[],
    secret: boolean,
  ): AzNode | undefined {
    const t = this.#types[i];
    if (!t) return { t: "json" };
    switch (t.k) {
      case "s":
      case "l":
        return { t: "string" };
      case "i":
        return { t: "integer" };
      case "b":
        return { t: "boolean" };
      case "n":
      case "a":
        return { t: "json" };
      case "arr": {
        const of = this.node(t.of, mode, all, path, depth, seen, secret);
        return of ? { t: "array", of } : undefined;
      }
      case "u": {
        if (this.enumOf(i)) return mode === "out" && !all ? undefined : { t: "string" };
        const alts = t.el.filter((e) => !["n", "a"].includes(this.#types[e]?.k ?? ""));
        const obj = alts.find((e) => ["o", "d"].includes(this.#types[e]?.k ?? ""));
        const pick = obj ?? alts[0];
        return pick === undefined ? { t: "json" } : this.node(pick, mode, all, path, depth, seen, secret);
      }
      case "o":
      case "d": {
        const props = { ...t.p };
        let disc: string | undefined;
        if (t.k === "d") {
          disc = t.disc;
          for (const e of Object.values(t.el)) {
            const v = this.#types[e];
            if (v?.k === "o") for (const [k, p] of Object.entries(v.p)) props[k] ??= p;
          }
          props[t.disc] ??= [-1, ArmFlag.Required];
        }
        if (Object.keys(props).length === 0) {
          if (t.k === "o" && t.ap !== undefined) {
            if (mode === "out" && !all) return undefined;
            const of = this.node(t.ap, mode, all, path, depth, seen, secret || t.sens === 1);
            return of ? { t: "map", of } : undefined;
          }
          return mode === "in" || all ? { t: "json" } : undefined;
        }
        if (depth >= MAX_DEPTH || seen.includes(i)) return mode === "in" || all ? { t: "json" } : undefined;
        const members = this.members(
          props,
          mode,
          all,
          path,
          depth + 1,
          [...seen, i],
          secret || (t.k === "o" && t.sens === 1),
          t.k === "d" ? t : undefined,
        );
        if (Object.keys(members).length === 0) return undefined;
        const key = this.#key(i, mode, all, depth, t.name);
        this.defs[key] = { name: t.name || key, props: members, ...(disc ? { disc } : {}) };
        return { t: "ref", ref: key };
      }
    }
  }

  /** The def of a union variant's members (type `i`), by projection: its key. */
  variant(i: number, mode: Mode, name: string, props: Record<string, AzProp>): string {
    const key = this.#key(i, mode, false, 0, name);
    this.defs[key] = { name: name || key, props };
    return key;
  }

  // One def per type, projection and depth: what a type expands to depends on how deep it sits.
  #key(i: number, mode: Mode, all: boolean, depth: number, name: string): string {
    const id = `${i}/${mode}/${all}/${depth}`;
    const known = this.#keys.get(id);
    if (known) return known;
    let key = (name.split("/").at(-1) || "Object").replace(/[^A-Za-z0-9_]/g, "");
    if (mode === "out") key = `${key}Status`;
    while (this.defs[key] || [...this.#keys.values()].includes(key)) key = `${key}_${i}`;
    this.#keys.set(id, key);
    return key;
  }

  members(
    props: Record<string, ArmProp>,
    mode: Mode,
    all: boolean,
    path: string,
    depth: number,
    seen: readonly number[],
    secret: boolean,
    disc?: { disc: string; el: Record<string, number> },
  ): Record<string, AzProp> {
    const out: Record<string, AzProp> = {};
    for (const [name, [ti, flags, doc]] of Object.entries(props)) {
      if (depth === 1 && ENVELOPE.has(name)) continue;
      const at = path ? `${path}.${name}` : name;
      const readOnly = (flags & ArmFlag.ReadOnly) !== 0;
      const writeOnly = (flags & ArmFlag.WriteOnly) !== 0;
      if (mode === "in" && readOnly) continue;
      if (mode === "out" && writeOnly) continue;
      const wholeHere = all || readOnly;
      const enumVals =
        disc && name === disc.disc ? Object.keys(disc.el) : ti >= 0 ? this.enumOf(ti) : undefined;
      const isString = ti < 0 || this.stringy(ti);
      // Sensitive in the data, below a sensitive object, named like a secret, or documented as never returned.
      const isSecret =
        isString &&
        !enumVals &&
        (secret || (ti >= 0 && this.sensitive(ti)) || secretNamed(name) || NEVER_RETURNED.test(doc ?? ""));
      let s: AzNode | undefined;
      if (ti < 0) s = { t: "string" };
      else if (mode === "out" && !wholeHere && !["o", "d", "u"].includes(this.#types[ti]?.k ?? ""))
        s = undefined;
      else s = this.node(ti, mode, wholeHere, at, depth, seen, secret || isSecret);
      if (!s) continue;
      if (mode === "in") {
        if (isSecret) this.secrets.push(at);
        else if (writeOnly) this.writeOnly.push(at);
        if (flags & ArmFlag.DeployTimeConstant) this.createOnly.push(at);
      } else if (isSecret && wholeHere) {
        this.outSecrets.push(at);
      }
      const prop: AzProp = { s };
      if (mode === "in" && flags & ArmFlag.Required) prop.req = true;
      if (enumVals) prop.enum = enumVals;
      if (doc) prop.doc = doc;
      out[name] = prop;
    }
    return out;
  }
}

const MANAGEMENT_GROUPS = "Microsoft.Management/managementGroups";

/**
 * A discriminated body as one optional member per variant (what a structural CRD schema can hold, as Azure
 * Service Operator v2 does for OneOf): each variant's own members (its discriminator, the envelope and the
 * base's members left out) below a member named from the discriminator value, in both projections.
 */
function unionOf(
  b: Builder,
  types: ArmType[],
  body: Extract<ArmType, { k: "d" }>,
  bodyIndex: number,
  inProps: Record<string, AzProp>,
  outProps: Record<string, AzProp>,
): AzUnion {
  const union: AzUnion = { disc: body.disc, on: body.disc === "name" ? "name" : "body", variants: {} };
  for (const [value, ti] of Object.entries(body.el).sort(([a], [c]) => a.localeCompare(c))) {
    const v = types[ti];
    if (v?.k !== "o") continue;
    let field = variantFieldOf(value);
    while (field in inProps || field in outProps || field in body.p) field = `${field}Variant`;
    const own = Object.fromEntries(
      Object.entries(v.p).filter(([k]) => k !== body.disc && !ENVELOPE.has(k) && !(k in body.p)),
    );
    const what = union.on === "name" ? `the resource named "${value}"` : `${body.disc} "${value}"`;
    const vin = b.members(own, "in", false, field, 1, [bodyIndex, ti], false);
    inProps[field] = {
      s: { t: "ref", ref: b.variant(ti, "in", v.name, vin) },
      doc: `The ${value} variant (${what}): set exactly one variant; its members are sent as the body's own.`,
    };
    const vout = b.members(own, "out", false, field, 1, [bodyIndex, ti], false);
    if (Object.keys(vout).length > 0)
      outProps[field] = {
        s: { t: "ref", ref: b.variant(ti, "out", v.name, vout) },
        doc: `The ${value} variant's read-only members.`,
      };
    union.variants[value] = field;
  }
  return union;
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const camel = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The kind name of a type: its segments, singular, joined (Microsoft.Network/virtualNetworks/subnets → VirtualNetworkSubnet). */
export function kindNameOf(type: string, dropLeading = 0): string {
  const segs = type.split("/").slice(1 + dropLeading);
  return segs.map((s) => pascal(singularOf(s)).replace(/[^A-Za-z0-9]/g, "")).join("");
}

/** One generated kind, or why there is none. */
export function kindSpecOf(
  r: ArmResource,
  data: ArmData,
  nameOf: (type: string) => { kind: string; plural: string } = (t) => ({
    kind: kindNameOf(t),
    plural: pluralOf(kindNameOf(t)),
  }),
): AzureKindSpec | { skip: string } {
  const file = data.files[r.file];
  if (!file) return { skip: "no type data" };
  // A type ARM writes at extension scope (`{scope}/providers/{type}/{name}`: locks, role assignments,
  // diagnostic settings…) is placed by a scope id, which can also be a resource group's or the
  // subscription's: the one shape reaches every scope it has below the tenant.
  // A type written only above the subscriptions (billing accounts, management groups, Marketplace private
  // stores…) lives at the tenant (`/providers/{type}/{name}`) or in a management group
  // (`/providers/Microsoft.Management/managementGroups/{id}/providers/{type}/{name}`).
  const scope =
    r.ws & ArmScope.Extension
      ? "extension"
      : r.ws & ArmScope.ResourceGroup
        ? "resourceGroup"
        : r.ws & ArmScope.Subscription
          ? "subscription"
          : r.ws & ArmScope.ManagementGroup
            ? "managementGroup"
            : r.ws & ArmScope.Tenant
              ? "tenant"
              : undefined;
  if (!scope) return { skip: "no writable scope" };
  const body = file.types[r.body];
  if (body?.k !== "o" && body?.k !== "d") return { skip: "body is not an object" };
  const b = new Builder(file.types);
  const inProps = b.members(body.p, "in", false, "", 1, [r.body], false);
  const outProps = b.members(body.p, "out", false, "", 1, [r.body], false);
  const union = body.k === "d" ? unionOf(b, file.types, body, r.body, inProps, outProps) : undefined;
  // id is read-only and always there: where references and imports read it.
  outProps.id = { s: { t: "string" }, doc: "The resource's Azure Resource Manager id." };
  const nameType = file.types[body.p.name?.[0] ?? -1];
  const fixedName = nameType?.k === "l" ? nameType.v : undefined;
  const segs = r.type.split("/");
  const parents: AzParent[] = segs.slice(1, -1).map((seg, i) => ({
    segment: seg,
    field: `${camel(singularOf(seg)).replace(/[^A-Za-z0-9]/g, "")}Name`,
    type: segs.slice(0, i + 2).join("/"),
    ...nameOf(segs.slice(0, i + 2).join("/")),
  }));
  const createOnly = new Set(b.createOnly);
  if (inProps.location) createOnly.add("location");
  const functions = (r.fns ?? [])
    .filter(
      (f) => f.in === undefined && /keys|secret|credential|connectionstring|password|token/i.test(f.name),
    )
    .map((f) => f.name);
  const group = azureGenGroupOf(r.type);
  const { kind, plural } = nameOf(r.type);
  return {
    v: AZURE_GEN_SPEC_VERSION,
    type: r.type,
    apiVersion: r.api,
    group,
    kind,
    plural,
    description: `Azure ${r.type} (api-version ${r.api}), reconciled by the generic Azure Resource Manager provider.`,
    scope,
    parents,
    ...(scope === "managementGroup"
      ? {
          managementGroup: {
            segment: "managementGroups",
            field: "managementGroupId",
            type: MANAGEMENT_GROUPS,
            ...nameOf(MANAGEMENT_GROUPS),
          },
        }
      : {}),
    ...(union ? { union } : {}),
    ...(fixedName ? { fixedName } : {}),
    body: inProps,
    out: outProps,
    defs: b.defs,
    createOnly: [...createOnly].sort(),
    writeOnly: [...new Set(b.writeOnly)].sort(),
    secrets: [...new Set(b.secrets)].sort(),
    outSecrets: [...new Set(b.outSecrets)].sort(),
    functions,
  };
}

export interface GenerateResult {
  dir: string;
  kinds: number;
  skipped: Record<string, number>;
  ms: number;
  fresh: boolean;
}

function stampOf(): string {
  const hash = createHash("sha256");
  for (const f of [import.meta.filename, join(ROOT, "shared/api/azure-gen/spec.ts"), ARM_TYPES_FILE])
    hash.update(readFileSync(f)).update("\0");
  return `${GENERATOR_VERSION}/${hash.digest("hex").slice(0, 16)}`;
}

export function azureGenIsCurrent(dir = AZURE_GEN_DIR): boolean {
  const file = join(dir, "catalog.json");
  if (!existsSync(file)) return false;
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as AzureCatalog).stamp === stampOf();
  } catch {
    return false;
  }
}

const MAX_LABEL = 63;

/** A type segment's initials: its first letter and every capital and digit (privateLinkServicesForM365SecurityCenter → PLSFM365SC). */
const initialsOf = (segment: string) =>
  segment.charAt(0).toUpperCase() + segment.slice(1).replace(/[^A-Z0-9]/g, "");

/**
 * The kind and plural of every type: its segments joined; a plural longer than a DNS label, or taken in
 * its group, drops leading parents until it fits and is unique (types in data order: stable names). When
 * none fits, the parents' initials lead the type's own kind (privateLinkServicesForM365SecurityCenter/
 * privateEndpointConnections → PLSFM365SCPrivateEndpointConnection), then a number until it is unique.
 */
function namesOf(data: ArmData): Map<string, { kind: string; plural: string }> {
  const out = new Map<string, { kind: string; plural: string }>();
  const taken = new Set<string>();
  for (const r of data.resources) {
    const group = azureGenGroupOf(r.type);
    const depth = r.type.split("/").length - 1;
    for (let drop = 0; drop < depth; drop++) {
      let kind = kindNameOf(r.type, drop);
      // `/apis/<g>/<v>/namespaces/<name>` is a namespace's path: a cluster-scoped plural cannot be `namespaces`.
      if (pluralOf(kind) === "namespaces") kind = `${(r.type.split("/")[0] ?? "").split(".").at(-1)}${kind}`;
      const plural = pluralOf(kind);
      if (plural.length > MAX_LABEL || taken.has(`${plural}.${group}`)) continue;
      taken.add(`${plural}.${group}`);
      out.set(r.type.toLowerCase(), { kind, plural });
      break;
    }
    if (out.has(r.type.toLowerCase())) continue;
    const segs = r.type.split("/").slice(1);
    const base = `${segs.slice(0, -1).map(initialsOf).join("")}${kindNameOf(r.type, depth - 1)}`;
    for (let n = 1; ; n++) {
      const kind = n === 1 ? base : `${base}${n}`;
      const plural = pluralOf(kind);
      if (plural.length > MAX_LABEL) throw new Error(`${r.type}: no CRD name fits a DNS label (${plural})`);
      if (taken.has(`${plural}.${group}`)) continue;
      taken.add(`${plural}.${group}`);
      out.set(r.type.toLowerCase(), { kind, plural });
      break;
    }
  }
  return out;
}

/** Generates every kind into `dir` (written beside it, then renamed into place: readers never see half). */
export function generateAzure(opts: { dir?: string; force?: boolean } = {}): GenerateResult {
  const dir = opts.dir ?? AZURE_GEN_DIR;
  const started = performance.now();
  if (!opts.force && azureGenIsCurrent(dir)) return { dir, kinds: 0, skipped: {}, ms: 0, fresh: false };
  const data = loadArmData();
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const { source, commit, date, licence } = data.origin;
  const catalog: AzureCatalog = {
    origin: { source, commit, date, licence },
    generator: GENERATOR_VERSION,
    stamp: stampOf(),
    kinds: [],
    skipped: {},
  };
  const names = namesOf(data);
  for (const r of data.resources) {
    const name = names.get(r.type.toLowerCase());
    if (!name) {
      catalog.skipped["no unique CRD name"] = (catalog.skipped["no unique CRD name"] ?? 0) + 1;
      continue;
    }
    const spec = kindSpecOf(
      r,
      data,
      (t) => names.get(t.toLowerCase()) ?? { kind: kindNameOf(t), plural: pluralOf(kindNameOf(t)) },
    );
    if ("skip" in spec) {
      catalog.skipped[spec.skip] = (catalog.skipped[spec.skip] ?? 0) + 1;
      continue;
    }
    const fileName = `kinds/${spec.group.split(".")[0]}/${spec.kind}.json`;
    mkdirSync(dirname(join(tmp, fileName)), { recursive: true });
    writeFileSync(join(tmp, fileName), JSON.stringify(spec));
    catalog.kinds.push({
      type: spec.type,
      apiVersion: spec.apiVersion,
      group: spec.group,
      kind: spec.kind,
      plural: spec.plural,
      file: fileName,
    });
  }
  writeFileSync(join(tmp, "catalog.json"), JSON.stringify(catalog));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return {
    dir,
    kinds: catalog.kinds.length,
    skipped: catalog.skipped,
    ms: Math.round(performance.now() - started),
    fresh: true,
  };
}

if (import.meta.main) {
  const r = generateAzure({ force: process.argv.includes("--force") });
  process.stdout.write(
    r.fresh
      ? `generated ${r.kinds} Azure kinds into ${r.dir} in ${r.ms} ms; skipped ${JSON.stringify(r.skipped)}\n`
      : `Azure kinds are current (${r.dir})\n`,
  );
}
