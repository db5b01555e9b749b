// The local stack: real servers on 127.0.0.1 — etcd + kube-apiserver (+ kube-controller-manager for
// garbage collection), moto (AWS), Google's Pub/Sub emulator, Azurite, and the project's own ARM, Google
// and Cloud Control fakes (with a Cloud Asset fake indexing the Google ones). `up()` starts what is not already running and writes `.stack/env.json`; `down()` stops only
// the PIDs recorded there. Used by `npm run stack:up|down`, `npm start` and the test global setup.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureTls } from "./tls.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const STACK_DIR = process.env.DRIFTLESS_STACK_DIR ?? join(REPO_ROOT, ".stack");
const CACHE_DIR = process.env.DRIFTLESS_CACHE ?? join(homedir(), ".cache", "driftless");
const BIN_DIR = join(CACHE_DIR, "bin");
const PUBSUB_EMULATOR =
  process.env.PUBSUB_EMULATOR_BIN ??
  "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator";
// Azurite's documented well-known development account.
const AZURITE_ACCOUNT = "devstoreaccount1";
const AZURITE_KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const port = (name: string, fallback: number) => Number(process.env[`DRIFTLESS_PORT_${name}`] ?? fallback);
export const PORTS = {
  etcd: port("ETCD", 12379),
  etcdPeer: port("ETCD_PEER", 12380),
  kube: port("KUBE", 16443),
  moto: port("MOTO", 15000),
  pubsub: port("PUBSUB", 18085),
  azurite: port("AZURITE", 10000),
  arm: port("ARM", 18443),
  gcs: port("GCS", 14443),
  gcpSql: port("GCP_SQL", 14480),
  gcpCompute: port("GCP_COMPUTE", 14481),
  gcpServiceNetworking: port("GCP_SERVICE_NETWORKING", 14482),
  cloudControl: port("CLOUDCONTROL", 14490),
  // Beside the Compute fake's port unless set: each worktree's stack keeps its own.
  gcpApis: port("GCP_APIS", port("GCP_COMPUTE", 14481) + 3),
  gcpCloudAsset: port("GCP_CLOUDASSET", port("GCP_COMPUTE", 14481) + 4),
};

export type StackEnv = Record<string, string>;
interface ProcessRecord {
  name: string;
  pid: number;
}
interface StackState {
  processes: ProcessRecord[];
  /** Extra API servers tests start and stop themselves: stopped by down(), never part of the health check. */
  extras?: ProcessRecord[];
  env: StackEnv;
}

const log = (msg: string) => process.stderr.write(`[stack] ${msg}\n`);
const stateFile = () => join(STACK_DIR, "state.json");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readState(): StackState | undefined {
  try {
    return JSON.parse(readFileSync(stateFile(), "utf8")) as StackState;
  } catch {
    return undefined;
  }
}

