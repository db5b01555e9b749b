// What a built bundle carries, for the packaging checks.
import { readFileSync } from "node:fs";
import path from "node:path";
import { packageOf } from "../../infra/build/build.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** A cloud SDK: Google's client libraries and their gRPC stack, any AWS service client, Azure's. */
export const CLOUD_SDK = /^(@google-cloud\/|google-gax$|@grpc\/|@aws-sdk\/client-|@azure\/)/;

/**
 * The packages (and source folders) whose code is in a bundle built with a linked source map (as
 * `npm run package` builds them): the map's sources are the inputs that produced output.
 */
export function packagesInBundle(bundle: string): string[] {
  const map = JSON.parse(readFileSync(`${bundle}.map`, "utf8")) as { sources: string[] };
  const inputs = map.sources.map((s) => path.relative(ROOT, path.resolve(path.dirname(bundle), s)));
  return [...new Set(inputs.map(packageOf))];
}
