// App teams hand the platform team their clusters' kubeconfigs: the loader must never run code from one
// (exec plugins, auth-provider cmd-path) nor read local files it names unless the operator opts in.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { EXIT, main } from "../../../functions/cli/main.ts";
import {
  AppClusterKubeConfig,
  loadAppClusterKubeConfig,
  parseAppClusterFlag,
} from "../../../shared/export/app-kubeconfig.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { KubeconfigError } from "../../../shared/kube/kubeconfig.ts";
import { pinAppCluster } from "../../support/app-cluster.ts";

const dir = mkdtempSync(join(tmpdir(), "driftless-app-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CA_DATA = Buffer.from("not a real CA, never used for a connection").toString("base64");
const SECRET_TOKEN = "app-team-token-0123456789";

/** Writes a one-context kubeconfig for an app cluster; returns its path. */
function kubeconfigFile(
  name: string,
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = { "certificate-authority-data": CA_DATA },
): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "app", cluster: { server: "https://127.0.0.1:1", ...cluster } }],
      users: [{ name: "app-admin", user }],
      contexts: [{ name: "app", context: { cluster: "app", user: "app-admin" } }],
      "current-context": "app",
    }),
  );
  return file;
}

const refusal = (f: () => unknown): Error => {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the kubeconfig to be refused");
};

describe("app-cluster kubeconfigs: no code runs, no local file is read without an opt-in", () => {
  it("refuses an exec plugin with a clear message, and the plugin never runs (not even on a request)", async () => {
    const marker = join(dir, "exec-ran");
    const file = kubeconfigFile("exec.kubeconfig", {
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: "/bin/sh",
        args: [
          "-c",
          `touch ${marker}; echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x"}}'`,
        ],
      },
    });
    const err = refusal(() => loadAppClusterKubeConfig(file, "alpha"));
    expect(err).toBeInstanceOf(KubeconfigError);
    expect(err.message).toMatch(/exec plugin "\/bin\/sh".*not run for app clusters/);
    expect(err.message).toContain(file);
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses an auth-provider (its cmd-path would run a command)", () => {
    const marker = join(dir, "auth-provider-ran");
    const file = kubeconfigFile("auth-provider.kubeconfig", {
      "auth-provider": { name: "gcp", config: { "cmd-path": "/bin/sh", "cmd-args": `-c "touch ${marker}"` } },
    });
    expect(refusal(() => loadAppClusterKubeConfig(file, "alpha")).message).toMatch(
      /auth-provider "gcp".*not run for app clusters/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it("refuses a tokenFile, client-certificate/client-key and certificate-authority paths unless allowed for this cluster", () => {
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, `${SECRET_TOKEN}\n`);
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown> | undefined, RegExp]> = [
      ["token-file.kubeconfig", { tokenFile }, undefined, /tokenFile/],
      ["token-file-dash.kubeconfig", { "token-file": tokenFile }, undefined, /tokenFile/],
      [
        "client-key.kubeconfig",
        { "client-certificate": "/etc/ssl/certs/x.pem", "client-key": "/root/.ssh/id_rsa" },
        undefined,
        /client-certificate, client-key/,
      ],
      [
        "ca.kubeconfig",
        { token: SECRET_TOKEN },
        { "certificate-authority": "/etc/shadow" },
        /certificate-authority/,
      ],
    ];
    for (const [name, user, cluster, field] of cases) {
      const file = kubeconfigFile(name, user, cluster);
      const err = refusal(() => loadAppClusterKubeConfig(file, "alpha"));
      expect(err).toBeInstanceOf(KubeconfigError);
      expect(err.message).toMatch(field);
      expect(err.message).toMatch(/local file.*--app-cluster-local-files alpha/);
      expect(err.message).not.toContain(SECRET_TOKEN);
    }
  });

  it("reads a tokenFile when the operator allows local files for that cluster", () => {
    const tokenFile = join(dir, "allowed-token");
    writeFileSync(tokenFile, `${SECRET_TOKEN}\n`);
    const kc = loadAppClusterKubeConfig(kubeconfigFile("allowed.kubeconfig", { tokenFile }), "alpha", {
      allowLocalFiles: true,
    });
    expect(kc.getCurrentUser()?.token).toBe(SECRET_TOKEN);
  });

  it("accepts inline credentials, and pins the name the control plane gave", () => {
    const kc = loadAppClusterKubeConfig(
      kubeconfigFile("inline.kubeconfig", { token: SECRET_TOKEN, as: "app-admin" }),
      "alpha",
    );
    expect(kc).toBeInstanceOf(AppClusterKubeConfig);
    expect(kc.appCluster).toBe("alpha");
    expect(kc.getCurrentCluster()?.server).toBe("https://127.0.0.1:1");
    expect(kc.getCurrentCluster()?.caData).toBe(CA_DATA);
    expect(kc.getCurrentUser()).toMatchObject({ token: SECRET_TOKEN, impersonateUser: "app-admin" });
    expect(kc.getCurrentUser()?.exec).toBeFalsy();
    expect(() => new Kube(kc)).not.toThrow();

    const cert = loadAppClusterKubeConfig(
      kubeconfigFile("cert.kubeconfig", { "client-certificate-data": CA_DATA, "client-key-data": CA_DATA }),
      "beta",
    );
    expect(cert.getCurrentUser()).toMatchObject({ certData: CA_DATA, keyData: CA_DATA });
  });

  it("refuses impersonation it cannot carry over (groups, uid, extra) rather than dropping it", () => {
    const file = kubeconfigFile("groups.kubeconfig", { token: SECRET_TOKEN, as: "x", "as-groups": ["g"] });
    expect(refusal(() => loadAppClusterKubeConfig(file, "alpha")).message).toMatch(/as-groups/);
  });

  it("takes the app cluster's name from the control-plane side: --app-cluster NAME=KUBECONFIG", () => {
    expect(parseAppClusterFlag("alpha=/etc/driftless/alpha.kubeconfig")).toEqual({
      name: "alpha",
      path: "/etc/driftless/alpha.kubeconfig",
    });
    expect(() => parseAppClusterFlag("/etc/driftless/alpha.kubeconfig")).toThrow(/alpha=/);
    expect(() => parseAppClusterFlag("Alpha=x")).toThrow(/lower-case/);
    expect(() => parseAppClusterFlag("alpha=")).toThrow(/kubeconfig/);
    expect(
      pinAppCluster(
        "beta",
        loadAppClusterKubeConfig(kubeconfigFile("pin.kubeconfig", { token: "t" }), "beta"),
      ).appCluster,
    ).toBe("beta");
  });

  it("driftless run refuses such a kubeconfig, and one given without a name, before starting anything", async () => {
    const marker = join(dir, "run-exec-ran");
    const file = kubeconfigFile("run-exec.kubeconfig", {
      exec: { command: "/bin/sh", args: ["-c", `touch ${marker}`] },
    });
    const run = (...args: string[]) =>
      main(["node", "driftless", "run", "--no-crds", "--no-metrics", ...args]);
    expect(await run("--app-cluster", `alpha=${file}`)).toBe(EXIT.usage);
    expect(existsSync(marker)).toBe(false);
    const inline = kubeconfigFile("run-inline.kubeconfig", { token: SECRET_TOKEN });
    expect(await run("--app-cluster", inline)).toBe(EXIT.usage);
    expect(await run("--app-cluster", `alpha=${inline}`, "--app-cluster-local-files", "beta")).toBe(
      EXIT.usage,
    );
  });
});

