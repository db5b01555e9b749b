// Endpoint overrides of a ProviderConfig decide where the platform's credentials go. A ProviderConfig
// author must not be able to point them at a host of their own: every spelling that makes a URL look
// like a cloud host while naming another one is refused, and the ambient identity never leaves the
// cloud's own hosts. Loopback stays allowed by default (the local stack's emulators and fakes).
import { generateKeyPairSync } from "node:crypto";
import { GoogleAuth, JWT, PassThroughClient } from "google-auth-library";
import { describe, expect, it } from "vitest";
import { CredentialsError } from "../../../shared/api/external.ts";
import type {
  AwsProviderConfigSpec,
  AzureProviderConfigSpec,
  GcpProviderConfigSpec,
  ProviderConfig,
} from "../../../shared/api/provider-config.ts";
import { awsClientConfig } from "../../../shared/providers/aws/config.ts";
import { armRest } from "../../../shared/providers/azure/arm-rest.ts";
import { azureCredential, blobService } from "../../../shared/providers/azure/config.ts";
import { checkEndpoint } from "../../../shared/providers/endpoints.ts";
import { gcpClientConfig, isGoogleEndpoint } from "../../../shared/providers/gcp/config.ts";
import { pubsubApi } from "../../../shared/providers/gcp/pubsub-api.ts";
import { storageApi } from "../../../shared/providers/gcp/storage-bucket.ts";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const GCP_KEY = JSON.stringify({
  type: "service_account",
  client_email: "sa@p.iam.gserviceaccount.com",
  private_key: privateKey,
});
const AWS_KEY = "[default]\naws_access_key_id = AKIAUNIT\naws_secret_access_key = unit-secret\n";
const AZURE_SECRET = "unit-client-secret";

const SECRET_REF = { namespace: "ns", name: "s", key: "k" };

function ctxOf<S>(group: string, spec: S, secret: string) {
  const providerConfig: ProviderConfig<S> = {
    apiVersion: `${group}/v1alpha1`,
    kind: "ProviderConfig",
    metadata: { name: "unit", uid: `uid-${Math.random()}`, generation: 1, resourceVersion: "1" },
    spec,
  };
  return { providerConfig, readSecretKey: async () => secret };
}

type Source = "Secret" | "InjectedIdentity";
const credentialsOf = (source: Source) =>
  source === "Secret" ? { source, secretRef: SECRET_REF } : { source };

const gcp = (endpoint: GcpProviderConfigSpec["endpoint"], source: Source = "Secret") =>
  ctxOf<GcpProviderConfigSpec>(
    "gcp.driftless.dev",
    { projectID: "p", credentials: credentialsOf(source), ...(endpoint ? { endpoint } : {}) },
    GCP_KEY,
  );
const aws = (url: string | undefined, source: Source = "Secret") =>
  ctxOf<AwsProviderConfigSpec>(
    "aws.driftless.dev",
    { region: "us-east-1", credentials: credentialsOf(source), ...(url ? { endpoint: { url } } : {}) },
    AWS_KEY,
  );
const azure = (
  endpoint: AzureProviderConfigSpec["endpoint"],
  source: Source = "Secret",
  storage: AzureProviderConfigSpec["storage"] = { accountName: "unitaccount" },
) =>
  ctxOf<AzureProviderConfigSpec>(
    "azure.driftless.dev",
    {
      tenantID: "00000000-0000-0000-0000-000000000001",
      subscriptionID: "00000000-0000-0000-0000-000000000002",
      clientID: "00000000-0000-0000-0000-000000000003",
      credentials: credentialsOf(source),
      ...(endpoint ? { endpoint } : {}),
      storage,
    },
    AZURE_SECRET,
  );

/** URLs that look like (or contain) a cloud host but name evil.example, or reach Google over plain http. */
const bypasses = (cloudHost: string) => [
  `https://evil.example?.${cloudHost}`,
  `https://evil.example#.${cloudHost}`,
  `https://evil.example\\.${cloudHost}`,
  `https://evil.example\\@${cloudHost}`,
  `https://${cloudHost}@evil.example`,
  `https://${cloudHost}:443@evil.example/`,
  `https://EVIL.EXAMPLE?.${cloudHost.toUpperCase()}`,
  `https://${cloudHost}.evil.example`,
  `https://${cloudHost}.evil.example.`,
  `https://evil.example./.${cloudHost}`,
  `https://evil.example%2f.${cloudHost}`,
  `https://evil.example\t.${cloudHost}`,
  "https://evil.example",
  "https://10.0.0.1",
];

