// Local TLS material for the stack: one self-signed CA that signs every local serving cert
// (kube-apiserver, the ARM fake), made with the openssl CLI and reused while still valid.
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TlsFiles {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
}

export interface TlsOptions {
  /** Base name of the serving cert files (`<name>.crt`, `<name>.key`); default `server`. */
  name?: string;
  /** Extra subjectAltNames, e.g. `DNS:kubernetes.default.svc` or `IP:10.96.0.1`. */
  sans?: string[];
}

const BASE_SANS = ["IP:127.0.0.1", "DNS:localhost"];
const DAY_MS = 86_400_000;

async function openssl(args: string[]): Promise<void> {
  await run("openssl", args, { timeout: 60_000 });
}

// Serialises concurrent callers (parallel test workers) on one directory; a stale lock is broken.
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, ".lock");
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > 30_000 || Date.now() > deadline) await rm(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

function normaliseSan(san: string): string {
  const [kind, ...rest] = san.split(":");
  const value = rest.join(":");
  return kind === "IP" ? `IP Address:${value}` : `${kind}:${value}`;
}

// Valid = signed by this CA, not expiring within a day, and covering every wanted SAN.
async function certUsable(certFile: string, caFile: string | undefined, sans: string[]): Promise<boolean> {
  try {
    const cert = new X509Certificate(await readFile(certFile));
    if (Date.parse(cert.validTo) - Date.now() < DAY_MS) return false;
    if (caFile !== undefined) {
      const ca = new X509Certificate(await readFile(caFile));
      if (!cert.verify(ca.publicKey)) return false;
    }
    const have = new Set((cert.subjectAltName ?? "").split(",").map((s) => s.trim()));
    return sans.every((s) => have.has(normaliseSan(s)));
  } catch {
    return false;
  }
}

async function makeCa(caCert: string, caKey: string): Promise<void> {
  const tmpKey = `${caKey}.${process.pid}.tmp`;
  const tmpCert = `${caCert}.${process.pid}.tmp`;
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-sha256",
    "-days",
    "3650",
    "-subj",
    "/CN=driftless-local-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    tmpKey,
    "-out",
    tmpCert,
  ]);
  await chmod(tmpKey, 0o600);
  await rename(tmpKey, caKey);
  await rename(tmpCert, caCert);
}

async function makeServerCert(files: TlsFiles, name: string, sans: string[], dir: string): Promise<void> {
  const tag = `${process.pid}.tmp`;
  const csr = join(dir, `${name}.csr.${tag}`);
  const ext = join(dir, `${name}.ext.${tag}`);
  const tmpKey = `${files.serverKey}.${tag}`;
  const tmpCert = `${files.serverCert}.${tag}`;
  try {
    await openssl([
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-sha256",
      "-subj",
      `/CN=${name}`,
      "-keyout",
      tmpKey,
      "-out",
      csr,
    ]);
    await writeFile(
      ext,
      [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        "extendedKeyUsage=serverAuth,clientAuth",
        `subjectAltName=${sans.join(",")}`,
        "",
      ].join("\n"),
    );
    await openssl([
      "x509",
      "-req",
      "-sha256",
      "-in",
      csr,
      "-CA",
      files.caCert,
      "-CAkey",
      files.caKey,
      "-set_serial",
      `0x${Date.now().toString(16)}${process.pid.toString(16)}`,
      "-days",
      "825",
      "-extfile",
      ext,
      "-out",
      tmpCert,
    ]);
    await chmod(tmpKey, 0o600);
    await rename(tmpKey, files.serverKey);
    await rename(tmpCert, files.serverCert);
  } finally {
    await Promise.all([csr, ext, tmpKey, tmpCert].map((f) => rm(f, { force: true })));
  }
}

/**
 * Ensures `dir` holds a local CA (`ca.crt`/`ca.key`) and a serving cert `<name>.crt`/`<name>.key`
 * signed by it for 127.0.0.1, localhost and `sans`. Existing valid files are reused.
 */
export async function ensureTls(dir: string, opts: TlsOptions = {}): Promise<TlsFiles> {
  const name = opts.name ?? "server";
  const sans = [...new Set([...BASE_SANS, ...(opts.sans ?? [])])];
  const files: TlsFiles = {
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serverCert: join(dir, `${name}.crt`),
    serverKey: join(dir, `${name}.key`),
  };
  await mkdir(dir, { recursive: true });
  return withLock(dir, async () => {
    const caOk = existsSync(files.caKey) && (await certUsable(files.caCert, undefined, []));
    // A new CA invalidates the certs it did not sign: certUsable() below then regenerates them.
    if (!caOk) await makeCa(files.caCert, files.caKey);
    const serverOk = existsSync(files.serverKey) && (await certUsable(files.serverCert, files.caCert, sans));
    if (!serverOk) await makeServerCert(files, name, sans, dir);
    return files;
  });
}