function portOpen(p: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ host: "127.0.0.1", port: p });
    s.once("connect", () => {
      s.destroy();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

async function waitFor(name: string, check: () => Promise<boolean>, pid: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    if (!isAlive(pid))
      throw new Error(`${name} exited during start-up; see ${join(STACK_DIR, "logs", `${name}.log`)}`);
    await sleep(150);
  }
  throw new Error(`${name} not ready after ${timeoutMs} ms; see ${join(STACK_DIR, "logs", `${name}.log`)}`);
}

function startProcess(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): ProcessRecord {
  const logDir = join(STACK_DIR, "logs");
  mkdirSync(logDir, { recursive: true });
  const out = openSync(join(logDir, `${name}.log`), "a");
  // Own process group, so stopping a server also stops the JVM or node it launched — and nothing else.
  const child = spawn(cmd, args, {
    detached: true,
    stdio: ["ignore", out, out],
    env: { ...process.env, ...env },
  });
  child.unref();
  if (child.pid === undefined) throw new Error(`cannot start ${name} (${cmd})`);
  return { name, pid: child.pid };
}

function ensureKubeBinaries() {
  const need = ["kube-apiserver", "kube-controller-manager", "etcd"].filter(
    (b) => !existsSync(join(BIN_DIR, b)),
  );
  if (need.length === 0) return;
  log(`building ${need.join(", ")} from Debian sources (once; 6–11 min) …`);
  const r = spawnSync("bash", [join(REPO_ROOT, "infra/local/build-kube.sh")], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("building the local kube-apiserver failed (see the step named above)");
}

async function httpOk(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
  return res.ok;
}

/**
 * moto loads a service's backend on the first request to it: seconds of Python imports for EC2 and RDS
 * (2.4 s of CPU each, measured), which the first reconciles of the AWS kinds would otherwise wait for. One
 * read-only call per service the hand-written AWS kinds use (nothing is created); moto checks no signature,
 * it only reads the service from the credential scope.
 */
async function warmMoto(endpoint: string): Promise<void> {
  const scope = (service: string) =>
    `AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/${service}/aws4_request, SignedHeaders=host, Signature=0`;
  const query = (service: string, body: string) => ({
    method: "POST",
    headers: { authorization: scope(service), "content-type": "application/x-www-form-urlencoded" },
    body,
  });
  const calls: [string, RequestInit][] = [
    ["sts", query("sts", "Action=GetCallerIdentity&Version=2011-06-15")],
    ["ec2", query("ec2", "Action=DescribeVpcs&Version=2016-11-15")],
    ["rds", query("rds", "Action=DescribeDBInstances&Version=2014-10-31")],
    ["sqs", query("sqs", "Action=ListQueues&Version=2012-11-05")],
    ["s3", { headers: { authorization: scope("s3") } }],
  ];
  // One at a time: moto answers one request at a time, and the imports are CPU either way.
  for (const [service, init] of calls) {
    const res = await fetch(`${endpoint}/`, { ...init, signal: AbortSignal.timeout(120_000) });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`moto did not answer ${service}'s warm-up call: HTTP ${res.status}`);
  }
}

async function kubeReady(token: string, caFile: string, kubePort = PORTS.kube): Promise<boolean> {
  // fetch cannot take a CA per request; use node:https for the self-signed serving cert.
  const https = await import("node:https");
  return new Promise((res) => {
    const req = https.get(
      `https://127.0.0.1:${kubePort}/readyz`,
      { ca: readFileSync(caFile), headers: { authorization: `Bearer ${token}` }, timeout: 2000 },
      (r) => {
        r.resume();
        res(r.statusCode === 200);
      },
    );
    req.on("error", () => res(false));
    req.on("timeout", () => {
      req.destroy();
      res(false);
    });
  });
}

/** The stack's CA, serving cert and service-account key pair (made once, reused while valid). */
async function stackTls() {
  mkdirSync(STACK_DIR, { recursive: true });
  const tlsDir = join(STACK_DIR, "tls");
  const tls = await ensureTls(tlsDir);
  const saKey = join(tlsDir, "sa.key");
  const saPub = join(tlsDir, "sa.pub");
  if (!existsSync(saPub)) {
    spawnSync("openssl", ["genrsa", "-out", saKey, "2048"], { stdio: "ignore" });
    spawnSync("openssl", ["rsa", "-in", saKey, "-pubout", "-out", saPub], { stdio: "ignore" });
  }
  return { tls, saKey };
}

async function stackHealthy(state: StackState): Promise<boolean> {
  if (!state.processes.every((p) => isAlive(p.pid))) return false;
  const ca = state.env.DRIFTLESS_CA_FILE ?? "";
  const token = state.env.DRIFTLESS_KUBE_TOKEN ?? "";
  return (await kubeReady(token, ca)) && (await portOpen(PORTS.moto)) && (await portOpen(PORTS.pubsub));
}

/**
 * Starts the stack (or reuses a healthy one). Returns its env and whether this call started it. With
 * `early`, it returns as soon as the kube-apiserver answers: `clouds` resolves once the emulators and fakes
 * answer too (and rejects, with the stack stopped, if one does not), so a caller can install CRDs and start
 * `driftless run` while they come up. Without it, `clouds` has already resolved.
 */
export async function up(
  opts: { early?: boolean } = {},
): Promise<{ env: StackEnv; started: boolean; clouds: Promise<void> }> {
  const existing = readState();
  if (existing && (await stackHealthy(existing))) {
    log("stack already up — reusing it");
    return { env: existing.env, started: false, clouds: Promise.resolve() };
  }
  if (existing) await down();

  const busy: string[] = [];
  for (const [name, p] of Object.entries(PORTS)) if (await portOpen(p)) busy.push(`${name}:${p}`);
  if (busy.length > 0) {
    throw new Error(
      `ports already in use by something this stack did not start: ${busy.join(", ")}. ` +
        "Stop it, or choose other ports with DRIFTLESS_PORT_<NAME>=… (e.g. DRIFTLESS_PORT_KUBE).",
    );
  }

  ensureKubeBinaries();
  const { tls, saKey } = await stackTls();
  const token = randomBytes(24).toString("hex");
  const tokenFile = join(STACK_DIR, "tokens.csv");
  writeFileSync(tokenFile, `${token},driftless-admin,driftless-admin,"system:masters"\n`, { mode: 0o600 });
  const kubeconfig = join(STACK_DIR, "kubeconfig");
  writeFileSync(kubeconfig, kubeconfigYaml(`https://127.0.0.1:${PORTS.kube}`, tls.caCert, token), {
    mode: 0o600,
  });

  const procs: ProcessRecord[] = [];
  const state: StackState = { processes: procs, env: {} };
  const save = () => writeFileSync(stateFile(), JSON.stringify(state, null, 2));
  state.env = {
    KUBECONFIG: kubeconfig,
    DRIFTLESS_KUBE_SERVER: `https://127.0.0.1:${PORTS.kube}`,
    DRIFTLESS_KUBE_TOKEN: token,
    DRIFTLESS_CA_FILE: tls.caCert,
    NODE_EXTRA_CA_CERTS: tls.caCert,
    AWS_ENDPOINT_URL: `http://127.0.0.1:${PORTS.moto}`,
    AWS_CLOUDCONTROL_ENDPOINT: `http://127.0.0.1:${PORTS.cloudControl}`,
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "testing",
    AWS_SECRET_ACCESS_KEY: "testing",
    PUBSUB_EMULATOR_HOST: `127.0.0.1:${PORTS.pubsub}`,
    GCP_PROJECT_ID: "driftless-local",
    GCS_ENDPOINT: `http://127.0.0.1:${PORTS.gcs}`,
    GCP_SQL_ENDPOINT: `http://127.0.0.1:${PORTS.gcpSql}`,
    GCP_COMPUTE_ENDPOINT: `http://127.0.0.1:${PORTS.gcpCompute}`,
    GCP_SERVICE_NETWORKING_ENDPOINT: `http://127.0.0.1:${PORTS.gcpServiceNetworking}`,
    GCP_APIS_ENDPOINT: `http://127.0.0.1:${PORTS.gcpApis}/{api}`,
    GCP_CLOUDASSET_ENDPOINT: `http://127.0.0.1:${PORTS.gcpCloudAsset}`,
    AZURE_ARM_ENDPOINT: `https://127.0.0.1:${PORTS.arm}`,
    AZURE_SUBSCRIPTION_ID: "00000000-0000-0000-0000-00000000d1f7",
    AZURE_TENANT_ID: "00000000-0000-0000-0000-0000000a2be5",
    AZURITE_BLOB_ENDPOINT: `http://127.0.0.1:${PORTS.azurite}/${AZURITE_ACCOUNT}`,
    AZURITE_ACCOUNT_NAME: AZURITE_ACCOUNT,
    AZURITE_ACCOUNT_KEY: AZURITE_KEY,
  };
  const t0 = Date.now();
  /** The emulators and fakes answering (a rejection has stopped the stack). */
  let clouds: Promise<void> = Promise.resolve();
  try {
    // etcd keeps its data in memory-backed /dev/shm: fast, and gone with the stack.
    const etcdData = `/dev/shm/driftless-etcd-${PORTS.etcd}`;
    rmSync(etcdData, { recursive: true, force: true });
    const etcd = startProcess("etcd", join(BIN_DIR, "etcd"), etcdArgs(etcdData, PORTS.etcd, PORTS.etcdPeer));
    procs.push(etcd);
    const moto = startProcess("moto", "moto_server", ["-H", "127.0.0.1", "-p", String(PORTS.moto)]);
    procs.push(moto);
    const pubsub = startProcess("pubsub", PUBSUB_EMULATOR, [`--host=127.0.0.1`, `--port=${PORTS.pubsub}`]);
    procs.push(pubsub);
    const azurite = startProcess("azurite", join(REPO_ROOT, "node_modules/.bin/azurite-blob"), [
      "--blobHost",
      "127.0.0.1",
      "--blobPort",
      String(PORTS.azurite),
      "--skipApiVersionCheck",
      "--disableTelemetry",
      "--inMemoryPersistence",
    ]);
    procs.push(azurite);
    const nodeBin = process.execPath;
    const arm = startProcess("arm-fake", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/arm-fake.ts"),
      "--port",
      String(PORTS.arm),
      "--cert",
      tls.serverCert,
      "--key",
      tls.serverKey,
    ]);
    procs.push(arm);
    const gcs = startProcess("gcs-fake", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/gcs-fake.ts"),
      "--port",
      String(PORTS.gcs),
    ]);
    procs.push(gcs);
    // Cloud SQL Admin, Compute and Service Networking wire fakes, wired together (test/support).
    const gcpSql = startProcess("gcp-sql-fakes", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/gcp-private-networking-fakes.ts"),
      ...["--sql-port", String(PORTS.gcpSql), "--compute-port", String(PORTS.gcpCompute)],
      ...["--service-networking-port", String(PORTS.gcpServiceNetworking)],
    ]);
    procs.push(gcpSql);
    // AWS Cloud Control (the generated AWS kinds), validating against the generated specs; the types
    // moto's CloudFormation implements are made in moto too (infra/local/fakes/moto-stacks.ts).
    const cloudControl = startProcess("cloudcontrol-fake", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/cloudcontrol-fake.ts"),
      "--port",
      String(PORTS.cloudControl),
      "--moto",
      `http://127.0.0.1:${PORTS.moto}`,
    ]);
    procs.push(cloudControl);
    // Every generated Google Cloud kind's API (resource-oriented and Compute), validating against the generated specs.
    const gcpApis = startProcess("gcp-generic-fake", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/gcp-generic-fake.ts"),
      "--port",
      String(PORTS.gcpApis),
    ]);
    procs.push(gcpApis);
    // Cloud Asset Inventory (`driftless orphans` on Google), indexing the Google fakes above from their own state.
    const gcpCloudAsset = startProcess("gcp-cloudasset-fake", nodeBin, [
      join(REPO_ROOT, "infra/local/fakes/gcp-cloudasset-fake.ts"),
      ...["--port", String(PORTS.gcpCloudAsset)],
      ...[PORTS.gcs, PORTS.gcpSql, PORTS.gcpCompute, PORTS.gcpApis].flatMap((p) => [
        "--source",
        `http://127.0.0.1:${p}`,
      ]),
    ]);
    procs.push(gcpCloudAsset);
    save();
    // moto's service backends load beside the API server's start, not in the first reconciles.
    const motoUrl = `http://127.0.0.1:${PORTS.moto}`;
    const motoWarm = waitFor("moto", () => httpOk(`${motoUrl}/moto-api/`), moto.pid).then(() =>
      warmMoto(motoUrl),
    );
    motoWarm.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile

    await waitFor("etcd", () => httpOk(`http://127.0.0.1:${PORTS.etcd}/health`), etcd.pid);
    const apiserver = startProcess(
      "kube-apiserver",
      join(BIN_DIR, "kube-apiserver"),
      kubeApiserverArgs(PORTS.kube, join(STACK_DIR, "apiserver-certs")),
    );
    procs.push(apiserver);
    save();
    await waitFor("kube-apiserver", () => kubeReady(token, tls.caCert), apiserver.pid, 90_000);
    // Garbage collector (ownerReferences on connection Secrets), namespace deletion, ServiceAccount tokens.
    const kcm = startProcess("kube-controller-manager", join(BIN_DIR, "kube-controller-manager"), [
      `--kubeconfig=${kubeconfig}`,
      "--controllers=garbagecollector,namespace,serviceaccount,serviceaccount-token",
      `--service-account-private-key-file=${saKey}`,
      `--root-ca-file=${tls.caCert}`,
      "--leader-elect=false",
      "--port=0",
      "--secure-port=0",
      "--v=1",
    ]);
    procs.push(kcm);
    save();

    clouds = (async () => {
      await motoWarm;
      await waitFor("pubsub", () => httpOk(`http://127.0.0.1:${PORTS.pubsub}/`), pubsub.pid);
      await waitFor("azurite", () => portOpen(PORTS.azurite), azurite.pid);
      await waitFor("arm-fake", () => portOpen(PORTS.arm), arm.pid);
      await waitFor("gcs-fake", () => portOpen(PORTS.gcs), gcs.pid);
      await waitFor("gcp-sql-fakes", () => portOpen(PORTS.gcpServiceNetworking), gcpSql.pid);
      await waitFor("cloudcontrol-fake", () => portOpen(PORTS.cloudControl), cloudControl.pid);
      await waitFor("gcp-generic-fake", () => portOpen(PORTS.gcpApis), gcpApis.pid);
      await waitFor("gcp-cloudasset-fake", () => portOpen(PORTS.gcpCloudAsset), gcpCloudAsset.pid);
    })().catch(async (err: unknown) => {
      // Stopped meanwhile (Ctrl-C during start-up: `down()` removed the state): nothing left to stop.
      if (readState()) {
        save();
        await down();
      }
      throw err;
    });
    clouds.catch(() => undefined); // awaited below or by the caller
  } catch (err) {
    save();
    await down();
    throw err;
  }

  save();
  writeFileSync(
    join(STACK_DIR, "env.sh"),
    Object.entries(state.env)
      .map(([k, v]) => `export ${k}='${v}'`)
      .join("\n")
      .concat("\n"),
  );
  const seconds = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  if (!opts.early) {
    await clouds;
    log(`up in ${seconds()}`);
    return { env: state.env, started: true, clouds };
  }
  log(`kube-apiserver up in ${seconds()}; the clouds' emulators and fakes are still starting`);
  const cloudsUp = clouds.then(() => {
    log(`clouds up in ${seconds()}`);
  });
  cloudsUp.catch(() => undefined); // the caller awaits it; not an unhandled rejection meanwhile
  return { env: state.env, started: true, clouds: cloudsUp };
}

