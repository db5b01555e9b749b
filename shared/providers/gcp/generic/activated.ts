// The generated Google kinds this process reconciles: the ones DRIFTLESS_ACTIVATE selects, read from the
// generated directory; a function bundle gets instead a copy of this module holding just those kinds'
// specs, made by infra/build/build.ts from the activation list at build time.
import { activationPatterns, noneIfNotGenerated } from "../../../api/generated-catalog.ts";
import { GoogleNotGeneratedError, googleSpecsFor } from "../../../api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../api/googleapis/spec.ts";

export function activatedGoogleSpecs(): GoogleKindSpec[] {
  const list = activationPatterns();
  // Only a pattern that says googleapis can select one: no other list reads the catalog.
  if (!list.some((p) => p.toLowerCase().includes("googleapis"))) return [];
  return noneIfNotGenerated(GoogleNotGeneratedError, () => googleSpecsFor(list));
}
