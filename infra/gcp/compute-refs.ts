// Compute's references, from Google's Config Connector service mappings (compute-references.json.gz):
// each KCC reference (a Terraform field of a google_compute_* resource naming a KCC kind) mapped onto the
// generated Compute kind's own API field (camelCase, through objects and lists) and the generated kind that
// serves the referenced type. What cannot be mapped is returned with the reason, never dropped silently.
import { pluralOf } from "../../shared/api/awscc/spec.ts";
import type { GoogleRef } from "../../shared/api/googleapis/spec.ts";
import type { ApiNamesBundle, FactField, FactResource, FactsBundle, RefsBundle, RefTarget } from "./facts.ts";

export interface NamedKind {
  r: FactResource;
  group: string;
  kind: string;
}
type Served = Omit<GoogleRef, "field" | "list" | "type" | "at" | "from" | "prefix" | "source">;

export interface Unmapped {
  /** The Terraform resource and field as Config Connector names them (google_compute_instance boot_disk.source). */
  resource: string;
  tfField: string;
  target?: string;
  why: string;
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const pascal = (words: readonly string[]) =>
  words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
const templateOf = (s: string) => s.replace(/\{\{?[^}]+\}\}?/g, "*");

/** A hand-written kind serving a Google type no generated kind serves (the GCS Bucket): named by its external name. */
export interface HandWrittenTarget {
  type: string;
  group: string;
  kind: string;
  plural: string;
}

export interface ComputeRefsInput {
  /** Hand-written kinds a reference may point at where no generated kind serves the type. */
  handWritten?: readonly HandWrittenTarget[];
  refs: RefsBundle;
  facts: FactsBundle;
  /** Magic Modules' Terraform → API names where they differ (disk_encryption_key.kms_key_self_link → kmsKeyName). */
  apiNames?: ApiNamesBundle;
  named: readonly NamedKind[];
  /** Whether a field (by message and JSON name) is output-only, a fingerprint or otherwise not in forProvider. */
  inForProvider: (r: FactResource, path: readonly FactField[]) => boolean;
  /** Object types nest at most this deep in the CRD: a reference deeper than that has nowhere to go. */
  maxDepth: number;
}