function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  return [
    `--data-dir=${dataDir}`,
    `--listen-client-urls=http://127.0.0.1:${clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
    "--log-level=warn",
  ];
}

/** Every kube-apiserver's flags here; `at` points one at another etcd and token file (a standalone cluster). */
function kubeApiserverArgs(
  securePort: number,
  certDir: string,
  at = { etcdPort: PORTS.etcd, tokenFile: join(STACK_DIR, "tokens.csv") },
): string[] {
  const tlsDir = join(STACK_DIR, "tls");
  return [
    `--etcd-servers=http://127.0.0.1:${at.etcdPort}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${securePort}`,
    "--insecure-port=0",
    `--tls-cert-file=${join(tlsDir, "server.crt")}`,
    `--tls-private-key-file=${join(tlsDir, "server.key")}`,
    `--client-ca-file=${join(tlsDir, "ca.crt")}`,
    `--token-auth-file=${at.tokenFile}`,
    "--authorization-mode=RBAC",
    `--service-account-key-file=${join(tlsDir, "sa.pub")}`,
    `--service-account-signing-key-file=${join(tlsDir, "sa.key")}`,
    "--service-account-issuer=https://kubernetes.default.svc",
    "--disable-admission-plugins=ServiceAccount",
    "--service-cluster-ip-range=10.96.0.0/24",
    "--enable-priority-and-fairness=false",
    `--cert-dir=${certDir}`,
    "--v=1",
  ];
}

