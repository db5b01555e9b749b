// Reaching the cluster from a function: the EKS token format (aws-iam-authenticator's), token caching,
// exec-plugin replacement and the order in which access is looked up. A real EKS or GKE is not reachable
// here; the token is checked by decoding it back and re-deriving its signature.
import { createHash, createHmac } from "node:crypto";
import type https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  cachedTokenSource,
  DRIFTLESS_TOKEN_PROVIDER,
  decodeEksToken,
  EKS_TOKEN_LIFETIME_MS,
  EKS_TOKEN_PREFIX,
  eksToken,
  execReplacement,
  loadClusterAccess,
  replaceExecUsers,
  stsHostFor,
  tokenKubeConfig,
} from "../../../shared/kube/cluster-auth.ts";

const CREDENTIALS = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session/token+with=chars",
};
const SIGNED_AT = new Date("2025-03-04T05:06:07Z");

/** The Authorization header a KubeConfig puts on a request. */
async function authorizationOf(kc: KubeConfig): Promise<string | undefined> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return (opts.headers as Record<string, string> | undefined)?.Authorization;
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

describe("token users in a KubeConfig", () => {
  it("adds a fresh bearer token to every request, for API clients and watches alike", async () => {
    let n = 0;
    const kc = tokenKubeConfig({
      server: "https://example.invalid:6443",
      source: async () => `token-${++n}`,
    });
    expect(await authorizationOf(kc)).toBe("Bearer token-1");
    expect(await authorizationOf(kc)).toBe("Bearer token-2");
    expect(kc.getCurrentCluster()?.server).toBe("https://example.invalid:6443");
  });

  it("recognises exec plugins that cannot run in a function", () => {
    const user = (command: string, args: string[]) => ({ name: "u", exec: { command, args } });
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
    expect(execReplacement({ name: "u", token: "static" })).toBeUndefined();
  });

  it("rewrites those users to built-in tokens and leaves the others alone", async () => {
    const kc = new KubeConfig();
    kc.loadFromString(
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
        ],
        contexts: [{ name: "ctx", context: { cluster: "c", user: "eks-user" } }],
        "current-context": "ctx",
      }),
    );
    const asked: Array<[string, string | undefined]> = [];
    const { replaced } = replaceExecUsers(kc, {
      eks: (clusterName, region) => {
        asked.push([clusterName, region]);
        return async () => "eks-token";
      },
    });
    expect(replaced).toEqual(["eks-user"]);
    expect(asked).toEqual([["prod", "us-west-2"]]);
    expect(kc.getUser("eks-user")?.exec).toBeUndefined();
    expect(kc.getUser("eks-user")?.authProvider).toMatchObject({ name: DRIFTLESS_TOKEN_PROVIDER });
    expect(kc.getUser("static")?.token).toBe("abc");
    expect(await authorizationOf(kc)).toBe("Bearer eks-token");
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

  it("prefers an inline kubeconfig, then a secret, then EKS", async () => {
    const read: string[] = [];
    const readSecret = async (id: string) => {
      read.push(id);
      return yaml("https://from-secret.invalid");
    };
    const eks = { clusterName: "c", endpoint: "https://eks.invalid" };
    const tokens = { eks: () => async () => "tok" };

    const inline = await loadClusterAccess({
      kubeconfigYaml: yaml("https://inline.invalid"),
      kubeconfigSecret: "arn:aws:secretsmanager:us-east-1:1:secret:k",
      readSecret,
      eks,
      tokens,
    });
    expect(inline.source).toBe("yaml");
    expect(inline.kubeConfig.getCurrentCluster()?.server).toBe("https://inline.invalid");
    expect(read).toEqual([]);

    const secret = await loadClusterAccess({ kubeconfigSecret: "k", readSecret, eks, tokens });
    expect(secret.source).toBe("secret");
    expect(secret.kubeConfig.getCurrentCluster()?.server).toBe("https://from-secret.invalid");
    expect(read).toEqual(["k"]);

    const viaEks = await loadClusterAccess({ eks, tokens });
    expect(viaEks.source).toBe("eks");
    expect(await authorizationOf(viaEks.kubeConfig)).toBe("Bearer tok");
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
    await expect(
      loadClusterAccess({ eks: { clusterName: "c", endpoint: "https://e.invalid" } }),
    ).rejects.toThrow("cannot make EKS tokens");
  });
});
