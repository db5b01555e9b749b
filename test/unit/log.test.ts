// The logger's second line of defence: fields whose names say "secret" are redacted by key name, at any
// depth, case-insensitively — in the merged object, in child bindings and in serialized errors.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../shared/log.ts";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ level: "debug", destination });
  return {
    logger,
    lines: () => lines,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const S = "s3cr3t-value";

describe("log redaction", () => {
  it.each([
    ["Password", { Password: S }],
    ["masterUserPassword", { masterUserPassword: S }],
    ["sasToken", { conn: { sasToken: S } }],
    ["sasUrl", { conn: { sasUrl: `https://a.blob.core.windows.net/c?sig=${S}` } }],
    ["clientSecret", { azure: { clientSecret: S } }],
    ["client_secret", { body: { client_secret: S } }],
    ["private_key", { key: { private_key: S } }],
    ["privateKey", { privateKey: S }],
    ["sessionToken", { credentials2: { sessionToken: S } }],
    ["headers.Authorization", { request: { headers: { Authorization: `Bearer ${S}` } } }],
    ["authorization (lowercase)", { req: { headers: { authorization: `Bearer ${S}` } } }],
    ["SECRETACCESSKEY", { SECRETACCESSKEY: S }],
    ["accountKey", { storage: { accountKey: S } }],
    ["token three levels down", { a: { b: { c: { token: S } } } }],
    ["password five levels down, in an array", { a: [{ b: { c: { d: { password: S } } } }] }],
    ["connectionDetails", { x: { y: { connectionDetails: { host: "h", password: S } } } }],
    ["data", { secret: { data: { k: S } } }],
  ])("redacts %s", (_what, fields) => {
    const { logger, lines } = capture();
    logger.info(fields, "event");
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).not.toContain(S);
    expect(lines()[0]).toContain("[redacted]");
  });

  it("redacts in child bindings and in errors' own properties and causes", () => {
    const { logger, lines } = capture();
    logger.child({ conn: { clientSecret: S } }).info("child");
    const cause = Object.assign(new Error("token endpoint refused"), {
      config: { headers: { Authorization: `Bearer ${S}` } },
    });
    logger.error({ err: new Error("cannot connect", { cause }) }, "failed");
    for (const l of lines()) expect(l).not.toContain(S);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toContain("token endpoint refused");
  });

  it("keeps what is not a secret: the key, reason, outcome, Secret references and names", () => {
    const { logger, records } = capture();
    logger.info(
      {
        key: "sqs.aws.driftless.dev/v1alpha1/Queue/q1",
        reason: "drift",
        outcome: "in-sync",
        durationMs: 12,
        secretRef: { namespace: "driftless-system", name: "aws-creds", key: "credentials" },
        masterPasswordSecretRef: { namespace: "ns", name: "pw", key: "password" },
      },
      "reconciled",
    );
    expect(records()[0]).toMatchObject({
      msg: "reconciled",
      level: "info",
      key: "sqs.aws.driftless.dev/v1alpha1/Queue/q1",
      reason: "drift",
      outcome: "in-sync",
      durationMs: 12,
      secretRef: { namespace: "driftless-system", name: "aws-creds", key: "credentials" },
      masterPasswordSecretRef: { namespace: "ns", name: "pw", key: "password" },
    });
  });
});