/**
 * Starts one more kube-apiserver on `port`, sharing the running stack's etcd, certificates and tokens,
 * so a test can stop and restart *it* (an API server outage) without disturbing suites that use the
 * main one; with `etcdPrefix`, a separate, empty cluster. Recorded in state.json, so `down()` stops it
 * too; `stopExtraKubeApiserver` removes it.
 */
export async function startExtraKubeApiserver(
  port: number,
  opts: { etcdPrefix?: string } = {},
): Promise<{ pid: number; server: string }> {
  const state = readState();
  if (!state) throw new Error("the local stack is not up (npm run stack:up)");
  const name = `kube-apiserver-${port}`;
  // The extra server leaves the `kubernetes` Service endpoints to the main one.
  const args = [
    ...kubeApiserverArgs(port, join(STACK_DIR, `apiserver-certs-${port}`)),
    "--endpoint-reconciler-type=none",
    // Another prefix in the same etcd is another, empty cluster (a second cluster for a test).
    ...(opts.etcdPrefix ? [`--etcd-prefix=${opts.etcdPrefix}`] : []),
  ];
  const rec = startProcess(name, join(BIN_DIR, "kube-apiserver"), args);
  const fresh = readState() ?? state;
  fresh.extras = [...(fresh.extras ?? []), rec];
  writeFileSync(stateFile(), JSON.stringify(fresh, null, 2));
  const ca = state.env.DRIFTLESS_CA_FILE ?? "";
  const token = state.env.DRIFTLESS_KUBE_TOKEN ?? "";
  await waitFor(name, () => kubeReady(token, ca, port), rec.pid, 90_000);
  return { pid: rec.pid, server: `https://127.0.0.1:${port}` };
}

