// The functions' kubeconfig loader. Conformance first: for each kubeconfig a function may be given, the
// endpoint sends what client-node's KubeConfig sends for the same file (headers; the TLS agent's CA,
// client certificate and key, verification and server name). Then what only we do (tokenFile rotation,
// as-groups, exec plugins replaced by built-in tokens, in-cluster, the default chain), and every refusal:
// its message must say what to change and must never carry a credential.

import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { ClusterEndpoint } from "../../../shared/kube/http.ts";
import {
  defaultEndpoint,
  endpointFromKubeconfig,
  fileTokenSource,
  inClusterEndpoint,
  KubeconfigError,
  parseKubeconfig,
  readKubeconfigFile,
  readKubeconfigFiles,
} from "../../../shared/kube/kubeconfig.ts";

// Credentials that must never appear in an error message.
const TOKEN = "tok-s3cr3t-0123456789";
const PASSWORD = "pw-s3cr3t";
const KEY_BODY = "a2V5LXMzY3IzdC1tYXRlcmlhbA==";
const pem = (kind: string, body: string) => `-----BEGIN ${kind}-----\n${body}\n-----END ${kind}-----\n`;
const CA = pem("CERTIFICATE", "Y2EtY2VydA==");
const CERT = pem("CERTIFICATE", "Y2xpZW50LWNlcnQ=");
const KEY = pem("PRIVATE KEY", KEY_BODY);
const b64 = (s: string) => Buffer.from(s).toString("base64");
const SECRETS = [TOKEN, PASSWORD, KEY_BODY, b64(KEY), b64(`admin:${PASSWORD}`)];

// ---------------------------------------------------------------------------------------------------
// Factories

type Obj = Record<string, unknown>;

/** A kubeconfig with one context `ctx` joining cluster `c` and user `u` (each field as kubectl writes it). */
function oneContext(cluster: Obj, user: Obj | undefined, extra: Obj = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Config",
    preferences: {},
    clusters: [{ name: "c", cluster: { server: "https://k8s.example.invalid:6443", ...cluster } }],
    users: user ? [{ name: "u", user }] : [],
    contexts: [{ name: "ctx", context: { cluster: "c", ...(user ? { user: "u" } : {}) } }],
    "current-context": "ctx",
    ...extra,
  };
}

/** A fresh directory with the given files; returns its path. */
function dirWith(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), "kubeconfig-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** Writes `config` as YAML into `dir` and returns the file's path. */
function writeConfig(dir: string, config: Obj, name = "config"): string {
  const file = path.join(dir, name);
  writeFileSync(file, stringify(config));
  return file;
}

/** What a request carries: the comparison both loaders are held to. */
interface Sent {
  server: string;
  headers: Record<string, string | string[]>;
  ca: unknown;
  cert: unknown;
  key: unknown;
  rejectUnauthorized: boolean;
  servername: string | undefined;
}

async function sentBy(endpoint: ClusterEndpoint): Promise<Sent> {
  const { headers, agent } = await endpoint.prepare();
  const o = (agent as https.Agent).options;
  return {
    server: endpoint.server,
    headers,
    ca: o.ca,
    cert: o.cert,
    key: o.key,
    rejectUnauthorized: o.rejectUnauthorized ?? true,
    servername: o.servername,
  };
}

async function sentByClientNode(kc: KubeConfig): Promise<Sent> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers = { ...(opts.headers as Record<string, string> | undefined) };
  // client-node leaves basic auth to node's `auth` option; we send the header it turns into.
  if (opts.auth) headers.Authorization = `Basic ${b64(opts.auth)}`;
  return {
    server: kc.getCurrentCluster()?.server ?? "",
    headers,
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    rejectUnauthorized: opts.rejectUnauthorized ?? true,
    servername: opts.servername,
  };
}

/** Runs `fn`, expects a KubeconfigError matching `message`, and checks it carries no credential. */
function refusal(fn: () => unknown, message: RegExp): KubeconfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(KubeconfigError);
  const err = caught as KubeconfigError;
  expect(err.message).toMatch(message);
  for (const secret of SECRETS) expect(err.message).not.toContain(secret);
  return err;
}

