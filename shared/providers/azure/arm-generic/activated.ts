// The generated Azure kinds this process reconciles: the ones DRIFTLESS_ACTIVATE selects (patterns
// `azure:<rp>.<kind>` or CRD-name globs with `azure.gen`), read from the generated directory.
import {
  activatedAzureEntries,
  azureGenDir,
  loadAzureCatalog,
  loadAzureSpec,
} from "../../../api/azure-gen/catalog.ts";
import type { AzureKindSpec } from "../../../api/azure-gen/spec.ts";

const patterns = () =>
  (process.env.DRIFTLESS_ACTIVATE ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);

export function activatedAzureGenSpecs(): AzureKindSpec[] {
  const list = patterns();
  if (list.length === 0) return [];
  const dir = azureGenDir();
  let catalog: ReturnType<typeof loadAzureCatalog>;
  try {
    catalog = loadAzureCatalog(dir);
  } catch {
    return []; // not generated: only hand-written kinds
  }
  return activatedAzureEntries(list, catalog).map((e) => loadAzureSpec(e, dir));
}