/**
 * Stops an API server started by startExtraKubeApiserver and forgets it: SIGTERM (graceful; SIGKILL
 * after 10 s), or SIGKILL at once to simulate a crash.
 */
export async function stopExtraKubeApiserver(
  pid: number,
  signal: "SIGTERM" | "SIGKILL" = "SIGTERM",
): Promise<void> {
  const state = readState();
  if (!state?.extras?.some((p) => p.pid === pid)) {
    throw new Error(`process ${pid} is not an extra kube-apiserver of this stack`);
  }
  await stopGroup(pid, signal);
  const fresh = readState();
  if (fresh) {
    fresh.extras = (fresh.extras ?? []).filter((p) => p.pid !== pid);
    writeFileSync(stateFile(), JSON.stringify(fresh, null, 2));
  }
}

/** Signals a process group this stack started (SIGKILL after 10 s) and resolves once its leader is gone. */
async function stopGroup(pid: number, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && isAlive(pid)) await sleep(50);
  if (isAlive(pid)) process.kill(-pid, "SIGKILL");
  while (isAlive(pid)) await sleep(50);
}

export interface StandaloneKube {
  server: string;
  kubeconfig: string;
  token: string;
  caFile: string;
  /** Process-group leaders, stopped by stopStandaloneKube. */
  pids: { etcd: number; apiserver: number };
  dir: string;
}

