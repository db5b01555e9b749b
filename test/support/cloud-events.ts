// The documented cloud event samples (test/fixtures/cloud-events) as templates: a test replaces the
// sample's names with its own.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const FIXTURES = join(import.meta.dirname, "../fixtures/cloud-events");

/** A fixture's text with every `from` replaced by `to`. */
export function fixture(name: string, replace: Record<string, string> = {}): string {
  let text = readFileSync(join(FIXTURES, name), "utf8");
  for (const [from, to] of Object.entries(replace)) text = text.replaceAll(from, to);
  return text;
}

export const fixtureJson = <T = Record<string, unknown>>(
  name: string,
  replace: Record<string, string> = {},
) => JSON.parse(fixture(name, replace)) as T;
