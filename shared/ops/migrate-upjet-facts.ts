// The Upjet providers' kinds as data (infra/migrate/upjet-kinds.json.gz, made by infra/migrate/refresh-upjet.ts):
// per kind its Terraform resource type and external-name configuration, and the awscc Terraform provider's
// Terraform name → CloudFormation type list. What `driftless migrate` maps Upjet kinds onto driftless's
// generated kinds from (migrate-generated.ts); never guessed.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";

export const UPJET_FACTS_FORMAT = 1;
export type UpjetCloud = "aws" | "azure" | "gcp";

export interface UpjetOrigin {
  source: string;
  commit: string;
  committed: string;
  licence: string;
}

export interface UpjetFacts {
  format: typeof UPJET_FACTS_FORMAT;
  retrieved: string;
  origin: Record<UpjetCloud, UpjetOrigin> & { awscc: UpjetOrigin & { file: string } };
  /**
   * Per cloud, `<v1 group>/<Kind>` (`dynamodb.aws.upbound.io/Table`; the `.m.` v2 group holds the same kinds) →
   * [Terraform resource type, external-name expression as config/externalname*.go writes it ("" if none)].
   */
  kinds: Record<UpjetCloud, Record<string, [string, string]>>;
  /** awscc's `resource_schema "<name>"` → its CloudFormation type (`aws_dynamodb_table` → AWS::DynamoDB::Table). */
  awsccTypes: Record<string, string>;
}

const FILE_NAME = "upjet-kinds.json.gz";
export const UPJET_FACTS_FILE = resolve(import.meta.dirname ?? ".", "../../infra/migrate", FILE_NAME);

/** The facts file: DRIFTLESS_UPJET_FACTS, the repository's infra/migrate copy, or one beside a bundle. */
export function upjetFactsFile(env: Record<string, string | undefined> = process.env): string | undefined {
  const candidates = [
    env.DRIFTLESS_UPJET_FACTS,
    UPJET_FACTS_FILE,
    join(import.meta.dirname ?? ".", FILE_NAME),
  ];
  return candidates.find((f): f is string => !!f && existsSync(f));
}

export function loadUpjetFacts(file: string): UpjetFacts {
  const facts = JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")) as UpjetFacts;
  if (facts.format !== UPJET_FACTS_FORMAT)
    throw new Error(`${file}: format ${String(facts.format)}, expected ${UPJET_FACTS_FORMAT}: refresh it`);
  return facts;
}
