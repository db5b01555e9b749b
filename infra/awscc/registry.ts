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

/**
 * The facts cfn-lint's copy drops, per type: the registry schemas' `handlers` (each handler's IAM
 * permissions and timeout) and `tagging` (with its permissions), for the types Cloud Control can provision
 * (handlers-facts.json.gz, made by refresh-schemas.ts --handlers-from; see README.md).
 */
export const HANDLER_FACTS_FILE =
  process.env.DRIFTLESS_AWSCC_HANDLERS ?? resolve(import.meta.dirname, "handler-facts.json.gz");
export const HANDLER_FACTS_FORMAT = 1;

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
  tagging?: {
    taggable?: boolean;
    tagOnCreate?: boolean;
    tagUpdatable?: boolean;
    tagProperty?: string;
    permissions?: string[];
  };
  handlers?: Partial<
    Record<
      HandlerName,
      {
        permissions?: string[];
        timeoutInMinutes?: number;
        /** The list handler's handlerSchema: the properties a ListResources ResourceModel must carry. */
        handlerSchema?: { required?: string[] };
      }
    >
  >;
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

/** One type's facts from the published schemas that the schema bundle lacks. */
export interface HandlerFacts {
  handlers: NonNullable<RegistrySchema["handlers"]>;
  tagging?: NonNullable<RegistrySchema["tagging"]> & Record<string, unknown>;
}

export interface HandlerFactsBundle {
  format: typeof HANDLER_FACTS_FORMAT;
  origin: {
    /** The repository or package the schemas were read from. */
    source: string;
    /** Its commit (or version), and that commit's date (YYYY-MM-DD). */
    commit: string;
    committed: string;
    region: string;
    licence: string;
    /** The day the file was made (YYYY-MM-DD). */
    retrieved: string;
    /** Types the source lists as provisionable whose schema it does not hold (so no facts here). */
    listedWithoutSchema: string[];
  };
  /**
   * Every type Cloud Control provisions (registry provisioning type FULLY_MUTABLE or IMMUTABLE) with its
   * handlers; a type the registry has but this map lacks is NON_PROVISIONABLE: Cloud Control refuses it.
   */
  types: Record<string, HandlerFacts>;
}

export function loadHandlerFacts(file = HANDLER_FACTS_FILE): HandlerFactsBundle {
  const facts = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as HandlerFactsBundle;
  if (facts.format !== HANDLER_FACTS_FORMAT)
    throw new Error(`${file}: handler facts format ${facts.format}, expected ${HANDLER_FACTS_FORMAT}`);
  return facts;
}

/**
 * A type's registry schema with the published handler facts laid over it (the schema's own handlers, when
 * the bundle keeps them, give way to the facts file's); undefined for a type Cloud Control cannot provision.
 */
export function provisionableSchema(
  schema: RegistrySchema,
  facts: HandlerFactsBundle,
): RegistrySchema | undefined {
  const f = facts.types[schema.typeName];
  if (!f) return undefined;
  return {
    ...schema,
    handlers: f.handlers,
    ...(f.tagging ? { tagging: { ...schema.tagging, ...f.tagging } } : {}),
  };
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

/**
 * The IAM actions a type's handlers need, by handler (empty when the copy has no handlers). Tagging's own
 * permissions (tag, untag, list tags) belong to the handlers that write tags (create, update).
 */
export function permissionsOf(s: RegistrySchema): Partial<Record<HandlerName, string[]>> {
  const out: Partial<Record<HandlerName, string[]>> = {};
  const tagging = s.tagging?.taggable === false ? [] : (s.tagging?.permissions ?? []);
  for (const h of ["create", "read", "update", "delete", "list"] as const) {
    const p = s.handlers?.[h]?.permissions;
    if (!p) continue;
    const all = h === "create" || h === "update" ? [...p, ...tagging] : p;
    if (all.length > 0) out[h] = [...new Set(all)].sort();
  }
  return out;
}