describe("app-cluster kubeconfigs: server and proxy-url follow the endpoint address rules", () => {
  const token = { token: SECRET_TOKEN };
  it.each([
    ["server", { server: "https://169.254.169.254" }],
    ["server", { server: "https://[fe80::1]:6443" }],
    ["server", { server: "http://metadata.google.internal", "insecure-skip-tls-verify": true }],
    ["server", { server: "https://0xa9fea9fe:443" }],
    ["proxy-url", { "proxy-url": "http://169.254.169.254:80" }],
    ["proxy-url", { "proxy-url": "http://[fd00:ec2::254]" }],
  ])("attack: a link-local or metadata %s is refused", (field, cluster) => {
    const file = kubeconfigFile(`ssrf-${JSON.stringify(cluster).replace(/\W/g, "")}.kubeconfig`, token, {
      "certificate-authority-data": CA_DATA,
      ...cluster,
    });
    const err = refusal(() => loadAppClusterKubeConfig(file, "alpha"));
    expect(err).toBeInstanceOf(KubeconfigError);
    expect(err.message).toContain(field);
    expect(err.message).toContain("link-local or metadata");
    expect(err.message).not.toContain(SECRET_TOKEN);
  });

  it.each([
    ["server", { server: "http://10.0.0.5:8080", "insecure-skip-tls-verify": true }],
    ["proxy-url", { "proxy-url": "http://proxy.corp.example:3128" }],
  ])("attack: plain http to a host that is not loopback is refused (%s)", (field, cluster) => {
    const file = kubeconfigFile(`http-${field}.kubeconfig`, token, {
      "certificate-authority-data": CA_DATA,
      ...cluster,
    });
    const err = refusal(() => loadAppClusterKubeConfig(file, "alpha"));
    expect(err.message).toContain(field);
    expect(err.message).toContain("plain http");
  });

  it("keeps local development working: plain http and a proxy on loopback", () => {
    const file = kubeconfigFile("local-http.kubeconfig", token, {
      server: "http://127.0.0.1:8080",
      "insecure-skip-tls-verify": true,
      "proxy-url": "http://localhost:3128",
    });
    expect(loadAppClusterKubeConfig(file, "alpha")).toBeInstanceOf(AppClusterKubeConfig);
  });
});
