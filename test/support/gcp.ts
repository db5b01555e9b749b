import { generateKeyPairSync, randomBytes } from "node:crypto";
import { PubSub } from "@google-cloud/pubsub";
import { Storage } from "@google-cloud/storage";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { ensureNamespace } from "./aws.ts";
import { env } from "./env.ts";

export const gcpProject = () => env("GCP_PROJECT_ID");
let emulatorHost: string | undefined;
/** Read once: a suite may then remove PUBSUB_EMULATOR_HOST to prove only the ProviderConfig's endpoint is used. */
export const pubsubEmulatorHost = () => {
  emulatorHost ??= env("PUBSUB_EMULATOR_HOST");
  return emulatorHost;
};
export const gcsEndpoint = () => env("GCS_ENDPOINT");

/**
 * A syntactically valid service-account key with a fresh RSA key: the SDKs accept and sign with it.
 * The emulator and the GCS fake never check it (they take no credentials at all).
 */
export function serviceAccountKey(opts: { project?: string; email?: string } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const project = opts.project ?? gcpProject();
  const email = opts.email ?? `driftless-test@${project}.iam.gserviceaccount.com`;
  const json = JSON.stringify({
    type: "service_account",
    project_id: project,
    private_key_id: randomBytes(20).toString("hex"),
    private_key: privateKey,
    client_email: email,
    client_id: String(BigInt(`0x${randomBytes(8).toString("hex")}`)),
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: "https://oauth2.googleapis.com/token",
  });
  return { json, privateKey, publicKey, email };
}

/** The base64 body of a PEM key: what must never appear in logs or status. */
export const pemBody = (pem: string) =>
  pem
    .split("\n")
    .filter((l) => l && !l.startsWith("-----"))
    .join("");

export interface GcpProviderConfigOptions {
  /** Secret text (a service-account key JSON) or "InjectedIdentity"; default a fresh valid key in a Secret. */
  credentials?: string | "InjectedIdentity";
  secretKey?: string;
  /** Another project than the stack's (the emulator and fakes keep resources per project). */
  projectId?: string;
  /** Merged over the stack's emulators and fakes (Pub/Sub, Cloud Storage, Cloud SQL, Compute, Service Networking). */
  endpoint?: {
    pubsub?: string;
    storage?: string;
    sql?: string;
    compute?: string;
    serviceNetworking?: string;
    /** The generated kinds' APIs (`{api}` filled): a generic fake. */
    apis?: string;
    /** Cloud Asset Inventory (`driftless orphans`). */
    cloudAsset?: string;
  };
}

/** Every GCP API at the local stack's emulator or fake. */
export const stackGcpEndpoints = () => ({
  pubsub: pubsubEmulatorHost(),
  storage: gcsEndpoint(),
  sql: env("GCP_SQL_ENDPOINT"),
  compute: env("GCP_COMPUTE_ENDPOINT"),
  serviceNetworking: env("GCP_SERVICE_NETWORKING_ENDPOINT"),
});

/** A GCP ProviderConfig pointing at the Pub/Sub emulator and the GCS fake, the way users configure one. */
export async function createGcpProviderConfig(kube: Kube, name: string, opts: GcpProviderConfigOptions = {}) {
  await ensureNamespace(kube, "driftless-system");
  const secretName = `${name}-gcp-creds`;
  const injected = opts.credentials === "InjectedIdentity";
  if (!injected) {
    await kube.deleteSecret("driftless-system", secretName);
    await kube.createSecret({
      metadata: { name: secretName, namespace: "driftless-system" },
      stringData: { credentials: opts.credentials ?? serviceAccountKey().json },
    });
  }
  await kube.delete(providerConfigs.gcp.type, name);
  await kube.create(providerConfigs.gcp.type, {
    apiVersion: `${providerConfigs.gcp.type.group}/${providerConfigs.gcp.type.version}`,
    kind: "ProviderConfig",
    metadata: { name },
    spec: {
      projectID: opts.projectId ?? gcpProject(),
      credentials: injected
        ? { source: "InjectedIdentity" }
        : {
            source: "Secret",
            secretRef: {
              namespace: "driftless-system",
              name: secretName,
              key: opts.secretKey ?? "credentials",
            },
          },
      endpoint: { ...stackGcpEndpoints(), ...opts.endpoint },
    },
  });
}

/** A Pub/Sub client straight at the emulator, for arranging and checking cloud state behind driftless's back. */
export const emulatorPubSub = () =>
  new PubSub({ apiEndpoint: pubsubEmulatorHost(), projectId: gcpProject() });
/** A Storage client straight at the GCS fake. */
export const fakeStorage = () => new Storage({ apiEndpoint: gcsEndpoint(), projectId: gcpProject() });

/** The GCS fake's request counters. */
export async function gcsStats(): Promise<{ requests: Record<string, number>; total: number }> {
  const res = await fetch(`${gcsEndpoint()}/__fake/stats`);
  return (await res.json()) as { requests: Record<string, number>; total: number };
}

/** The emulator's (or fake's) error code of a failed SDK call, or "ok". */
export async function codeOf(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return (err as { code?: number }).code ?? String(err);
  }
}
