// The census of Google Cloud resource types: every resource the extractor met in Google's protos
// (infra/gcp/google-apis.json.gz: `resources` and `notTaken`, written by `npm run refresh:gcp-apis`) and what
// became of it — a generated kind, left out by the generator with why (.generated/gcp/catalog.json `skipped`),
// or not taken by the extractor with why. Writes docs/gcp-census.md; `npm run gen:docs` runs it.
//
//   node infra/gcp/census.ts            write docs/gcp-census.md
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { GoogleCatalog } from "../../shared/api/googleapis/spec.ts";
import type { FactsBundle, NotTakenWhy } from "./facts.ts";

export const CENSUS_FILE = resolve(import.meta.dirname, "../../docs/gcp-census.md");

/** What each reason means, in the order the census lists them. */
export const NOT_TAKEN_WHY: Record<NotTakenWhy, string> = {
  "no-delete":
    "a create and a get, but no method that DELETEs the name the get reads (recognised by its HTTP binding, whatever its name) (bundles before 2026-11-28; such resources are now taken, their kinds released on deletion, never deleted)",
  "no-get":
    "a create, but no method answering the resource with a GET of its name (recognised by its HTTP binding and answer, whatever its name: Logging's GetBucket is LogBucket's), or several, and no paged list of the create's own collection answering it (taken instead, list-observed: Resource Manager's TagBinding, BigQuery Reservation's Assignment, Data Catalog's Tag). Left: transient ones with no list (ReadSession, Challenge, Assessment, Profile, ResultStore's uploads), a search or fetch that is no list (Data Manager's SearchPartnerLinks, Discovery Engine's FetchSitemaps), a resource held only in its parent's answer (Monitoring's MonitoredProject, in GetMetricsScope; Data Catalog's TagTemplateField)",
  "second-create":
    "a custom method that makes a resource the service already makes with its standard create (Logging's CreateBucketAsync beside CreateBucket): the kind is made with the standard one",
  "fields-beside-resource":
    "the create's whole request is the body and holds the resource beside other fields, and is not a create the rule takes. Taken: one resource message beside at most one id, where the other fields are create-time inputs (Bigtable's `clusters`, `initial_splits`: spec fields sent only in the create, recorded then, a change refused) or request controls, never spec fields (`request_id`, `validate_only`, `response_view`, `request_metadata`, a field mask). Not taken: more resource messages or ids, or another method's name than Create<resource>",
  "no-resource-message":
    "the create's request holds no resource message and is not a create of plain options (a list, map, message or bytes among its fields, or another method's name)",
  "request-is-resource":
    "the create's request is the resource itself, POSTed whole to a collection with no id (Access Context Manager's AccessPolicy: its parent a field inside it, Google names it). Taken instead: a PUT on the resource's name whose request is the resource (Pub/Sub's Topic, Subscription)",
  "create-not-post":
    "the create is neither a POST with a body nor a PUT on the resource's full name (taken: Pub/Sub's PUT creates); Cloud Storage's gRPC-only methods have no HTTP binding",
  "body-not-resource": "the create's body is a message without `google.api.resource`",
  "get-or-delete-not-by-name":
    "get or delete is not a GET / DELETE on one variable holding the resource's name (Content Warehouse's POST `:get`), or the two bind different variables (any one variable is taken: Logging's `{metric_name=…}`)",
  "no-create":
    "the API answers it (`Get<R>`) but has no create, and is not taken: a Compute collection Google answers (Zones, MachineTypes: not taken yet), or a get that is not a GET of a name under a parent. Those with a GET of `{name=<parent>/<collection>/*}` or `{name=<parent>/<singleton>}` are taken, as kinds that adopt (with an update) or observe (without)",
};

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

export interface Census {
  taken: number;
  kinds: number;
  skipped: number;
  notTaken: Record<string, number>;
}

export function censusOf(facts: FactsBundle, catalog: GoogleCatalog): Census {
  const notTaken: Record<string, number> = {};
  for (const x of facts.notTaken ?? []) notTaken[x.why] = (notTaken[x.why] ?? 0) + 1;
  return {
    taken: facts.resources.length,
    kinds: catalog.kinds.length,
    skipped: catalog.skipped.length,
    notTaken,
  };
}

