// The committed Azure type data (infra/azure/arm-types.json.gz): its format and its loader. Written by
// refresh-types.ts from github.com/Azure/bicep-types-az, read by infra/gen-azure.ts and the generic ARM
// fake (infra/local/fakes/arm-generic.ts). Origin, commit, date and licence: infra/azure/README.md.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

export const ARM_TYPES_FILE = join(import.meta.dirname, "arm-types.json.gz");

/** bicep-types' ObjectTypePropertyFlags. */
export const ArmFlag = {
  Required: 1,
  ReadOnly: 2,
  WriteOnly: 4,
  DeployTimeConstant: 8,
  Identifier: 16,
} as const;
/** bicep-types' ScopeType bits (readableScopes / writableScopes). */
export const ArmScope = {
  Tenant: 1,
  ManagementGroup: 2,
  Subscription: 4,
  ResourceGroup: 8,
  Extension: 16,
} as const;

/** A property: [type index, flags, description?]. */
export type ArmProp = [number, number] | [number, number, string];

/** One type of a file, compacted (indexes point into the same file's `types`). */
export type ArmType =
  | { k: "s"; sens?: 1; min?: number; max?: number }
  | { k: "l"; v: string }
  | { k: "i" | "b" | "n" | "a" }
  | { k: "arr"; of: number }
  | { k: "u"; el: number[] }
  | { k: "o"; name: string; p: Record<string, ArmProp>; ap?: number; sens?: 1 }
  | { k: "d"; name: string; disc: string; p: Record<string, ArmProp>; el: Record<string, number> };

export interface ArmFile {
  types: ArmType[];
}

/** A `list*` resource function (listKeys…): POST `{id}/{name}` answering `out`. */
export interface ArmFunction {
  name: string;
  out: number;
  in?: number;
}

export interface ArmResource {
  /** e.g. Microsoft.Storage/storageAccounts (ARM's spelling). */
  type: string;
  /** The newest stable api-version. */
  api: string;
  /** Key of `files`: `<dir>/<namespace>/<api-version>`. */
  file: string;
  /** The PUT body's type. */
  body: number;
  /** ArmScope bits where it can be written / read. */
  ws: number;
  rs: number;
  fns?: ArmFunction[];
}

export interface ArmData {
  origin: { source: string; commit: string; date: string; licence: string; retrieved: string };
  files: Record<string, ArmFile>;
  resources: ArmResource[];
}

/** A stable api-version: a date, no -preview / -beta / -alpha / -privatepreview suffix. */
export const isStableApiVersion = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v);

let cached: ArmData | undefined;
export function loadArmData(file = ARM_TYPES_FILE): ArmData {
  if (file === ARM_TYPES_FILE && cached) return cached;
  const data = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as ArmData;
  if (file === ARM_TYPES_FILE) cached = data;
  return data;
}
