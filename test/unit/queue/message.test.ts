import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidMessageError } from "../../../shared/queue/errors.ts";
import {
  decodeMessage,
  encodeMessage,
  MAX_KEY_LENGTH,
  MAX_MESSAGE_BYTES,
  makeMessage,
  messageKey,
  REASONS,
  type ReconcileMessage,
} from "../../../shared/queue/message.ts";
import { aMessage } from "./factories.ts";

// SQS MessageGroupId / MessageDeduplicationId: alphanumerics and punctuation, at most 128 characters.
const SQS_GROUP_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

function decodeError(body: string): string {
  const result = decodeMessage(body);
  if (result.ok) throw new Error("expected the body to be rejected");
  return result.error;
}

describe("message contract v1", () => {
  it("round-trips a message through encode and decode", () => {
    const message = aMessage({ uid: "6f1c9a7e-2b1d-4c43-9d8e-0a4b6f1c2d3e", id: "corr-1" });

    const decoded = decodeMessage(encodeMessage(message));

    expect(decoded).toEqual({ ok: true, message });
  });

  it("encodes fields in a fixed order and omits absent optional fields", () => {
    const { namespace: _, ...rest } = aMessage();

    expect(encodeMessage({ ...rest, id: "c-1", uid: "u-1" })).toBe(
      '{"v":1,"apiVersion":"sqs.aws.driftless.dev/v1alpha1","kind":"Queue","name":"orders","uid":"u-1","reason":"watch","at":"2025-01-02T03:04:05.678Z","id":"c-1"}',
    );
    expect(encodeMessage({ ...aMessage(), uid: undefined })).toBe(
      '{"v":1,"apiVersion":"sqs.aws.driftless.dev/v1alpha1","kind":"Queue","namespace":"team-a","name":"orders","reason":"watch","at":"2025-01-02T03:04:05.678Z"}',
    );
  });

  it("tolerates and drops unknown fields", () => {
    const body = JSON.stringify({ ...aMessage(), future: { nested: true } });

    const decoded = decodeMessage(body);

    expect(decoded).toEqual({ ok: true, message: aMessage() });
  });

  it.each([
    ["not JSON", "{nope", "body is not JSON"],
    ["a JSON array", "[1]", "body is not a JSON object"],
    ["JSON null", "null", "body is not a JSON object"],
    ["another version", JSON.stringify({ ...aMessage(), v: 2 }), "unsupported message version (2)"],
    [
      "no version",
      JSON.stringify({ ...aMessage(), v: undefined }),
      "unsupported message version (undefined)",
    ],
    ["a string version", JSON.stringify({ ...aMessage(), v: "1" }), "unsupported message version (string)"],
    ["no name", JSON.stringify({ ...aMessage(), name: undefined }), "name:"],
    [
      "an upper-case name",
      JSON.stringify(aMessage({ name: "Orders" })),
      "name: must be a DNS-1123 subdomain",
    ],
    [
      "a namespace with dots",
      JSON.stringify(aMessage({ namespace: "a.b" })),
      "namespace: must be a DNS-1123 label",
    ],
    ["a kind with a space", JSON.stringify(aMessage({ kind: "My Queue" })), "kind:"],
    ["a bad apiVersion", JSON.stringify(aMessage({ apiVersion: "Sqs/v1" })), "apiVersion:"],
    ["an unknown reason", JSON.stringify({ ...aMessage(), reason: "whim" }), "reason:"],
    ["a time without zone", JSON.stringify(aMessage({ at: "2025-01-02T03:04:05" })), "at:"],
    ["a number where a string belongs", JSON.stringify({ ...aMessage(), uid: 7 }), "uid:"],
  ])("rejects %s", (_label, body, expected) => {
    expect(decodeError(body)).toContain(expected);
  });

  it(`rejects bodies larger than ${MAX_MESSAGE_BYTES} bytes before parsing`, () => {
    const padded = JSON.stringify({ ...aMessage(), pad: "x".repeat(MAX_MESSAGE_BYTES) });
    // Multi-byte characters: short in UTF-16 units, over the limit in UTF-8 bytes.
    const wide = JSON.stringify({ ...aMessage(), pad: "é".repeat(MAX_MESSAGE_BYTES / 2) });

    expect(decodeError(padded)).toContain(`larger than ${MAX_MESSAGE_BYTES} bytes`);
    expect(wide.length).toBeLessThan(MAX_MESSAGE_BYTES + 500);
    expect(decodeError(wide)).toContain(`larger than ${MAX_MESSAGE_BYTES} bytes`);
  });

  it("never echoes the offending value in an error", () => {
    const error = decodeError(JSON.stringify(aMessage({ name: "SECRET-VALUE" })));

    expect(error).not.toContain("SECRET-VALUE");
  });

  it("refuses to encode an invalid message", () => {
    expect(() => encodeMessage(aMessage({ name: "" }))).toThrow(InvalidMessageError);
  });

  it("builds messages from an object reference", () => {
    const at = new Date("2025-05-06T07:08:09Z");

    const message = makeMessage(
      { apiVersion: "s3.aws.driftless.dev/v1alpha1", kind: "Bucket", namespace: "", name: "logs" },
      "drift",
      { at },
    );

    expect(message).toEqual({
      v: 1,
      apiVersion: "s3.aws.driftless.dev/v1alpha1",
      kind: "Bucket",
      name: "logs",
      reason: "drift",
      at: "2025-05-06T07:08:09.000Z",
    });
  });
});