const ourEndpoint = (file: string) => endpointFromKubeconfig(readKubeconfigFile(file)).endpoint;

// ---------------------------------------------------------------------------------------------------

describe("conformance with client-node's KubeConfig", () => {
  const cases: Array<{ name: string; files?: Record<string, string>; config: (dir: string) => Obj }> = [
    {
      name: "bearer token, CA as data",
      config: () => oneContext({ "certificate-authority-data": b64(CA) }, { token: TOKEN }),
    },
    {
      name: "token file (client-node's token-file key, absolute path)",
      files: { "sa/token": TOKEN },
      config: (dir) => oneContext({}, { "token-file": path.join(dir, "sa/token") }),
    },
    {
      name: "client certificate and key as data",
      config: () =>
        oneContext(
          { "certificate-authority-data": b64(CA) },
          { "client-certificate-data": b64(CERT), "client-key-data": b64(KEY) },
        ),
    },
    {
      name: "client certificate, key and CA as files relative to the kubeconfig's directory",
      files: { "pki/ca.crt": CA, "pki/client.crt": CERT, "pki/client.key": KEY },
      config: () =>
        oneContext(
          { "certificate-authority": "pki/ca.crt" },
          { "client-certificate": "pki/client.crt", "client-key": "./pki/client.key" },
        ),
    },
    {
      name: "insecure-skip-tls-verify",
      config: () => oneContext({ "insecure-skip-tls-verify": true }, { token: TOKEN }),
    },
    {
      name: "tls-server-name",
      config: () =>
        oneContext(
          { "certificate-authority-data": b64(CA), "tls-server-name": "kubernetes.default" },
          { token: TOKEN },
        ),
    },
    {
      name: "basic auth",
      config: () => oneContext({}, { username: "admin", password: PASSWORD }),
    },
    {
      name: "impersonation (as)",
      config: () => oneContext({}, { token: TOKEN, as: "system:serviceaccount:ops:reader" }),
    },
    {
      name: "server with a path prefix and a trailing slash",
      config: () =>
        oneContext({ server: "https://rancher.example.invalid/k8s/clusters/c-1/" }, { token: TOKEN }),
    },
    {
      name: "several contexts: current-context picks cluster and user",
      config: () => ({
        clusters: [
          { name: "dev", cluster: { server: "https://dev.invalid", "insecure-skip-tls-verify": true } },
          {
            name: "prod",
            cluster: { server: "https://prod.invalid", "certificate-authority-data": b64(CA) },
          },
        ],
        users: [
          { name: "dev-admin", user: { username: "admin", password: PASSWORD } },
          { name: "prod-robot", user: { token: TOKEN } },
        ],
        contexts: [
          { name: "dev", context: { cluster: "dev", user: "dev-admin", namespace: "default" } },
          { name: "prod", context: { cluster: "prod", user: "prod-robot" } },
        ],
        "current-context": "prod",
        extensions: [{ name: "ignored", extension: { anything: 1 } }],
      }),
    },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const dir = dirWith(c.files);
      const file = writeConfig(dir, c.config(dir));
      const kc = new KubeConfig();
      kc.loadFromFile(file);

      const ours = await sentBy(ourEndpoint(file));

      expect(ours).toEqual(await sentByClientNode(kc));
    });
  }

  describe("KUBECONFIG with two files", () => {
    const saved = process.env.KUBECONFIG;
    afterEach(() => {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    });

    it("merges them; the context of the first file may use the second file's cluster and user", async () => {
      const one = dirWith({ "ca.crt": CA });
      const two = dirWith({ "client.crt": CERT, "client.key": KEY });
      const first = writeConfig(one, {
        clusters: [
          { name: "a", cluster: { server: "https://a.invalid", "certificate-authority": "ca.crt" } },
        ],
        contexts: [{ name: "a-ctx", context: { cluster: "a", user: "b-user" } }],
        "current-context": "a-ctx",
      });
      const second = writeConfig(two, {
        clusters: [{ name: "b", cluster: { server: "https://b.invalid" } }],
        users: [{ name: "b-user", user: { "client-certificate": "client.crt", "client-key": "client.key" } }],
        contexts: [{ name: "b-ctx", context: { cluster: "b", user: "b-user" } }],
        "current-context": "b-ctx",
      });
      const list = `${first}${path.delimiter}${second}`;
      process.env.KUBECONFIG = list;
      const kc = new KubeConfig();
      // `true`: keep the first file's current-context, as kubectl does (client-node's default takes the last).
      kc.loadFromDefault(undefined, true);

      const ours = await sentBy(defaultEndpoint({ env: { KUBECONFIG: list } }).endpoint);

      expect(ours).toEqual(await sentByClientNode(kc));
      expect(ours.server).toBe("https://a.invalid");
      expect(String(ours.cert)).toBe(CERT);
    });
  });
});

