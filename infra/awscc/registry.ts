// The CloudFormation registry resource schemas as the generator reads them: the committed bundle
// (registry-schemas.json.gz, made by refresh-schemas.ts) and the facts of one type, its JSON pointers
// (`/properties/Users/*/Password`) turned into property-name paths.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gunzipSync } from "node:zlib";

export const REGISTRY_BUNDLE_FORMAT = 1;
/** The committed bundle, or another one (a region's, one with handlers) named by DRIFTLESS_AWSCC_REGISTRY. */
export const REGISTRY_BUNDLE_FILE =
  process.env.DRIFTLESS_AWSCC_REGISTRY ?? resolve(import.meta.dirname, "registry-schemas.json.gz");

export type HandlerName = "create" | "read" | "update" | "delete" | "list";

/** The parts of the resource provider schema format the generator reads (the rest is kept as published). */
export interface RegistrySchema {
  typeName: string;
  properties?: Record<string, unknown>;
  definitions?: Record<string, unknown>;
  readOnlyProperties?: string[];
  writeOnlyProperties?: string[];
  createOnlyProperties?: string[];
  primaryIdentifier?: string[];
  tagging?: { taggable?: boolean; tagProperty?: string };
  handlers?: Partial<Record<HandlerName, { permissions?: string[] }>>;
  [other: string]: unknown;
}

export interface RegistryBundle {
  format: typeof REGISTRY_BUNDLE_FORMAT;
  origin: {
    /** What the schemas were copied from: package or repository, its version or commit. */
    source: string;
    region: string;
    licence: string;
    /** The day the bundle was made (YYYY-MM-DD). */
    retrieved: string;
    /** Whether the copy keeps `handlers` (permissions): cfn-lint's does not. */
    handlers: boolean;
  };
  schemas: Record<string, RegistrySchema>;
}

export function loadRegistryBundle(file = REGISTRY_BUNDLE_FILE): { bundle: RegistryBundle; bytes: Buffer } {
  const bytes = readFileSync(file);
  const bundle = JSON.parse(gunzipSync(bytes).toString("utf8")) as RegistryBundle;
  if (bundle.format !== REGISTRY_BUNDLE_FORMAT)
    throw new Error(`${file}: bundle format ${bundle.format}, expected ${REGISTRY_BUNDLE_FORMAT}`);
  return { bundle, bytes };
}

/**
 * A property pointer as the CloudFormation names along it, arrays left out (`/properties/Users/<n>/Password`
 * → ["Users", "Password"]); undefined for a pointer that is not below /properties.
 */
export function pointerNames(pointer: string): string[] | undefined {
  const parts = pointer.split("/").slice(1);
  if (parts[0] !== "properties" || parts.length < 2) return undefined;
  return parts
    .slice(1)
    .filter((p) => p !== "*" && !/^\d+$/.test(p))
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The IAM actions a type's handlers need, by handler (empty when the copy has no handlers). */
export function permissionsOf(s: RegistrySchema): Partial<Record<HandlerName, string[]>> {
  const out: Partial<Record<HandlerName, string[]>> = {};
  for (const h of ["create", "read", "update", "delete", "list"] as const) {
    const p = s.handlers?.[h]?.permissions;
    if (p && p.length > 0) out[h] = [...new Set(p)].sort();
  }
  return out;
}