describe("messageKey", () => {
  it("is Kind.group/namespace/name, without the version", () => {
    expect(messageKey(aMessage())).toBe("Queue.sqs.aws.driftless.dev/team-a/orders");
    expect(messageKey(aMessage({ apiVersion: "sqs.aws.driftless.dev/v1" }))).toBe(messageKey(aMessage()));
  });

  it("marks cluster-scoped objects and core kinds unambiguously", () => {
    expect(messageKey({ ...aMessage(), namespace: undefined })).toBe("Queue.sqs.aws.driftless.dev/_/orders");
    expect(messageKey(aMessage({ apiVersion: "v1", kind: "Secret" }))).toBe("Secret/team-a/orders");
  });

  it("hashes long keys into 128 characters that SQS accepts", () => {
    const long = aMessage({ name: `${"a".repeat(200)}.example` });
    const other = aMessage({ name: `${"a".repeat(200)}.exampl3` });

    const key = messageKey(long);

    expect(key).toHaveLength(MAX_KEY_LENGTH);
    expect(key).toMatch(SQS_GROUP_ID);
    expect(key.startsWith("Queue.sqs.aws.driftless.dev/team-a/aaaa")).toBe(true);
    expect(messageKey(other)).not.toBe(key);
  });
});

// Generators for valid v1 messages.
const alnum = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789");
const label = fc
  .array(fc.oneof({ weight: 5, arbitrary: alnum }, { weight: 1, arbitrary: fc.constant("-") }), {
    minLength: 1,
    maxLength: 40,
  })
  .map((chars) => chars.join(""))
  .filter((s) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s));
const subdomain = fc
  .array(label, { minLength: 1, maxLength: 6 })
  .map((labels) => labels.join("."))
  .filter((s) => s.length <= 253);
const kind = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,40}$/);
const version = fc.stringMatching(/^v[1-9](alpha[1-9]|beta[1-9])?$/);
const validMessage: fc.Arbitrary<ReconcileMessage> = fc
  .record(
    {
      group: fc.option(subdomain, { nil: undefined }),
      version,
      kind,
      namespace: fc.option(label, { nil: undefined }),
      name: subdomain,
      uid: fc.option(fc.uuid(), { nil: undefined }),
      reason: fc.constantFrom(...REASONS),
      at: fc.date({ min: new Date("2000-01-01"), max: new Date("2999-12-31"), noInvalidDate: true }),
    },
    { requiredKeys: ["version", "kind", "name", "reason", "at"] },
  )
  .map((r) => {
    const m: ReconcileMessage = {
      v: 1,
      apiVersion: r.group === undefined ? r.version : `${r.group}/${r.version}`,
      kind: r.kind,
      name: r.name,
      reason: r.reason,
      at: r.at.toISOString(),
    };
    if (r.namespace !== undefined) m.namespace = r.namespace;
    if (r.uid !== undefined) m.uid = r.uid;
    return m;
  });

describe("message contract properties", () => {
  it("decodeMessage never throws on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (body) => {
        const result = decodeMessage(body);
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 1_000 },
    );
  });

  it("decodeMessage never throws on arbitrary JSON, and accepts only valid v1 shapes", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 4 }), (body) => {
        const result = decodeMessage(body);
        if (result.ok) expect(decodeMessage(encodeMessage(result.message))).toEqual(result);
      }),
      { numRuns: 2_000 },
    );
  });

  it("decodeMessage never throws on near-miss objects (valid message with one field replaced)", () => {
    const field = fc.constantFrom(
      "v",
      "apiVersion",
      "kind",
      "namespace",
      "name",
      "uid",
      "reason",
      "at",
      "id",
    );
    fc.assert(
      fc.property(validMessage, field, fc.jsonValue(), (message, key, value) => {
        const result = decodeMessage(JSON.stringify({ ...message, [key]: value }));
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 2_000 },
    );
  });

  it("valid messages round-trip and get a stable SQS-compatible key", () => {
    fc.assert(
      fc.property(validMessage, (message) => {
        const decoded = decodeMessage(encodeMessage(message));
        expect(decoded).toEqual({ ok: true, message });
        expect(messageKey(message)).toMatch(SQS_GROUP_ID);
        const group = message.apiVersion.slice(0, message.apiVersion.lastIndexOf("/") + 1);
        expect(messageKey({ ...message, apiVersion: `${group}v9` })).toBe(messageKey(message));
      }),
      { numRuns: 1_000 },
    );
  });
});
