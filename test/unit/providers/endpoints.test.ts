// The platform's endpoint policy (shared/providers/endpoints.ts): which hosts besides each cloud's own
// an override may name, read from the environment the platform gives the process.
import { PassThroughClient } from "google-auth-library";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isLoopbackHost } from "../../../shared/api/addresses.ts";
import { CredentialsError } from "../../../shared/api/external.ts";
import type { AwsProviderConfigSpec, GcpProviderConfigSpec } from "../../../shared/api/provider-config.ts";
import { awsClientConfig } from "../../../shared/providers/aws/config.ts";
import {
  checkEndpoint,
  DEFAULT_EXTRA_HOSTS,
  ENDPOINT_HOSTS_ENV,
  type EndpointPolicy,
  endpointPolicyFromEnv,
  NO_EXTRA_HOSTS,
} from "../../../shared/providers/endpoints.ts";
import { gcpClientConfig } from "../../../shared/providers/gcp/config.ts";
import { storageApi } from "../../../shared/providers/gcp/storage-bucket.ts";

afterEach(() => vi.unstubAllEnvs());

/** The platform's settings for `policy` (`none` for an empty list), as the process environment. */
function platformSets(policy: EndpointPolicy): void {
  for (const [cloud, name] of Object.entries(ENDPOINT_HOSTS_ENV))
    vi.stubEnv(name, policy[cloud as keyof EndpointPolicy].join(",") || "none");
}

const pc = <S>(spec: S) => ({
  providerConfig: {
    apiVersion: "x/v1alpha1",
    kind: "ProviderConfig" as const,
    metadata: { name: "unit", uid: "u", generation: 1, resourceVersion: "1" },
    spec,
  },
  readSecretKey: async () => "[default]\naws_access_key_id = A\naws_secret_access_key = B\n",
});

describe("endpoint policy", () => {
  it("defaults to loopback only; an empty or `none` list allows no extra host; patterns are lowercased", () => {
    expect(endpointPolicyFromEnv({})).toEqual({
      aws: DEFAULT_EXTRA_HOSTS,
      gcp: DEFAULT_EXTRA_HOSTS,
      azure: DEFAULT_EXTRA_HOSTS,
    });
    expect(
      endpointPolicyFromEnv({
        DRIFTLESS_AWS_ENDPOINT_HOSTS: "",
        DRIFTLESS_GCP_ENDPOINT_HOSTS: "none",
        DRIFTLESS_AZURE_ENDPOINT_HOSTS: " Proxy.Corp.Example. , *.vpce.amazonaws.com,loopback",
      }),
    ).toEqual({ aws: [], gcp: [], azure: ["proxy.corp.example", "*.vpce.amazonaws.com", "loopback"] });
    expect(() => endpointPolicyFromEnv({ DRIFTLESS_AWS_ENDPOINT_HOSTS: "https://x.example/?" })).toThrow(
      /DRIFTLESS_AWS_ENDPOINT_HOSTS/,
    );
  });

  it("recognises loopback as WHATWG URL normalises it, and nothing that merely starts like it", () => {
    for (const raw of [
      "http://127.0.0.1:1",
      "http://127.1:1",
      "http://0x7f.1:1",
      "http://[::1]:1",
      "http://LOCALHOST:1",
    ])
      expect(isLoopbackHost(new URL(raw).hostname)).toBe(true);
    for (const raw of ["http://127.0.0.1.evil.example", "http://localhost.evil.example", "http://10.0.0.1"])
      expect(isLoopbackHost(new URL(raw).hostname)).toBe(false);
  });

  it("refuses loopback when the platform removed it", () => {
    expect(() => checkEndpoint("aws", "f", "http://127.0.0.1:5000", { policy: NO_EXTRA_HOSTS })).toThrow(
      CredentialsError,
    );
    expect(checkEndpoint("aws", "f", "http://127.0.0.1:5000").trust).toBe("loopback");
  });

  it("allows hosts the platform listed, exactly or by *.suffix, and still refuses look-alikes", () => {
    const policy = { ...NO_EXTRA_HOSTS, aws: ["proxy.corp.example", "*.vpce.amazonaws.com"] };
    expect(checkEndpoint("aws", "f", "https://PROXY.corp.example.:8443/", { policy })).toMatchObject({
      url: "https://proxy.corp.example:8443",
      trust: "listed",
    });
    expect(
      checkEndpoint("aws", "f", "https://vpce-1.sqs.us-east-1.vpce.amazonaws.com", { policy }).trust,
    ).toBe("listed");
    for (const raw of [
      "https://proxy.corp.example.evil.example",
      "https://evil-proxy.corp.example",
      "https://vpce.amazonaws.com",
      "https://proxy.corp.example@evil.example",
      "https://evil.example?proxy.corp.example",
    ])
      expect(() => checkEndpoint("aws", "f", raw, { policy })).toThrow(CredentialsError);
  });

  it("names the field, the host and the setting in its message", () => {
    expect(() => checkEndpoint("gcp", "spec.endpoint.storage", "https://evil.example")).toThrow(
      /spec\.endpoint\.storage: host evil\.example .*DRIFTLESS_GCP_ENDPOINT_HOSTS/,
    );
  });

  it("follows the platform's environment", async () => {
    platformSets({ ...NO_EXTRA_HOSTS, gcp: ["gcs.emulator.internal"] });
    const cfg = await gcpClientConfig(
      pc<GcpProviderConfigSpec>({
        projectID: "p",
        credentials: { source: "InjectedIdentity" },
        endpoint: { storage: "http://gcs.emulator.internal:4443" },
      }),
    );
    // A listed host that is not Google's is an emulator to the Storage client: no token.
    expect(storageApi(cfg).auth).toBeInstanceOf(PassThroughClient);
    expect(storageApi(cfg).base).toBe("http://gcs.emulator.internal:4443");
    await expect(
      gcpClientConfig(
        pc<GcpProviderConfigSpec>({
          projectID: "p",
          credentials: { source: "InjectedIdentity" },
          endpoint: { storage: "http://127.0.0.1:4443" },
        }),
      ),
    ).rejects.toBeInstanceOf(CredentialsError);
  });

  it("sends Secret credentials to a listed AWS host, but never the ambient identity", async () => {
    platformSets({ ...NO_EXTRA_HOSTS, aws: ["proxy.corp.example"] });
    const spec = (source: "Secret" | "InjectedIdentity"): AwsProviderConfigSpec => ({
      region: "us-east-1",
      credentials:
        source === "Secret" ? { source, secretRef: { namespace: "n", name: "s", key: "k" } } : { source },
      endpoint: { url: "https://proxy.corp.example" },
    });
    await expect(awsClientConfig(pc(spec("Secret")), undefined)).resolves.toMatchObject({
      endpoint: "https://proxy.corp.example",
    });
    await expect(awsClientConfig(pc(spec("InjectedIdentity")), undefined)).rejects.toThrow(
      /InjectedIdentity/,
    );
  });
});