export function censusMarkdown(facts: FactsBundle, catalog: GoogleCatalog): string {
  const c = censusOf(facts, catalog);
  const not = facts.notTaken ?? [];
  const total = c.taken + not.length;
  const compute = catalog.kinds.filter((k) => k.family === "compute").length;
  // Taken without a delete (Cloud KMS's KeyRing): a kind whose deletion releases the resource, never deletes it.
  const noDelete = new Set(facts.resources.filter((r) => r.create && !r.delete).map((r) => r.type));
  const releasedKinds = catalog.kinds.filter((k) => noDelete.has(k.typeName)).length;
  // Taken without a create (a singleton of settings, what Google makes itself): adopted, or observe-only.
  const noCreate = facts.resources.filter((r) => !r.create);
  const adopted = new Set(noCreate.filter((r) => r.update).map((r) => r.type));
  const observed = new Set(noCreate.filter((r) => !r.update).map((r) => r.type));
  // Taken with no GET of its name: read through a list of its parent's collection.
  const listed = new Set(facts.resources.filter((r) => r.listObserved).map((r) => r.type));
  const kindsOf = (types: Set<string>) => catalog.kinds.filter((k) => types.has(k.typeName)).length;
  const out = [
    "# Census of Google Cloud resource types",
    "",
    "<!-- Generated by infra/gcp/census.ts (npm run gen:docs) from infra/gcp/google-apis.json.gz and the generator's catalog: do not edit. -->",
    "",
    `Every resource the extractor (\`infra/gcp/refresh-apis.ts\`) meets in Google's protos, googleapis commit \`${facts.origin.commit}\` (${facts.origin.committed}), and what became of it. A resource is counted from each \`Create…\` method that creates or names a \`google.api.resource\` message, from each \`Get<R>\` of a resource no create names, and, for Compute, from each service with \`Get\` or \`Insert\`. Reproduce: \`npm run refresh:gcp-apis -- --from <googleapis checkout at that commit>\` (prints the same counts), then \`npm run gen:gcp && npm run gen:docs\`.`,
    "",
    "| | count |",
    "| --- | ---: |",
    `| resources met | ${total} |`,
    `| taken into the facts | ${c.taken} |`,
    `| → generated kinds | ${c.kinds} (${c.kinds - compute} resource-oriented, ${compute} Compute) |`,
    `| → of them, kinds Google publishes no delete for (\`deletionPolicy\` Orphan only: deleting the object releases the resource; docs/gcp-generated.md) | ${releasedKinds} of ${noDelete.size} taken without a delete |`,
    `| → of them, kinds Google publishes no create for, with an update (adopt and manage: management policies without Create) | ${kindsOf(adopted)} of ${adopted.size} taken |`,
    `| → of them, kinds Google publishes only a get (and maybe a delete) for (observe-only: management policies Observe alone) | ${kindsOf(observed)} of ${observed.size} taken |`,
    `| → of them, kinds Google publishes no get of the name for, read through a list of the parent (list-observed: absent from the list is gone) | ${kindsOf(listed)} of ${listed.size} taken |`,
    `| → left out by the generator, with the reason (catalog \`skipped\`, listed below) | ${c.skipped} |`,
    `| not taken by the extractor, with the reason (below) | ${not.length} |`,
    ...Object.entries(NOT_TAKEN_WHY)
      .filter(([w]) => c.notTaken[w])
      .map(([w]) => `| — \`${w}\` | ${c.notTaken[w]} |`),
    "",
    "## Left out by the generator",
    "",
    "| type | why |",
    "| --- | --- |",
    ...catalog.skipped.map((s) => `| \`${s.typeName}\` | ${cell(s.why)} |`),
    "",
    "## Not taken by the extractor",
    "",
  ];
  for (const [why, meaning] of Object.entries(NOT_TAKEN_WHY)) {
    const rows = not.filter((x) => x.why === why);
    if (rows.length === 0) continue;
    out.push(`### \`${why}\` (${rows.length})`, "", `${meaning}.`, "", "| type | API | method | detail |");
    out.push("| --- | --- | --- | --- |");
    for (const x of [...rows].sort(
      (a, b) => a.type.localeCompare(b.type) || a.method.localeCompare(b.method),
    ))
      out.push(`| \`${x.type}\` | ${x.proto} | ${x.service}.${x.method} | ${cell(x.detail)} |`);
    out.push("");
  }
  return `${out.join("\n")}`;
}

if (import.meta.main) {
  const { loadFacts } = await import("./facts.ts");
  const { generateGcp } = await import("../gen-gcp.ts");
  const { loadGoogleCatalog } = await import("../../shared/api/googleapis/catalog.ts");
  generateGcp();
  const text = censusMarkdown(loadFacts(), loadGoogleCatalog());
  writeFileSync(CENSUS_FILE, text);
  process.stdout.write(`${text.split("\n").length} lines → ${CENSUS_FILE}\n`);
}