/** Per generated Compute kind (`group/kind`): its references; and every KCC reference not mapped, with why. */
export function computeRefsOf(i: ComputeRefsInput): {
  byKind: Map<string, GoogleRef[]>;
  unmapped: Unmapped[];
} {
  const byKind = new Map<string, GoogleRef[]>();
  const unmapped: Unmapped[] = [];
  const compute = i.named.filter((n) => n.r.family === "compute");
  const computeKind = new Map(compute.map((n) => [n.kind, n]));
  const byType = new Map<string, NamedKind>();
  for (const n of i.named) if (n.r.family === "resource" && !byType.has(n.r.type)) byType.set(n.r.type, n);
  const served = (n: NamedKind): Served => ({
    group: n.group,
    kind: n.kind,
    plural: pluralOf(n.kind),
    family: n.r.family,
  });

  /**
   * The generated kind serving a KCC kind: Compute by its Terraform name — where the KCC kind is a global
   * and a regional twin, the one of the referring resource's scope (google_compute_region_* refers to
   * google_compute_region_*) — others by host and the longest Terraform-name suffix that is a served type.
   */
  const handWritten = new Map((i.handWritten ?? []).map((h) => [h.type, h]));
  const targetKind = (kcc: string, from: string): NamedKind | HandWrittenTarget | string => {
    const k = i.refs.kinds[kcc];
    if (!k) return `Config Connector has no service mapping for ${kcc}`;
    if (k.host === "compute.googleapis.com") {
      const regional = from.startsWith("google_compute_region_");
      const tf =
        k.tf.length === 1
          ? (k.tf[0] as string)
          : (k.tf.find((t) => t.startsWith("google_compute_region_") === regional) ?? (k.tf[0] as string));
      const name = pascal(tf.replace(/^google_compute_/, "").split("_"));
      return computeKind.get(name) ?? `no generated Compute kind ${name} (${tf})`;
    }
    for (const tf of k.tf) {
      const words = tf.replace(/^google_/, "").split("_");
      // google_kms_crypto_key on cloudkms.googleapis.com: CryptoKey.
      for (let s = 0; s < words.length; s++) {
        const n = byType.get(`${k.host}/${pascal(words.slice(s))}`);
        if (n) return n;
      }
      // google_storage_bucket on storage.googleapis.com: the hand-written Bucket.
      for (let s = 0; s < words.length; s++) {
        const h = handWritten.get(`${k.host}/${pascal(words.slice(s))}`);
        if (h) return h;
      }
    }
    return `no generated kind serves ${kcc} (${k.tf.join(", ")} on ${k.host})`;
  };

  for (const res of i.refs.resources) {
    const own = computeKind.get(pascal(res.tf.replace(/^google_compute_/, "").split("_")));
    for (const ref of res.refs) {
      const miss = (why: string, target?: string) =>
        unmapped.push({ resource: res.tf, tfField: ref.tfField, ...(target ? { target } : {}), why });
      if (!own) {
        miss(`no generated Compute kind for ${res.tf}`);
        continue;
      }
      // The Terraform path onto the API's fields: camelCase, a Terraform block's singular as the API's list.
      const path: FactField[] = [];
      let msg: string | undefined = own.r.message;
      let why = "";
      const parts = ref.tfField.split(".");
      for (const [n, part] of parts.entries()) {
        const fields: FactField[] = msg ? (i.facts.messages[msg]?.fields ?? []) : [];
        const c = i.apiNames?.resources[res.tf]?.[parts.slice(0, n + 1).join(".")] ?? camel(part);
        const f = fields.find((x) => x.j === c) ?? fields.find((x) => x.j === `${c}s`);
        if (!f) {
          why = `the API's ${own.r.type.split("/")[1]} has no field for ${part}${path.length ? ` in ${path.map((p) => p.j).join(".")}` : ""}`;
          break;
        }
        path.push(f);
        msg = i.facts.messages[f.t] ? f.t : undefined;
      }
      if (why) {
        miss(why);
        continue;
      }
      const leaf = path.at(-1) as FactField;
      const holders = path.slice(0, -1);
      if (!["string"].includes(leaf.t) || leaf.map) {
        miss(`${path.map((p) => p.j).join(".")} is not a string (${leaf.t})`);
        continue;
      }
      if (holders.some((h) => h.map)) {
        miss(`${path.map((p) => p.j).join(".")} lies in a map`);
        continue;
      }
      if (holders.length > i.maxDepth) {
        miss(`${path.map((p) => p.j).join(".")} is deeper than the CRD's ${i.maxDepth} object levels`);
        continue;
      }
      if (!i.inForProvider(own.r, path)) {
        miss(`${path.map((p) => p.j).join(".")} is output-only or server state, not in forProvider`);
        continue;
      }
      const key = `${own.group}/${own.kind}`;
      const list = byKind.get(key) ?? [];
      const at = holders.map((h) => h.j).join(".");
      if (list.some((x) => x.field === leaf.j && (x.at ?? "") === at)) {
        for (const t of ref.targets)
          miss("a second type for one field: only the first mapped type is referenced", t.kind);
        continue;
      }
      let done = false;
      for (const t of ref.targets) {
        if (done) {
          miss("a second type for one field: only the first mapped type is referenced", t.kind);
          continue;
        }
        const to = targetKind(t.kind, res.tf);
        if (typeof to === "string") {
          miss(to, t.kind);
          continue;
        }
        if (!("r" in to)) {
          // A hand-written kind: its external name is the resource's name (a bucket's), nothing else is known.
          if (t.targetField && t.targetField !== "name") {
            miss(`the hand-written ${to.kind} kind has no field for ${t.targetField}`, t.kind);
            continue;
          }
          list.push({
            field: leaf.j,
            ...(at ? { at } : {}),
            ...(leaf.rep ? { list: true as const } : {}),
            ...to,
            family: "resource",
            from: "externalName",
            source: "kcc",
          });
          done = true;
          continue;
        }
        const value = fillOf(t, to, i.facts);
        if (typeof value === "string") {
          miss(value, t.kind);
          continue;
        }
        list.push({
          field: leaf.j,
          ...(at ? { at } : {}),
          ...(leaf.rep ? { list: true as const } : {}),
          type: to.r.type,
          ...served(to),
          ...value,
          source: "kcc",
        });
        done = true;
      }
      byKind.set(key, list);
    }
  }
  return { byKind, unmapped };
}

/**
 * What of the target fills the field: KCC's targetField (a Terraform field of the target, e.g. self_link →
 * its selfLink, email → its email) when the target's API message has it; none → its full name (Compute: its
 * relative name); a valueTemplate only where it is the target's own name pattern, optionally behind
 * `//<host>/` (a full resource name).
 */
function fillOf(
  t: RefTarget,
  to: NamedKind,
  facts: FactsBundle,
): Pick<GoogleRef, "from" | "prefix"> | string {
  if (t.valueTemplate) {
    const m = /^(\/\/[a-z0-9.-]+\/)?(.*)$/.exec(t.valueTemplate) as RegExpExecArray;
    const pattern = to.r.pattern ? templateOf(to.r.pattern) : "";
    if (!pattern || templateOf(m[2] as string) !== pattern)
      return `valueTemplate ${t.valueTemplate} is not ${to.kind}'s name pattern (${to.r.pattern ?? "none"})`;
    return m[1] ? { prefix: m[1] } : {};
  }
  if (!t.targetField) return {};
  const from = camel(t.targetField);
  if (from === "name") return { from };
  // A resource-oriented target's Terraform `self_link` was its relative name (Magic Modules' KMS CryptoKey:
  // `self_link: '{{key_ring}}/cryptoKeys/{{name}}'`, deprecated then removed from google_kms_crypto_key,
  // terraform-provider-google#8275): its full name, what the field (Compute's kmsKeyName) takes.
  if (from === "selfLink" && to.r.family === "resource" && !hasString(facts, to, from)) return {};
  if (!hasString(facts, to, from))
    return `${to.kind} has no string field ${from} (KCC targetField ${t.targetField})`;
  return { from };
}

const hasString = (facts: FactsBundle, to: NamedKind, field: string) =>
  Boolean(facts.messages[to.r.message]?.fields.some((f) => f.j === field && f.t === "string" && !f.rep));
