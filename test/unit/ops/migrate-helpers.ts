// Shared by the migrate unit tests: the providers' example manifests as parsed documents, what an export
// of a reconciled object adds to them, and lookups in a MigrateResult.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { MigrateResult } from "../../../shared/ops/migrate.ts";

export type Doc = Record<string, unknown> & { metadata: Record<string, unknown> };

const FIXTURES = join(import.meta.dirname, "../../fixtures/crossplane");
// biome-ignore lint/suspicious/noTemplateCurlyInString: uptest's placeholder, as the examples spell it
export const RAND = "${Rand.RFC1123Subdomain}";

/** The documents of fixture files under test/fixtures/crossplane/, in order, empty ones left out. */
export const fixture = (...names: string[]): Doc[] =>
  names.flatMap((name) =>
    parseAllDocuments(readFileSync(join(FIXTURES, name), "utf8"))
      .map((d) => d.toJS() as Doc | null)
      .filter((d): d is Doc => d !== null),
  );

/** What an export of the reconciled object would carry: the external name Crossplane recorded. */
export const exported = (docs: Doc[], externalNames: Record<string, string>): Doc[] =>
  docs.map((d) => {
    const id = externalNames[`${String(d.kind)}/${String(d.metadata.name)}`];
    if (!id) return d;
    const annotations = { ...(d.metadata.annotations as object), "crossplane.io/external-name": id };
    return { ...d, metadata: { ...d.metadata, annotations } };
  });

/** An Upjet managed resource with just a forProvider (and an external name, when given). */
export const upjet = (
  apiVersion: string,
  kind: string,
  name: string,
  forProvider: Record<string, unknown>,
  externalName?: string,
): Doc => ({
  apiVersion,
  kind,
  metadata: {
    name,
    ...(externalName ? { annotations: { "crossplane.io/external-name": externalName } } : {}),
  },
  spec: { forProvider },
});

export const find = (r: MigrateResult, kind: string, name: string) =>
  r.objects.find((o) => o.object.kind === kind && o.object.metadata.name === name)?.object;

export const issuesOf = (r: MigrateResult, severity: string) =>
  r.issues.filter((i) => i.severity === severity).map((i) => `${i.source}: ${i.message}`);