describe("GCP endpoint overrides", () => {
  it.each(bypasses("googleapis.com"))(
    "refuses storage endpoint %j before any token is attached",
    async (url) => {
      await expect(gcpClientConfig(gcp({ storage: url }))).rejects.toBeInstanceOf(CredentialsError);
      await expect(gcpClientConfig(gcp({ storage: url }, "InjectedIdentity"))).rejects.toBeInstanceOf(
        CredentialsError,
      );
      expect(isGoogleEndpoint(url)).toBe(false);
    },
  );

  it.each([
    "evil.example?.googleapis.com:443",
    "evil.example#.googleapis.com:443",
    "pubsub.googleapis.com@evil.example:443",
    "evil.example\\.googleapis.com:443",
    "pubsub.googleapis.com.evil.example:443",
    "https://evil.example?.pubsub.googleapis.com",
  ])("refuses Pub/Sub endpoint %j", async (host) => {
    await expect(gcpClientConfig(gcp({ pubsub: host }))).rejects.toBeInstanceOf(CredentialsError);
  });

  it("refuses Google's hosts over plain http", async () => {
    await expect(gcpClientConfig(gcp({ storage: "http://storage.googleapis.com" }))).rejects.toThrow(/https/);
  });

  it("sends the key only to Google's own hosts, compared case-insensitively and without a trailing dot", async () => {
    for (const url of [
      "https://STORAGE.GOOGLEAPIS.COM",
      "https://storage.googleapis.com.",
      "https://storage.europe-west3.rep.googleapis.com/",
    ]) {
      const normalised = url.toLowerCase().replace(/\.$/, "").replace(/\/$/, "");
      const s = storageApi(await gcpClientConfig(gcp({ storage: url })));
      expect(s.auth).toBeInstanceOf(JWT);
      expect(s.base).toBe(normalised);
      const ambient = storageApi(await gcpClientConfig(gcp({ storage: url }, "InjectedIdentity")));
      expect(ambient.auth).toBeInstanceOf(GoogleAuth);
      expect(ambient.base).toBe(normalised);
    }
  });

  it("keeps the local stack's emulators working, without credentials, even for the ambient identity", async () => {
    for (const source of ["Secret", "InjectedIdentity"] as const) {
      const cfg = await gcpClientConfig(
        gcp({ storage: "http://127.0.0.1:4443", pubsub: "127.0.0.1:8085" }, source),
      );
      const s = storageApi(cfg);
      expect(s.base).toBe("http://127.0.0.1:4443");
      expect(s.auth).toBeInstanceOf(PassThroughClient);
      const ps = pubsubApi(cfg);
      expect(ps.base).toBe("http://127.0.0.1:8085");
      expect(ps.auth).toBeInstanceOf(PassThroughClient);
    }
  });

  it("tells Pub/Sub's Google hosts (HTTPS, credentials) from an emulator by the parsed host", async () => {
    const prod = pubsubApi(await gcpClientConfig(gcp({ pubsub: "PUBSUB.googleapis.com:443" })));
    expect(prod.base).toBe("https://pubsub.googleapis.com:443");
    expect(prod.auth).toBeInstanceOf(JWT);
    const ambient = pubsubApi(
      await gcpClientConfig(gcp({ pubsub: "pubsub.googleapis.com." }, "InjectedIdentity")),
    );
    expect(ambient.base).toBe("https://pubsub.googleapis.com");
    expect(ambient.auth).toBeInstanceOf(GoogleAuth);
  });
});