describe("beyond client-node", () => {
  it("reads tokenFile relative to the kubeconfig and re-reads it once it is a minute old", async () => {
    const dir = dirWith({ "tokens/robot": `${TOKEN}-1\n` });
    const file = writeConfig(dir, oneContext({}, { tokenFile: "tokens/robot" }));
    let now = 1_000_000;
    const { endpoint } = endpointFromKubeconfig(readKubeconfigFile(file), { now: () => now });
    const authorization = async () => (await endpoint.prepare()).headers.Authorization;

    expect(await authorization()).toBe(`Bearer ${TOKEN}-1`);
    writeFileSync(path.join(dir, "tokens/robot"), `${TOKEN}-2\n`);
    now += 59_000;
    expect(await authorization()).toBe(`Bearer ${TOKEN}-1`);
    now += 2_000;
    expect(await authorization()).toBe(`Bearer ${TOKEN}-2`);
  });

  it("keeps the last token while a rotated token file is briefly missing", async () => {
    const dir = dirWith({ token: TOKEN });
    let now = 0;
    const source = fileTokenSource(path.join(dir, "token"), { now: () => now });
    expect(await source()).toBe(TOKEN);
    writeFileSync(path.join(dir, "token"), "");
    now += 120_000;
    expect(await source()).toBe(TOKEN);
  });

  it("trusts the cluster's CA for a context without a user (client-node drops the cluster's TLS settings then)", async () => {
    const file = writeConfig(dirWith(), oneContext({ "certificate-authority-data": b64(CA) }, undefined));
    const sent = await sentBy(ourEndpoint(file));
    expect(sent.headers).toEqual({});
    expect(String(sent.ca)).toBe(CA);
  });

  it("sends a token over basic auth when both are set, as client-node and client-go do", async () => {
    const file = writeConfig(
      dirWith(),
      oneContext({}, { token: TOKEN, username: "admin", password: PASSWORD }),
    );
    expect((await ourEndpoint(file).prepare()).headers.Authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("impersonates a user with a uid, a group and extras", async () => {
    const file = writeConfig(
      dirWith(),
      oneContext(
        {},
        {
          token: TOKEN,
          as: "jane",
          "as-uid": "1234",
          "as-groups": ["developers"],
          "as-user-extra": { "reason/why": ["audit"] },
        },
      ),
    );
    expect((await ourEndpoint(file).prepare()).headers).toEqual({
      Authorization: `Bearer ${TOKEN}`,
      "Impersonate-User": "jane",
      "Impersonate-Uid": "1234",
      "Impersonate-Group": ["developers"],
      "Impersonate-Extra-reason%2Fwhy": ["audit"],
    });
  });

  it("replaces `aws eks get-token` and gke-gcloud-auth-plugin with the platform's tokens", async () => {
    const eks = parseKubeconfig(
      stringify(
        oneContext(
          {},
          {
            exec: {
              command: "aws",
              args: ["eks", "get-token", "--cluster-name", "prod", "--region", "eu-west-1"],
            },
          },
        ),
      ),
    );
    const asked: unknown[] = [];
    const viaEks = endpointFromKubeconfig(eks, {
      tokens: {
        eks: (name, region) => {
          asked.push([name, region]);
          return async () => "eks-token";
        },
      },
    });
    expect(viaEks.replacedUsers).toEqual(["u"]);
    expect(asked).toEqual([["prod", "eu-west-1"]]);
    expect((await viaEks.endpoint.prepare()).headers.Authorization).toBe("Bearer eks-token");

    const gke = parseKubeconfig(stringify(oneContext({}, { exec: { command: "gke-gcloud-auth-plugin" } })));
    const viaGke = endpointFromKubeconfig(gke, { tokens: { gke: () => async () => "gke-token" } });
    expect((await viaGke.endpoint.prepare()).headers.Authorization).toBe("Bearer gke-token");
  });

  it("uses a named context instead of current-context", () => {
    const kc = parseKubeconfig(
      stringify({
        clusters: [
          { name: "a", cluster: { server: "https://a.invalid" } },
          { name: "b", cluster: { server: "https://b.invalid" } },
        ],
        contexts: [
          { name: "a", context: { cluster: "a" } },
          { name: "b", context: { cluster: "b" } },
        ],
        "current-context": "a",
      }),
    );
    expect(endpointFromKubeconfig(kc, { context: "b" }).endpoint.server).toBe("https://b.invalid");
  });

  it("ignores fields it does not know and treats kubectl's empty values as unset", async () => {
    const kc = parseKubeconfig(
      stringify({
        ...oneContext(
          { "certificate-authority-data": "", extensions: [], "disable-compression": true },
          {
            token: TOKEN,
            as: "",
            "as-groups": null,
            exec: null,
            "client-key-data": "",
          },
        ),
        users: [
          { name: "u", user: { token: TOKEN, as: "", "as-groups": null, exec: null, future: { x: 1 } } },
        ],
        preferences: { colors: true },
      }),
    );
    const { endpoint } = endpointFromKubeconfig(kc);
    expect((await endpoint.prepare()).headers).toEqual({ Authorization: `Bearer ${TOKEN}` });
  });

  it("merges KUBECONFIG files first-wins by name and takes the first current-context set", () => {
    const one = writeConfig(dirWith(), {
      clusters: [{ name: "shared", cluster: { server: "https://first.invalid" } }],
      contexts: [{ name: "x", context: { cluster: "shared" } }],
    });
    const two = writeConfig(dirWith(), {
      clusters: [{ name: "shared", cluster: { server: "https://second.invalid" } }],
      contexts: [{ name: "y", context: { cluster: "shared" } }],
      "current-context": "y",
    });
    const three = writeConfig(dirWith(), { "current-context": "x" });
    const kc = readKubeconfigFiles([one, "/nonexistent/kubeconfig", two, three].join(path.delimiter));
    expect(kc.currentContext).toBe("y");
    expect(kc.clusters).toHaveLength(1);
    expect(endpointFromKubeconfig(kc).endpoint.server).toBe("https://first.invalid");
  });

  it("allows plain http when insecure-skip-tls-verify says so (client-node does too)", async () => {
    const file = writeConfig(
      dirWith(),
      oneContext({ server: "http://127.0.0.1:8080", "insecure-skip-tls-verify": true }, { token: TOKEN }),
    );
    const { agent } = await ourEndpoint(file).prepare();
    expect(agent).toBeInstanceOf(http.Agent);
    expect(agent).not.toBeInstanceOf(https.Agent);
  });
});

describe("in-cluster", () => {
  const serviceAccount = () => dirWith({ token: `${TOKEN}\n`, "ca.crt": CA, namespace: "ops" });

  it("uses the service host and port, the CA and the token, re-read once a minute", async () => {
    const dir = serviceAccount();
    let now = 0;
    const endpoint = inClusterEndpoint({
      env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
      serviceAccountDir: dir,
      now: () => now,
    });
    expect(await sentBy(endpoint)).toEqual({
      server: "https://10.96.0.1:443",
      headers: { Authorization: `Bearer ${TOKEN}` },
      ca: Buffer.from(CA),
      cert: undefined,
      key: undefined,
      rejectUnauthorized: true,
      servername: undefined,
    });
    writeFileSync(path.join(dir, "token"), "rotated");
    now += 61_000;
    expect((await endpoint.prepare()).headers.Authorization).toBe("Bearer rotated");
  });

  it("puts an IPv6 service host in brackets", () => {
    const endpoint = inClusterEndpoint({
      env: { KUBERNETES_SERVICE_HOST: "fd00:10:96::1", KUBERNETES_SERVICE_PORT: "443" },
      serviceAccountDir: serviceAccount(),
    });
    expect(endpoint.server).toBe("https://[fd00:10:96::1]:443");
  });
});

describe("the default chain (client-node's loadFromDefault order)", () => {
  const inCluster = { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" };

  it("takes KUBECONFIG first, then ~/.kube/config, then the in-cluster ServiceAccount", () => {
    const sa = dirWith({ token: TOKEN, "ca.crt": CA });
    const home = dirWith();
    mkdirSync(path.join(home, ".kube"));
    writeConfig(path.join(home, ".kube"), oneContext({ server: "https://home.invalid" }, { token: TOKEN }));
    const listed = writeConfig(dirWith(), oneContext({ server: "https://listed.invalid" }, { token: TOKEN }));
    const chain = (env: Record<string, string>, homeDir: string) =>
      defaultEndpoint({ env, homeDir, serviceAccountDir: sa }).endpoint.server;

    expect(chain({ KUBECONFIG: listed, ...inCluster }, home)).toBe("https://listed.invalid");
    expect(chain(inCluster, home)).toBe("https://home.invalid");
    expect(chain(inCluster, dirWith())).toBe("https://10.96.0.1:443");
  });

  it("says what to set when there is nothing", () => {
    const empty = dirWith();
    refusal(
      () => defaultEndpoint({ env: {}, homeDir: empty, serviceAccountDir: empty }),
      /^no Kubernetes cluster configured: set KUBECONFIG or run in a cluster\. Looked at: KUBECONFIG \(not set\); .*\/\.kube\/config \(does not exist\); the in-cluster ServiceAccount \(KUBERNETES_SERVICE_HOST is not set, .*\/token does not exist\)\. A function can also be given DRIFTLESS_KUBECONFIG_YAML/,
    );
  });
});

describe("refusals say what to change and never carry a credential", () => {
  const load =
    (config: Obj, tokens = {}) =>
    () =>
      endpointFromKubeconfig(parseKubeconfig(stringify(config)), { tokens });

  it("no current-context, or one that is not there", () => {
    refusal(
      load({ ...oneContext({}, { token: TOKEN }), "current-context": "" }),
      /no current-context.*contexts: ctx/,
    );
    refusal(
      load({ ...oneContext({}, { token: TOKEN }), "current-context": "staging" }),
      /context "staging" is not in the kubeconfig \(contexts: ctx\)/,
    );
  });

  it("a context naming a cluster or user that is not there", () => {
    const config = oneContext({}, { token: TOKEN });
    refusal(
      load({ ...config, contexts: [{ name: "ctx", context: { cluster: "gone", user: "u" } }] }),
      /context "ctx" names cluster "gone", which is not in the kubeconfig \(clusters: c\)/,
    );
    refusal(
      load({ ...config, contexts: [{ name: "ctx", context: { cluster: "c", user: "nobody" } }] }),
      /context "ctx" names user "nobody", which is not in the kubeconfig \(users: u\)/,
    );
  });

  it("an exec plugin a function cannot run, naming the command", () => {
    const err = refusal(
      load(
        oneContext({}, { exec: { command: "kubelogin", args: ["get-token", `--client-secret=${TOKEN}`] } }),
      ),
      /user "u" gets its credentials from the exec plugin "kubelogin", which cannot run in a function: use a token, a client certificate, or the DRIFTLESS_EKS_\* \/ DRIFTLESS_GKE_\* settings/,
    );
    expect(err.message).not.toContain("--client-secret");
    // An EKS plugin on a platform that cannot make EKS tokens (a Cloud Function) is refused the same way.
    refusal(
      load(oneContext({}, { exec: { command: "aws", args: ["eks", "get-token", "--cluster-name", "p"] } }), {
        gke: () => async () => "t",
      }),
      /exec plugin "aws", which cannot run in a function/,
    );
  });

  it.each([
    ["oidc", { "id-token": TOKEN, "refresh-token": TOKEN, "client-secret": PASSWORD }],
    ["gcp", { "access-token": TOKEN, "cmd-path": "/usr/bin/gcloud" }],
    ["azure", { "access-token": TOKEN, "tenant-id": "t" }],
  ])("the %s auth-provider", (name, config) => {
    refusal(
      load(oneContext({}, { "auth-provider": { name, config } })),
      new RegExp(
        `auth-provider "${name}", which is not supported in functions: use a token, a client certificate`,
      ),
    );
  });

  it("proxy-url other than http(s) (test/unit/kube/proxy.test.ts tunnels through http ones)", () => {
    refusal(
      load(oneContext({ "proxy-url": "socks5://proxy.invalid:1080" }, { token: TOKEN })),
      /cluster "c": proxy-url must be an http:\/\/ or https:\/\/ proxy \(socks5 is not supported\)/,
    );
  });

  it("plain http without insecure-skip-tls-verify, and a server that is not a URL", () => {
    refusal(
      load(oneContext({ server: `http://admin:${PASSWORD}@k8s.invalid:8080` }, { token: TOKEN })),
      /server http:\/\/k8s.invalid:8080 is plain http; use https, or set insecure-skip-tls-verify: true/,
    );
    refusal(
      load(oneContext({ server: `k8s.invalid:${TOKEN}` }, { token: TOKEN })),
      /cluster "c": server is not an http\(s\) URL \(expected https:\/\/host:port\)/,
    );
  });

  it("text that is not YAML, or not a kubeconfig, without quoting it", () => {
    refusal(
      () => parseKubeconfig(`users:\n- name: u\n  user:\n    token: ${TOKEN}\n   bad: [\n`),
      /the kubeconfig is not valid YAML \(line \d+, column \d+: [A-Z_]+\)/,
    );
    refusal(
      () =>
        parseKubeconfig(
          stringify({ clusters: [{ name: "c", cluster: {} }], users: [{ name: "u", user: { token: 42 } }] }),
        ),
      /not a valid kubeconfig: clusters\[0\]\.cluster\.server: .*; users\[0\]\.user\.token: /,
    );
  });

  it("a file that cannot be read, naming it", () => {
    refusal(
      load(oneContext({ "certificate-authority": "/nonexistent/ca.crt" }, { token: TOKEN })),
      /cluster "c": certificate-authority: cannot read \/nonexistent\/ca.crt: ENOENT/,
    );
    refusal(
      load(oneContext({}, { tokenFile: "/nonexistent/token" })),
      /tokenFile: cannot read \/nonexistent\/token: ENOENT/,
    );
    refusal(
      () => readKubeconfigFile("/nonexistent/kubeconfig"),
      /cannot read kubeconfig \/nonexistent\/kubeconfig: ENOENT/,
    );
    refusal(
      () => readKubeconfigFiles("/nonexistent/a:/nonexistent/b"),
      /no kubeconfig found: none of .* exists/,
    );
  });

  it("half a client certificate", () => {
    refusal(
      load(oneContext({}, { "client-key-data": b64(KEY) })),
      /user "u" has a client key but no client-certificate: a client certificate needs both/,
    );
  });

  it("impersonation with several groups sends one header line each; groups without a user are refused", async () => {
    const file = writeConfig(
      dirWith(),
      oneContext({}, { token: TOKEN, as: "jane", "as-groups": ["a", "b"] }),
    );
    expect((await ourEndpoint(file).prepare()).headers["Impersonate-Group"]).toEqual(["a", "b"]);
    refusal(
      load(oneContext({}, { token: TOKEN, "as-groups": ["a"] })),
      /without as: impersonation needs a user/,
    );
  });

  it("in-cluster without the service environment or the token", () => {
    refusal(
      () => inClusterEndpoint({ env: {}, serviceAccountDir: dirWith() }),
      /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/,
    );
    refusal(
      () =>
        inClusterEndpoint({
          env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
          serviceAccountDir: "/nonexistent/sa",
        }),
      /in-cluster ServiceAccount token: cannot read \/nonexistent\/sa\/token: ENOENT/,
    );
  });
});
