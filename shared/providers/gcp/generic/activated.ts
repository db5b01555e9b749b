// The generated Google kinds this process reconciles: the ones DRIFTLESS_ACTIVATE selects, read from the
// generated directory; a function bundle gets instead a copy of this module holding just those kinds'
// specs, made by infra/build/build.ts from the activation list at build time.
import {
  activatedGoogleEntries,
  googleDir,
  loadGoogleCatalog,
  loadGoogleSpec,
} from "../../../api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";

const patterns = () =>
  (process.env.DRIFTLESS_ACTIVATE ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

export function activatedGoogleSpecs(): GoogleKindSpec[] {
  const list = patterns();
  if (!list.some((p) => p.toLowerCase().includes("googleapis"))) return [];
  const dir = googleDir();
  let catalog: ReturnType<typeof loadGoogleCatalog>;
  try {
    catalog = loadGoogleCatalog(dir);
  } catch {
    return []; // not generated: only hand-written kinds
  }
  return activatedGoogleEntries(list, catalog).map((e) => loadGoogleSpec(e, dir));
}
