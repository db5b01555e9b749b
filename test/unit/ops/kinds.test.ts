import { describe, expect, it } from "vitest";
import { UsageError } from "../../../shared/ops/errors.ts";
import { findKind, parseKindName } from "../../../shared/ops/kinds.ts";

const t = (kind: string, group: string, shortNames?: string[]) => ({
  kind,
  group,
  version: "v1alpha1",
  plural: `${kind.toLowerCase()}s`,
  namespaced: false,
  ...(shortNames ? { shortNames } : {}),
});
const types = [
  t("Queue", "sqs.aws.driftless.dev", ["sqsq"]),
  t("Bucket", "s3.aws.driftless.dev"),
  t("Bucket", "storage.gcp.driftless.dev"),
  t("ProviderConfig", "aws.driftless.dev"),
  t("ProviderConfig", "gcp.driftless.dev"),
];

describe("findKind", () => {
  it("finds a kind by Kind, plural or short name, in any case, with an optional group prefix", () => {
    for (const ref of ["queue", "Queue", "queues", "sqsq", "queue.sqs", "Queue.sqs.aws.driftless.dev"]) {
      expect(findKind(ref, types).group, ref).toBe("sqs.aws.driftless.dev");
    }
    expect(findKind("bucket.storage.gcp", types).group).toBe("storage.gcp.driftless.dev");
    expect(findKind("providerconfig.aws", types).group).toBe("aws.driftless.dev");
  });

  it("refuses ambiguous and unknown kinds with a usage error that lists the candidates", () => {
    expect(() => findKind("bucket", types)).toThrow(UsageError);
    expect(() => findKind("bucket", types)).toThrow(
      '"bucket" is ambiguous: Bucket.s3.aws.driftless.dev, Bucket.storage.gcp.driftless.dev — add the group',
    );
    expect(() => findKind("widget", types)).toThrow(/unknown kind "widget"; known: Queue\.sqs\.aws/);
    expect(() => findKind("queue.s3", types)).toThrow(UsageError);
  });
});

describe("parseKindName", () => {
  it("splits KIND/NAME and refuses anything else", () => {
    expect(parseKindName("queue/orders")).toEqual({ kind: "queue", name: "orders" });
    for (const bad of ["queue", "/orders", "queue/", "a/b/c"])
      expect(() => parseKindName(bad)).toThrow(UsageError);
  });
});
