// Refreshes infra/gcp/sensitive-labels.json.gz: which keys of a resource's configuration map are credentials.
// The protos do not say (Monitoring NotificationChannel's `labels` is a plain map<string, string>); Google's
// Magic Modules does, as data: a resource's `sensitiveLabels` NestedObject lists them, each property's
// `api_name` (else its name) the key it is written under in the resource's `labels` map on the wire
// (mmv1/products/monitoring/NotificationChannel.yaml). gen-gcp.ts reads those keys from Secret keys.
//
//   npm run refresh:gcp-sensitive                 clones magic-modules (depth 1, blobs on demand)
//   npm run refresh:gcp-sensitive -- --from DIR   a checkout or a bare mirror (its HEAD commit and date)
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { parse } from "yaml";
import { SENSITIVE_FILE, SENSITIVE_FORMAT, type SensitiveBundle, type SensitiveLabelsFact } from "./facts.ts";
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
  const bundle: SensitiveBundle = {
    format: SENSITIVE_FORMAT,
    origin: {
      source: SOURCE,
      path: `${DIR}/*/*.yaml (a resource's sensitiveLabels properties and their api_name), ${DIR}/*/product.yaml (the GA base_url)`,
      commit: git("rev-parse", "HEAD"),
      committed: git("log", "-1", "--format=%cs"),
      retrieved: new Date().toISOString().slice(0, 10),
      licence: "Apache-2.0 (the header of each mmv1/products file); a derived extract of facts",
    },
    resources,
  };
  writeFileSync(SENSITIVE_FILE, gzipSync(JSON.stringify(bundle), { level: 9 }));
  process.stdout.write(
    `${resources.map((r) => `${r.type}: ${r.keys.map((k) => k.key).join(", ")}`).join("; ")} → ${SENSITIVE_FILE}\n`,
  );
}
