// A connect context asks for its AWS client configuration on every call (a Queue's drift check: home,
// account and observe). It is built once per context, region and credentials' text; the Secret is still
// read on every call (the connector's TTL decides what that read costs), so a rotated key is used at once.
import { describe, expect, it } from "vitest";
import type { AwsProviderConfigSpec, ProviderConfig } from "../../../shared/api/provider-config.ts";
import { awsClientConfig } from "../../../shared/providers/aws/config.ts";

const KEY = (id: string) => `[default]\naws_access_key_id = ${id}\naws_secret_access_key = unit-secret\n`;

function context(endpoint?: string) {
  const providerConfig: ProviderConfig<AwsProviderConfigSpec> = {
    apiVersion: "aws.driftless.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: "unit", uid: "uid-unit", generation: 1, resourceVersion: "1" },
    spec: {
      region: "eu-west-1",
      credentials: { source: "Secret", secretRef: { namespace: "ns", name: "s", key: "k" } },
      ...(endpoint ? { endpoint: { url: endpoint } } : {}),
    },
  };
  const reads: string[] = [];
  let text = KEY("AKIAFIRST");
  const ctx = {
    providerConfig,
    readSecretKey: async () => {
      reads.push(text);
      return text;
    },
  };
  return { ctx, reads, rotate: (id: string) => (text = KEY(id)) };
}

describe("awsClientConfig per connect context", () => {
  it("builds one configuration per region and credentials, reading the Secret on every call", async () => {
    const { ctx, reads } = context("http://127.0.0.1:5000");
    const first = await awsClientConfig(ctx, undefined);
    const again = await awsClientConfig(ctx, "eu-west-1");
    const third = await awsClientConfig(ctx, undefined);
    expect(again).toBe(first);
    expect(third).toBe(first);
    expect(reads).toHaveLength(3);
    expect(first).toMatchObject({ region: "eu-west-1", endpoint: "http://127.0.0.1:5000" });

    const other = await awsClientConfig(ctx, "us-east-2");
    expect(other).not.toBe(first);
    expect(other.region).toBe("us-east-2");
    expect(await awsClientConfig(ctx, "us-east-2")).toBe(other);
    expect(reads).toHaveLength(5);
  });

  it("a rotated key makes a new configuration (another client) at the next call", async () => {
    const { ctx, reads, rotate } = context();
    const before = await awsClientConfig(ctx, undefined);
    rotate("AKIASECOND");
    const after = await awsClientConfig(ctx, undefined);
    expect(after).not.toBe(before);
    expect(after.cacheKey).not.toBe(before.cacheKey);
    expect(after.credentials).toMatchObject({ accessKeyId: "AKIASECOND" });
    expect(await awsClientConfig(ctx, undefined)).toBe(after);
    expect(reads).toHaveLength(3);
  });

  it("another context builds its own, and a refused region is refused on every call", async () => {
    const a = context();
    const b = context();
    const fromA = await awsClientConfig(a.ctx, undefined);
    const fromB = await awsClientConfig(b.ctx, undefined);
    expect(fromB).not.toBe(fromA);
    expect(fromB).toEqual(fromA);
    for (let n = 0; n < 2; n++)
      await expect(awsClientConfig(a.ctx, "evil.example#")).rejects.toThrow(/region/);
    expect(a.reads).toHaveLength(1);
  });
});
