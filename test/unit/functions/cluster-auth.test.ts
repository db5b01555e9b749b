// Reaching the cluster from a function: the EKS token format (aws-iam-authenticator's), token caching,
// exec-plugin replacement and the order in which access is looked up. A real EKS or GKE is not reachable
// here; the token is checked by decoding it back and re-deriving its signature.
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import type https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  cachedTokenSource,
  EKS_TOKEN_LIFETIME_MS,
  EKS_TOKEN_PREFIX,
  eksToken,
  execReplacement,
  loadClusterAccess,
  replaceExecUsers,
  stsHostFor,
  tokenEndpoint,
} from "../../../shared/kube/cluster-auth.ts";
import type { ClusterEndpoint } from "../../../shared/kube/http.ts";
import { parseKubeconfig } from "../../../shared/kube/kubeconfig.ts";

/** The presigned URL inside an EKS token (the token is not a secret by itself). */
function decodeEksToken(token: string): URL {
  if (!token.startsWith(EKS_TOKEN_PREFIX)) throw new Error("not an EKS token (missing k8s-aws-v1. prefix)");
  return new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), "base64url").toString("utf8"));
}

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session/token+with=chars",
};
const SIGNED_AT = new Date("2025-03-04T05:06:07Z");

/** The Authorization header an endpoint puts on a request. */
async function authorizationOf(endpoint: ClusterEndpoint): Promise<string | undefined> {
  const value = (await endpoint.prepare()).headers.Authorization;
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Recomputes a SigV4 query signature independently of the signer under test. */
function expectedSignature(url: URL, clusterName: string): string {
  const params = [...url.searchParams.entries()]
    .filter(([k]) => k !== "X-Amz-Signature")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonicalQuery = params.map(([k, v]) => `${enc(k)}=${enc(v)}`).join("&");
  const canonicalRequest = [
    "GET",
    "/",
    canonicalQuery,
    `host:${url.host}\nx-k8s-aws-id:${clusterName}\n`,
    "host;x-k8s-aws-id",
    createHash("sha256").update("").digest("hex"),
  ].join("\n");
  const date = url.searchParams.get("X-Amz-Date") ?? "";
  const scope = `${date.slice(0, 8)}/us-west-2/sts/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    date,
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex"),
  ].join("\n");
  let key: Buffer = createHmac("sha256", `AWS4${CREDENTIALS.secretAccessKey}`)
    .update(date.slice(0, 8))
    .digest();
  for (const part of ["us-west-2", "sts", "aws4_request"])
    key = createHmac("sha256", key).update(part).digest();
  return createHmac("sha256", key).update(stringToSign).digest("hex");
}

describe("EKS token", () => {
  it("is k8s-aws-v1. + unpadded base64url of a presigned GetCallerIdentity URL bound to the cluster", async () => {
    const { token, expiresAt } = await eksToken({
      clusterName: "prod-cluster",
      region: "us-west-2",
      credentials: CREDENTIALS,
      now: SIGNED_AT,
    });

    expect(token.startsWith(EKS_TOKEN_PREFIX)).toBe(true);
    const encoded = token.slice(EKS_TOKEN_PREFIX.length);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
    const url = decodeEksToken(token);
    expect(url.protocol).toBe("https:");
    expect(url.host).toBe("sts.us-west-2.amazonaws.com");
    expect(url.pathname).toBe("/");
    const q = url.searchParams;
    expect(q.get("Action")).toBe("GetCallerIdentity");
    expect(q.get("Version")).toBe("2011-06-15");
    expect(q.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(q.get("X-Amz-Expires")).toBe("60");
    expect(q.get("X-Amz-Date")).toBe("20250304T050607Z");
    expect(q.get("X-Amz-Credential")).toBe("AKIDEXAMPLE/20250304/us-west-2/sts/aws4_request");
    expect(q.get("X-Amz-SignedHeaders")).toBe("host;x-k8s-aws-id");
    expect(q.get("X-Amz-Security-Token")).toBe(CREDENTIALS.sessionToken);
    // The cluster name is a signed header, never a query parameter (the server adds the header itself).
    expect(url.search).not.toContain("prod-cluster");
    expect(q.get("X-Amz-Signature")).toBe(expectedSignature(url, "prod-cluster"));
    expect(expiresAt.getTime() - SIGNED_AT.getTime()).toBe(EKS_TOKEN_LIFETIME_MS);
  });

  it("signs for another cluster differently and takes credentials from a provider", async () => {
    const a = await eksToken({
      clusterName: "a",
      region: "us-west-2",
      credentials: CREDENTIALS,
      now: SIGNED_AT,
    });
    const b = await eksToken({
      clusterName: "b",
      region: "us-west-2",
      credentials: async () => CREDENTIALS,
      now: SIGNED_AT,
    });
    expect(decodeEksToken(a.token).searchParams.get("X-Amz-Signature")).not.toBe(
      decodeEksToken(b.token).searchParams.get("X-Amz-Signature"),
    );
    expect(decodeEksToken(b.token).searchParams.get("X-Amz-Signature")).toBe(
      expectedSignature(decodeEksToken(b.token), "b"),
    );
  });

  it("uses the .cn STS host in China regions", () => {
    expect(stsHostFor("cn-north-1")).toBe("sts.cn-north-1.amazonaws.com.cn");
    expect(stsHostFor("eu-west-1")).toBe("sts.eu-west-1.amazonaws.com");
  });
});

describe("cachedTokenSource", () => {
  it("reuses a token until shortly before it expires, and refreshes once for concurrent callers", async () => {
    let now = 0;
    let fetches = 0;
    const source = cachedTokenSource(
      async () => {
        fetches++;
        await new Promise((r) => setTimeout(r, 5));
        return { token: `t${fetches}`, expiresAt: new Date(now + 14 * 60_000) };
      },
      { now: () => now },
    );
    expect(await Promise.all([source(), source(), source()])).toEqual(["t1", "t1", "t1"]);
    now = 12 * 60_000;
    expect(await source()).toBe("t1");
    now = 13 * 60_000 + 1; // within the one-minute refresh margin
    expect(await source()).toBe("t2");
    expect(fetches).toBe(2);
  });

  it("does not cache a failed fetch", async () => {
    let calls = 0;
    const source = cachedTokenSource(async () => {
      calls++;
      if (calls === 1) throw new Error("sts unreachable");
      return { token: "ok", expiresAt: new Date(Date.now() + 60 * 60_000) };
    });
    await expect(source()).rejects.toThrow("sts unreachable");
    expect(await source()).toBe("ok");
  });
});

describe("token endpoints", () => {
  it("adds a fresh bearer token to every request, for API clients and watches alike", async () => {
    let n = 0;
    const endpoint = tokenEndpoint({
      server: "https://example.invalid:6443",
      source: async () => `token-${++n}`,
    });
    expect(await authorizationOf(endpoint)).toBe("Bearer token-1");
    expect(await authorizationOf(endpoint)).toBe("Bearer token-2");
    expect(endpoint.server).toBe("https://example.invalid:6443");
  });

  it("trusts the given CA and says which cluster's token failed", async () => {
    const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const caData = Buffer.from(ca).toString("base64");
    const ok = tokenEndpoint({ server: "https://eks.invalid", caData, source: async () => "t" });
    const { agent } = await ok.prepare();
    expect(String((agent as https.Agent).options.ca)).toBe(ca);

    const failing = tokenEndpoint({
      server: "https://eks.invalid",
      caData,
      name: "prod",
      source: async () => {
        throw new Error("sts unreachable");
      },
    });
    await expect(failing.prepare()).rejects.toThrow('cannot get a bearer token for cluster "prod"');
  });

  it("refuses a plain-http server", () => {
    expect(() => tokenEndpoint({ server: "http://eks.invalid", source: async () => "t" })).toThrow(
      /plain http/,
    );
  });
});

describe("exec plugins a function cannot run", () => {
  it("recognises the EKS and GKE ones", () => {
    const user = (command: string, args: string[]) => ({ exec: { command, args } });
    expect(
      execReplacement(user("aws", ["--region", "eu-west-1", "eks", "get-token", "--cluster-name", "c1"])),
    ).toEqual({
      cloud: "eks",
      clusterName: "c1",
      region: "eu-west-1",
    });
    expect(execReplacement(user("/usr/local/bin/aws-iam-authenticator", ["token", "-i", "c2"]))).toEqual({
      cloud: "eks",
      clusterName: "c2",
    });
    expect(execReplacement(user("gke-gcloud-auth-plugin", []))).toEqual({ cloud: "gke" });
    expect(execReplacement(user("kubelogin", ["get-token"]))).toBeUndefined();
    expect(execReplacement({})).toBeUndefined();
  });

  it("gives those users built-in tokens and leaves the others alone", async () => {
    const kc = parseKubeconfig(
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: "https://eks.example.invalid" } }],
        users: [
          {
            name: "eks-user",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1beta1",
                command: "aws",
                args: ["eks", "get-token", "--cluster-name", "prod", "--region", "us-west-2"],
              },
            },
          },
          { name: "static", user: { token: "abc" } },
          { name: "other-plugin", user: { exec: { command: "kubelogin", args: ["get-token"] } } },
        ],
        contexts: [{ name: "ctx", context: { cluster: "c", user: "eks-user" } }],
        "current-context": "ctx",
      }),
    );
    const asked: Array<[string, string | undefined]> = [];
    const { kubeconfig, replaced } = replaceExecUsers(kc, {
      eks: (clusterName, region) => {
        asked.push([clusterName, region]);
        return async () => "eks-token";
      },
    });
    expect(replaced).toEqual(["eks-user"]);
    expect(asked).toEqual([["prod", "us-west-2"]]);
    const user = (name: string) => kubeconfig.users.find((u) => u.name === name);
    expect(user("eks-user")?.exec).toBeUndefined();
    expect(await user("eks-user")?.tokenSource?.()).toBe("eks-token");
    expect(user("static")?.token).toBe("abc");
    expect(user("other-plugin")?.exec?.command).toBe("kubelogin");
    expect(kc.users.find((u) => u.name === "eks-user")?.exec?.command).toBe("aws"); // input untouched

    const access = await loadClusterAccess({
      kubeconfigYaml: JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://eks.example.invalid" } }],
        users: [
          {
            name: "eks-user",
            user: { exec: { command: "aws", args: ["eks", "get-token", "--cluster-name", "prod"] } },
          },
        ],
        contexts: [{ name: "ctx", context: { cluster: "c", user: "eks-user" } }],
        "current-context": "ctx",
      }),
      tokens: { eks: () => async () => "eks-token" },
    });
    expect(access.replacedUsers).toEqual(["eks-user"]);
    expect(await authorizationOf(access.endpoint)).toBe("Bearer eks-token");
  });

  it("keeps a user's token over its plugin, as client-go does", () => {
    const kc = parseKubeconfig(
      JSON.stringify({
        users: [{ name: "u", user: { token: "t", exec: { command: "gke-gcloud-auth-plugin" } } }],
      }),
    );
    const { replaced } = replaceExecUsers(kc, { gke: () => async () => "gke" });
    expect(replaced).toEqual([]);
  });
});

describe("loadClusterAccess", () => {
  const yaml = (server: string) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    });

  it("prefers an inline kubeconfig, then a secret, then EKS, then GKE, then a file, then the default chain", async () => {
    const read: string[] = [];
    const readSecret = async (id: string) => {
      read.push(id);
      return yaml("https://from-secret.invalid");
    };
    const eks = { clusterName: "c", endpoint: "https://eks.invalid" };
    const gke = { endpoint: "https://gke.invalid" };
    const tokens = { eks: () => async () => "tok", gke: () => async () => "gke-tok" };
    const dir = mkdtempSync(path.join(tmpdir(), "cluster-auth-"));
    const file = path.join(dir, "config");
    writeFileSync(file, yaml("https://from-file.invalid"));
    const defaults = { env: { KUBECONFIG: file }, homeDir: dir, serviceAccountDir: dir };

    const inline = await loadClusterAccess({
      kubeconfigYaml: yaml("https://inline.invalid"),
      kubeconfigSecret: "arn:aws:secretsmanager:us-east-1:1:secret:k",
      readSecret,
      eks,
      tokens,
    });
    expect(inline.source).toBe("yaml");
    expect(inline.endpoint.server).toBe("https://inline.invalid");
    expect(await authorizationOf(inline.endpoint)).toBe("Bearer t");
    expect(read).toEqual([]);

    const secret = await loadClusterAccess({ kubeconfigSecret: "k", readSecret, eks, tokens });
    expect(secret.source).toBe("secret");
    expect(secret.endpoint.server).toBe("https://from-secret.invalid");
    expect(read).toEqual(["k"]);

    const viaEks = await loadClusterAccess({ eks, gke, kubeconfigPath: file, tokens });
    expect(viaEks.source).toBe("eks");
    expect(viaEks.endpoint.server).toBe("https://eks.invalid");
    expect(await authorizationOf(viaEks.endpoint)).toBe("Bearer tok");

    const viaGke = await loadClusterAccess({ gke, kubeconfigPath: file, tokens });
    expect(viaGke.source).toBe("gke");
    expect(await authorizationOf(viaGke.endpoint)).toBe("Bearer gke-tok");

    const viaFile = await loadClusterAccess({ kubeconfigPath: file, tokens });
    expect(viaFile.source).toBe("file");
    expect(viaFile.endpoint.server).toBe("https://from-file.invalid");

    const viaDefault = await loadClusterAccess({ tokens, defaults });
    expect(viaDefault.source).toBe("default");
    expect(viaDefault.endpoint.server).toBe("https://from-file.invalid");
  });

  it("says which step failed without echoing the secret", async () => {
    await expect(
      loadClusterAccess({
        kubeconfigSecret: "k",
        readSecret: async () => {
          throw new Error("AccessDenied");
        },
      }),
    ).rejects.toThrow("cannot read the kubeconfig secret");
    await expect(loadClusterAccess({ kubeconfigSecret: "k" })).rejects.toThrow("cannot read it");
    await expect(
      loadClusterAccess({ eks: { clusterName: "c", endpoint: "https://e.invalid" } }),
    ).rejects.toThrow("cannot make EKS tokens");
    await expect(loadClusterAccess({ gke: { endpoint: "https://g.invalid" } })).rejects.toThrow(
      "cannot make GKE tokens",
    );
    const broken = "users:\n- name: u\n  user:\n    token: s3cr3t-token\n   bad: [\n";
    const err = await loadClusterAccess({ kubeconfigSecret: "k", readSecret: async () => broken }).catch(
      (e: Error) => e,
    );
    expect(String(err)).toMatch(/kubeconfig from the secret is not valid YAML \(line \d+/);
    expect(String(err)).not.toContain("s3cr3t");
  });

  it("ends the default chain with an error that says what to set", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "cluster-auth-"));
    await expect(
      loadClusterAccess({ defaults: { env: {}, homeDir: empty, serviceAccountDir: empty } }),
    ).rejects.toThrow("no Kubernetes cluster configured: set KUBECONFIG or run in a cluster");
  });
});
