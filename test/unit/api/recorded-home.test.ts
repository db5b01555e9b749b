// The recorded home (driftless.dev/home) is read by every plan, twice per object in a batched check: each
// text is parsed once and shared. What it returns must be what parsing the text returns, every time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Home, recordedHome } from "../../../shared/api/external.ts";
import { isObject } from "../../../shared/api/json.ts";
import type { ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";

/** The reference: the annotation's JSON object with its string members only; anything else, { "": text }. */
function parsed(raw: string | undefined): Home | undefined {
  if (raw === undefined || raw === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  if (!isObject(value)) return { "": raw };
  const out: Record<string, string> = {};
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (typeof member === "string")
      Object.defineProperty(out, key, {
        value: member,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

const withHome = (raw: string | undefined) =>
  ({
    metadata: { name: "x", ...(raw === undefined ? {} : { annotations: { [Annotations.home]: raw } }) },
    spec: {},
  }) as unknown as ManagedResource<unknown, unknown>;

const homeText = fc.oneof(
  fc
    .dictionary(fc.constantFrom("account", "region", "endpoint", "project", ""), fc.string())
    .map((d) => JSON.stringify(d)),
  fc.json(),
  fc.string(),
);

describe("recordedHome", () => {
  it("agrees with parsing the annotation, on first and repeated reads", () => {
    fc.assert(
      fc.property(fc.array(fc.option(homeText, { nil: undefined }), { maxLength: 6 }), (texts) => {
        for (const raw of [...texts, ...texts]) expect(recordedHome(withHome(raw))).toEqual(parsed(raw));
      }),
      { numRuns: 1_000 },
    );
  });

  it("shares one frozen Home per text", () => {
    const raw = JSON.stringify({ account: "000000000000", region: "eu-west-1" });
    const a = recordedHome(withHome(raw));
    expect(recordedHome(withHome(raw))).toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
  });
});
