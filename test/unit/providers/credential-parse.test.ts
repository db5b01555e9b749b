// Credential Secrets that cannot be parsed: every cloud's parser answers with a constant message that
// names what is wrong, never a piece of the text (JSON.parse's own message quotes the characters around
// the fault), and carries no cause that would (error causes reach logs).
import { describe, expect, it } from "vitest";
import { CredentialsError } from "../../../shared/api/external.ts";
import { parseAwsCredentials } from "../../../shared/providers/aws/config.ts";
import { parseClientSecret } from "../../../shared/providers/azure/config.ts";
import { parseServiceAccountKey } from "../../../shared/providers/gcp/config.ts";

const SECRET = "Qs3cr3tV4lue";

/** Every message and name in an error's cause chain, and its own enumerable properties. */
function everythingIn(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 10; depth++) {
    const x = e as { message?: unknown; stack?: unknown; cause?: unknown };
    parts.push(String(x.message ?? ""), String(x.stack ?? ""), JSON.stringify(e));
    e = x.cause;
  }
  return parts.join("\n");
}

function thrown(parse: () => unknown): unknown {
  try {
    parse();
  } catch (e) {
    return e;
  }
  throw new Error("expected the parser to throw");
}

describe.each([
  [
    "AWS",
    parseAwsCredentials,
    [
      `{"aws_access_key_id": "AKIAUNIT", "aws_secret_access_key": ${SECRET}}`,
      `{"aws_secret_access_key": "${SECRET}"`,
      `{"aws_secret_access_key": "${SECRET}\u0001"}`,
      `["${SECRET}"]`,
      `{"aws_access_key_id": {"x": "${SECRET}"}}`,
      `[default]\naws_secret_access_key ${SECRET}\n`,
      `[profile]\naws_access_key_id = AKIA\naws_secret_access_key = ${SECRET}\n`,
    ],
  ],
  [
    "GCP",
    parseServiceAccountKey,
    [
      `{"type": "service_account", "private_key": ${SECRET}}`,
      `{"type": "${SECRET}", "client_email": "a@b", "private_key": "x"}`,
      `{"type": "service_account", "client_email": "a@b", "private_key": "${SECRET}"}`,
      `"${SECRET}"`,
    ],
  ],
  [
    "Azure",
    parseClientSecret,
    [
      `{"clientId": "x", "clientSecret": ${SECRET}}`,
      `{"clientSecret": "${SECRET}"`,
      `{"clientSecret": 1, "other": "${SECRET}"}`,
    ],
  ],
] as const)("%s credentials that cannot be parsed", (_cloud, parse, inputs) => {
  it.each(inputs)("refuses %j without quoting it, in the message or any cause", (text) => {
    const err = thrown(() => parse(text));
    expect(err).toBeInstanceOf(CredentialsError);
    expect(everythingIn(err)).not.toContain(SECRET);
    // Not even a fragment: JSON.parse quotes 10 characters around the fault.
    expect(everythingIn(err)).not.toContain(SECRET.slice(0, 6));
  });
});

describe("credential parse errors are constant", () => {
  it("gives the same message whatever the malformed JSON held", () => {
    const a = thrown(() => parseAwsCredentials(`{"aws_secret_access_key": ${SECRET}}`)) as Error;
    const b = thrown(() => parseAwsCredentials('{"aws_secret_access_key": other}')) as Error;
    expect(a.message).toBe(b.message);
  });
});
