// Refreshes infra/gcp/compute-references.json.gz: which field of which Compute resource names which
// resource type. Compute's protos carry no google.api.resource_reference; Google's Config Connector states
// these facts as data (config/servicemappings/compute.yaml, `resourceReferences`: the Terraform field, the
// referenced kind, the target field whose value fills it, a value template), and every service mapping says
// which Terraform resource and API host a KCC kind is. gen-gcp.ts maps them onto the generated Compute
// kinds' own API fields and reports every one it cannot map.
//
//   npm run refresh:gcp-refs                      clones k8s-config-connector (depth 1, blobs on demand)
//   npm run refresh:gcp-refs -- --from DIR        a checkout or a bare mirror (its HEAD commit and date)
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { parse } from "yaml";
import { REFS_FILE, REFS_FORMAT, type RefFact, type RefsBundle, type RefTarget } from "./facts.ts";
import { gitSource } from "./git-source.ts";

const SOURCE = "https://github.com/GoogleCloudPlatform/k8s-config-connector";
const DIR = "config/servicemappings";

interface KccType {
  key?: string;
  gvk?: { kind?: string };
  targetField?: string;
  valueTemplate?: string;
  jsonSchemaType?: string;
}
interface KccMapping {
  spec?: {
    serviceHostName?: string;
    resources?: Array<{
      name: string;
      kind: string;
      resourceReferences?: Array<KccType & { tfField: string; types?: KccType[] }>;
    }>;
  };
}

const targetOf = (t: KccType): RefTarget | undefined =>
  t.gvk?.kind
    ? {
        kind: t.gvk.kind,
        ...(t.targetField ? { targetField: t.targetField } : {}),
        ...(t.valueTemplate ? { valueTemplate: t.valueTemplate } : {}),
      }
    : undefined;

if (import.meta.main) {
  const git = gitSource(SOURCE, "kcc-");
  const files = git("ls-tree", "--name-only", `HEAD:${DIR}`)
    .split("\n")
    .filter((f) => f.endsWith(".yaml"));
  const kinds: RefsBundle["kinds"] = {};
  let compute: KccMapping | undefined;
  for (const f of files) {
    const m = parse(git("show", `HEAD:${DIR}/${f}`)) as KccMapping;
    // One KCC kind may be several Terraform resources (ComputeURLMap: the global and the regional one).
    for (const r of m.spec?.resources ?? []) {
      const k = kinds[r.kind] ?? { tf: [], host: m.spec?.serviceHostName ?? "" };
      k.tf.push(r.name);
      kinds[r.kind] = k;
    }
    if (f === "compute.yaml") compute = m;
  }
  const resources: RefsBundle["resources"] = [];
  for (const r of compute?.spec?.resources ?? []) {
    const refs: RefFact[] = [];
    for (const ref of r.resourceReferences ?? []) {
      const targets = (ref.types ?? [ref]).map(targetOf).filter((t): t is RefTarget => Boolean(t));
      if (targets.length > 0) refs.push({ tfField: ref.tfField, targets });
    }
    resources.push({ tf: r.name, kind: r.kind, refs });
  }
  const n = resources.reduce((a, r) => a + r.refs.length, 0);
  if (n < 50) throw new Error(`only ${n} Compute references found: refusing to write`);
  const bundle: RefsBundle = {
    format: REFS_FORMAT,
    origin: {
      source: SOURCE,
      path: `${DIR}/compute.yaml (resourceReferences), ${DIR}/*.yaml (each kind's Terraform resource and serviceHostName)`,
      commit: git("rev-parse", "HEAD"),
      committed: git("log", "-1", "--format=%cs"),
      retrieved: new Date().toISOString().slice(0, 10),
      licence: "Apache-2.0 (GoogleCloudPlatform/k8s-config-connector LICENSE); a derived extract of facts",
    },
    resources,
    kinds,
  };
  writeFileSync(REFS_FILE, gzipSync(JSON.stringify(bundle), { level: 9 }));
  process.stdout.write(
    `${n} reference fields of ${resources.length} Compute resources, ${Object.keys(kinds).length} KCC kinds → ${REFS_FILE}\n`,
  );
}
