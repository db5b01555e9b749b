// Refreshes the facts taken from Google's Magic Modules (mmv1/products/*):
// - infra/gcp/compute-api-names.json.gz: where a Compute Terraform field's name is not the API's (`api_name`),
//   so Config Connector's references (which name Terraform fields) land on the API's fields;
// - infra/gcp/sensitive-labels.json.gz: which keys of a resource's configuration map are credentials.
// The protos do not say (Monitoring NotificationChannel's `labels` is a plain map<string, string>); Google's
// Magic Modules does, as data: a resource's `sensitiveLabels` NestedObject lists them, each property's
// `api_name` (else its name) the key it is written under in the resource's `labels` map on the wire
// (mmv1/products/monitoring/NotificationChannel.yaml). gen-gcp.ts reads those keys from Secret keys.
//
//   npm run refresh:gcp-mmv1                      clones magic-modules (depth 1, blobs on demand)
//   npm run refresh:gcp-mmv1 -- --from DIR        a checkout or a bare mirror (its HEAD commit and date)
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { parse } from "yaml";
import {
  API_NAMES_FILE,
  API_NAMES_FORMAT,
  type ApiNamesBundle,
  SENSITIVE_FILE,
  SENSITIVE_FORMAT,
  type SensitiveBundle,
  type SensitiveLabelsFact,
} from "./facts.ts";
import { gitSource } from "./git-source.ts";

const SOURCE = "https://github.com/GoogleCloudPlatform/magic-modules";
const DIR = "mmv1/products";

interface MmProperty {
  name: string;
  type?: string;
  api_name?: string;
  description?: string;
  properties?: MmProperty[];
}

if (import.meta.main) {
  const git = gitSource(SOURCE, "mmv1-");
  // Only the resource files that name a sensitiveLabels block are read (blobs on demand in a partial clone).
  const hits = git("grep", "-l", "name: '\\?sensitiveLabels'\\?$", "HEAD", "--", DIR)
    .split("\n")
    .filter(Boolean)
    .map((l) => l.replace(/^HEAD:/, ""));
  const resources: SensitiveLabelsFact[] = [];
  for (const file of hits) {
    const r = parse(git("show", `HEAD:${file}`)) as { name: string; properties?: MmProperty[] };
    const product = parse(git("show", `HEAD:${file.replace(/[^/]+$/, "product.yaml")}`)) as {
      versions?: Array<{ name: string; base_url: string }>;
    };
    const base = product.versions?.find((v) => v.name === "ga")?.base_url;
    const host = base ? new URL(base).host : undefined;
    const block = r.properties?.find((p) => p.name === "sensitiveLabels");
    // The keys go into the resource's `labels` map ("will be the key in the labels map in the api request").
    if (!host || !block?.properties || !r.properties?.some((p) => p.name === "labels"))
      throw new Error(`${file}: a sensitiveLabels block without a GA host or a labels map`);
    resources.push({
      type: `${host}/${r.name}`,
      map: "labels",
      keys: block.properties.map((p) => ({
        name: p.name,
        key: p.api_name ?? p.name,
        ...(p.description ? { doc: p.description.trim().replace(/\s+/g, " ") } : {}),
      })),
    });
  }
  if (resources.length === 0) throw new Error("no sensitiveLabels block found: refusing to write");
  const origin = {
    source: SOURCE,
    path: `${DIR}/*/*.yaml (a resource's sensitiveLabels properties and their api_name), ${DIR}/*/product.yaml (the GA base_url)`,
    commit: git("rev-parse", "HEAD"),
    committed: git("log", "-1", "--format=%cs"),
    retrieved: new Date().toISOString().slice(0, 10),
    licence: "Apache-2.0 (the header of each mmv1/products file); a derived extract of facts",
  };
  const bundle: SensitiveBundle = { format: SENSITIVE_FORMAT, origin, resources };
  writeFileSync(SENSITIVE_FILE, gzipSync(JSON.stringify(bundle), { level: 9 }));
  process.stdout.write(
    `${resources.map((r) => `${r.type}: ${r.keys.map((k) => k.key).join(", ")}`).join("; ")} → ${SENSITIVE_FILE}\n`,
  );
  // Compute: each resource's parameters and properties at any depth whose API name (`api_name`, else the
  // name) is not the camelCase of its Terraform name (the name in snake_case: kmsKeySelfLink →
  // kms_key_self_link, IPAddress → ip_address).
  const snake = (s: string) =>
    s
      .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
      .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
      .toLowerCase();
  const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const apiNames: ApiNamesBundle["resources"] = {};
  const files = git("ls-tree", "--name-only", `HEAD:${DIR}/compute`)
    .split("\n")
    .filter((f) => f.endsWith(".yaml") && f !== "product.yaml");
  for (const f of files) {
    const r = parse(git("show", `HEAD:${DIR}/compute/${f}`)) as {
      name: string;
      legacy_name?: string;
      parameters?: MmProperty[];
      properties?: MmProperty[];
    };
    const tf = r.legacy_name ?? `google_compute_${snake(r.name)}`;
    const names: Record<string, string> = {};
    const walk = (props: MmProperty[] | undefined, prefix: string) => {
      for (const p of props ?? []) {
        const path = prefix ? `${prefix}.${snake(p.name)}` : snake(p.name);
        const api = p.api_name ?? p.name;
        if (api !== camel(snake(p.name))) names[path] = api;
        walk(
          p.properties ?? (p as { item_type?: { properties?: MmProperty[] } }).item_type?.properties,
          path,
        );
      }
    };
    walk([...(r.parameters ?? []), ...(r.properties ?? [])], "");
    if (Object.keys(names).length > 0) apiNames[tf] = names;
  }
  const n = Object.values(apiNames).reduce((a, x) => a + Object.keys(x).length, 0);
  if (n < 20) throw new Error(`only ${n} Compute api_names found: refusing to write`);
  const names: ApiNamesBundle = {
    format: API_NAMES_FORMAT,
    origin: { ...origin, path: `${DIR}/compute/*.yaml (properties' api_name at any depth, legacy_name)` },
    resources: apiNames,
  };
  writeFileSync(API_NAMES_FILE, gzipSync(JSON.stringify(names), { level: 9 }));
  process.stdout.write(
    `${n} Compute fields of ${Object.keys(apiNames).length} resources → ${API_NAMES_FILE}\n`,
  );
}