describe("Azure endpoint overrides", () => {
  it.each(bypasses("login.microsoftonline.com"))(
    "refuses authorityHost %j: the client secret would be posted there",
    async (url) => {
      await expect(azureCredential(azure({ authorityHost: url }))).rejects.toBeInstanceOf(CredentialsError);
      await expect(azureCredential(azure({ authorityHost: url }, "InjectedIdentity"))).rejects.toBeInstanceOf(
        CredentialsError,
      );
    },
  );

  it.each(bypasses("management.azure.com"))("refuses resourceManager %j", async (url) => {
    await expect(armRest(azure({ resourceManager: url }))).rejects.toBeInstanceOf(CredentialsError);
  });

  it.each(bypasses("unitaccount.blob.core.windows.net"))(
    "refuses blob %j: a storage bearer token would be sent there",
    async (url) => {
      await expect(blobService(azure({ blob: url }))).rejects.toBeInstanceOf(CredentialsError);
    },
  );

  it("refuses an account name that is not a host label (it becomes the Blob host)", async () => {
    for (const accountName of ["evil.example#", "x@evil.example/", "UNIT"])
      await expect(blobService(azure(undefined, "Secret", { accountName }))).rejects.toBeInstanceOf(
        CredentialsError,
      );
  });

  it("never sends the ambient identity to a loopback fake", async () => {
    const local = "https://127.0.0.1:8443";
    await expect(azureCredential(azure({ authorityHost: local }, "InjectedIdentity"))).rejects.toThrow(
      /InjectedIdentity/,
    );
    await expect(armRest(azure({ resourceManager: local }, "InjectedIdentity"))).rejects.toThrow(
      /InjectedIdentity/,
    );
    await expect(
      blobService(azure({ blob: "http://127.0.0.1:10000/acct" }, "InjectedIdentity")),
    ).rejects.toThrow(/InjectedIdentity/);
  });

  it("keeps Azure's own hosts and the local stack (ARM fake, Azurite) working", async () => {
    await expect(
      azureCredential(azure({ authorityHost: "https://login.microsoftonline.us" }, "InjectedIdentity")),
    ).resolves.toBeDefined();
    await expect(
      armRest(azure({ resourceManager: "https://127.0.0.1:8443/", authorityHost: "https://127.0.0.1:8443" })),
    ).resolves.toBeDefined();
    const keyed = await blobService(
      azure({ blob: "http://127.0.0.1:10000/devstoreaccount1/" }, "InjectedIdentity", {
        accountName: "devstoreaccount1",
        accountKeySecretRef: SECRET_REF,
      }),
    );
    expect(keyed.url).toBe("http://127.0.0.1:10000/devstoreaccount1");
    const byDefault = await blobService(azure(undefined, "InjectedIdentity"));
    expect(byDefault.url).toBe("https://unitaccount.blob.core.windows.net");
  });
});

describe("AWS endpoint overrides", () => {
  it.each(bypasses("sqs.us-east-1.amazonaws.com"))("refuses endpoint.url %j", async (url) => {
    await expect(awsClientConfig(aws(url), undefined)).rejects.toBeInstanceOf(CredentialsError);
  });

  it("never signs with the ambient identity for an endpoint override", async () => {
    await expect(
      awsClientConfig(aws("http://127.0.0.1:5000", "InjectedIdentity"), undefined),
    ).rejects.toThrow(/InjectedIdentity/);
    await expect(awsClientConfig(aws(undefined, "InjectedIdentity"), undefined)).resolves.toMatchObject({
      region: "us-east-1",
    });
  });

  it("keeps moto on loopback working with Secret credentials, and hands the SDK the normalised URL", async () => {
    const cfg = await awsClientConfig(aws("http://127.0.0.1:5000/"), undefined);
    expect(cfg.endpoint).toBe("http://127.0.0.1:5000");
  });

  it("refuses a region that is not a region (it becomes part of the SDK's host names)", async () => {
    await expect(awsClientConfig(aws(undefined), "evil.example#")).rejects.toThrow(/region/);
  });
});

describe("link-local and metadata addresses", () => {
  const listedEverything = {
    aws: ["*.internal", "169.254.169.254", "[fd00:ec2::254]", "100.100.100.200"],
    gcp: [],
    azure: [],
  };
  it.each([
    "http://169.254.169.254",
    "http://0xa9fea9fe",
    "http://169.254.170.2:80",
    "http://[fd00:ec2::254]",
    "http://[::ffff:169.254.169.254]",
    "http://metadata.google.internal",
    "http://100.100.100.200",
  ])("attack: %s is refused even when the platform lists it", (raw) => {
    expect(() => checkEndpoint("aws", "spec.endpoint.url", raw, { policy: listedEverything })).toThrow(
      /link-local or metadata/,
    );
  });
});