/**
 * Starts a fresh, empty cluster of its own — an etcd with its data in `dir` and a kube-apiserver with the
 * stack's flags — on the given ports. It shares nothing with the stack but the TLS material, is not
 * recorded in state.json and works whether the stack is up or not: the caller stops it with
 * stopStandaloneKube (the activation benchmark measures cold API servers this way).
 */
export async function startStandaloneKube(o: {
  name: string;
  dir: string;
  ports: { etcd: number; etcdPeer: number; kube: number };
}): Promise<StandaloneKube> {
  const busy: number[] = [];
  for (const p of Object.values(o.ports)) if (await portOpen(p)) busy.push(p);
  if (busy.length > 0) throw new Error(`ports already in use: ${busy.join(", ")}`);
  ensureKubeBinaries();
  const { tls } = await stackTls();
  mkdirSync(o.dir, { recursive: true });
  const token = randomBytes(24).toString("hex");
  const tokenFile = join(o.dir, "tokens.csv");
  writeFileSync(tokenFile, `${token},driftless-admin,driftless-admin,"system:masters"\n`, { mode: 0o600 });
  const server = `https://127.0.0.1:${o.ports.kube}`;
  const kubeconfig = join(o.dir, "kubeconfig");
  writeFileSync(kubeconfig, kubeconfigYaml(server, tls.caCert, token), { mode: 0o600 });
  const etcdArgv = etcdArgs(join(o.dir, "etcd"), o.ports.etcd, o.ports.etcdPeer);
  const etcd = startProcess(`${o.name}-etcd`, join(BIN_DIR, "etcd"), etcdArgv);
  const kube: StandaloneKube = {
    server,
    kubeconfig,
    token,
    caFile: tls.caCert,
    pids: { etcd: etcd.pid, apiserver: 0 },
    dir: o.dir,
  };
  try {
    await waitFor(`${o.name}-etcd`, () => httpOk(`http://127.0.0.1:${o.ports.etcd}/health`), etcd.pid);
    const args = kubeApiserverArgs(o.ports.kube, join(o.dir, "apiserver-certs"), {
      etcdPort: o.ports.etcd,
      tokenFile,
    });
    const apiserver = startProcess(`${o.name}-kube-apiserver`, join(BIN_DIR, "kube-apiserver"), args);
    kube.pids.apiserver = apiserver.pid;
    await waitFor(
      `${o.name}-kube-apiserver`,
      () => kubeReady(token, tls.caCert, o.ports.kube),
      apiserver.pid,
    );
  } catch (err) {
    await stopStandaloneKube(kube);
    throw err;
  }
  return kube;
}

/** Stops a cluster started by startStandaloneKube — by its two PIDs — and removes its directory. */
export async function stopStandaloneKube(kube: StandaloneKube): Promise<void> {
  if (kube.pids.apiserver > 0) await stopGroup(kube.pids.apiserver, "SIGTERM");
  await stopGroup(kube.pids.etcd, "SIGTERM");
  rmSync(kube.dir, { recursive: true, force: true });
}

/** Stops every process this stack recorded — by PID (its own process group), nothing else. */
export async function down(): Promise<void> {
  const state = readState();
  if (!state) return;
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  const all = [...state.processes, ...(state.extras ?? [])];
  for (const p of [...all].reverse()) signal(p.pid, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && all.some((p) => isAlive(p.pid))) await sleep(100);
  for (const p of all) if (isAlive(p.pid)) signal(p.pid, "SIGKILL");
  rmSync(`/dev/shm/driftless-etcd-${PORTS.etcd}`, { recursive: true, force: true });
  rmSync(stateFile(), { force: true });
  log(`stopped ${all.map((p) => `${p.name}(${p.pid})`).join(", ")}`);
}

function kubeconfigYaml(server: string, caFile: string, token: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: driftless-local
  cluster:
    server: ${server}
    certificate-authority: ${caFile}
users:
- name: driftless-admin
  user:
    token: ${token}
contexts:
- name: driftless-local
  context:
    cluster: driftless-local
    user: driftless-admin
current-context: driftless-local
`;
}

export function describeStack(env: StackEnv): string {
  return [
    `  kube-apiserver  ${env.DRIFTLESS_KUBE_SERVER}   (KUBECONFIG=${env.KUBECONFIG})`,
    `  moto (AWS)      ${env.AWS_ENDPOINT_URL}`,
    `  Pub/Sub emu     ${env.PUBSUB_EMULATOR_HOST}`,
    `  Azurite blob    ${env.AZURITE_BLOB_ENDPOINT}`,
    `  ARM fake        ${env.AZURE_ARM_ENDPOINT}`,
    `  GCS fake        ${env.GCS_ENDPOINT}`,
    `  Cloud Control   ${env.AWS_CLOUDCONTROL_ENDPOINT} (fake)`,
    `  Cloud SQL fakes ${env.GCP_SQL_ENDPOINT} (+ compute, service networking)`,
    `  Cloud Asset     ${env.GCP_CLOUDASSET_ENDPOINT} (fake, indexing the Google fakes)`,
    `  env file        ${join(STACK_DIR, "env.sh")}   (source it in a shell)`,
  ].join("\n");
}

if (import.meta.main) {
  const cmd = process.argv[2];
  if (cmd === "up") {
    const { env } = await up();
    process.stdout.write(`local stack is up:\n${describeStack(env)}\nstop it with: npm run stack:down\n`);
  } else if (cmd === "down") {
    await down();
  } else {
    process.stderr.write("usage: node infra/local/stack.ts up|down\n");
    process.exit(2);
  }
}
