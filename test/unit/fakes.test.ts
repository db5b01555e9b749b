// The ARM and GCS wire-protocol fakes, each run as its own process, driven by the real SDKs.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ResourceManagementClient } from "@azure/arm-resources";
import { ClientSecretCredential } from "@azure/identity";
import { Storage } from "@google-cloud/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureTls } from "../../infra/local/tls.ts";

const ROOT = join(import.meta.dirname, "../..");
const TENANT = "00000000-0000-0000-0000-0000000a2be5";
const SUB = "00000000-0000-0000-0000-00000000d1f7";
const CLIENT_ID = "driftless-test-app";
const CLIENT_SECRET = randomBytes(12).toString("hex");
const ARM_SCOPE = "https://management.azure.com/.default";
const suffix = randomBytes(4).toString("hex");

const children: ChildProcess[] = [];
let tmp = "";
let ca = "";
let armUrl = "";
let gcsUrl = "";

// Starts a fake as a child process and resolves with the URL from its `{"ready":true}` line.
function startFake(script: string, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, "infra/local/fakes", script), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not become ready`)), 20_000);
    child.once("exit", (code) => reject(new Error(`${script} exited early with ${code}`)));
    createInterface({ input: child.stdout! }).once("line", (line) => {
      clearTimeout(timer);
      const msg = JSON.parse(line) as { ready: boolean; url: string };
      if (msg.ready) resolve(msg.url);
      else reject(new Error(line));
    });
  });
}

function rawArm(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${armUrl}${path}`, { ca, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "driftless-fakes-"));
  const tls = await ensureTls(join(tmp, "tls"));
  ca = readFileSync(tls.caCert, "utf8");
  [armUrl, gcsUrl] = await Promise.all([
    startFake("arm-fake.ts", [
      "--port",
      "0",
      "--cert",
      tls.serverCert,
      "--key",
      tls.serverKey,
      "--subscription",
      SUB,
      "--client",
      `${CLIENT_ID}=${CLIENT_SECRET}`,
    ]),
    startFake("gcs-fake.ts", ["--port", "0"]),
  ]);
});

afterAll(async () => {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGTERM");
        }),
    ),
  );
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("ARM fake", () => {
  // The CA goes to the SDKs in-process through tlsOptions: no NODE_EXTRA_CA_CERTS needed.
  const credential = (secret = CLIENT_SECRET) =>
    new ClientSecretCredential(TENANT, CLIENT_ID, secret, {
      authorityHost: armUrl,
      disableInstanceDiscovery: true,
      tlsOptions: { ca },
    });
  const arm = () => new ResourceManagementClient(credential(), SUB, { endpoint: armUrl, tlsOptions: { ca } });

  it("issues tokens to ClientSecretCredential and rejects a wrong secret", async () => {
    const token = await credential().getToken(ARM_SCOPE);
    expect(token?.token).toMatch(/^\S{20,}$/);
    await expect(credential("wrong").getToken(ARM_SCOPE)).rejects.toThrow(/invalid_client|7000215/);
  });

  it("answers 401 without a token or with a token it never issued", async () => {
    const path = `/subscriptions/${SUB}/resourcegroups?api-version=2025-04-01`;
    const none = await rawArm(path);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ error: { code: "AuthenticationFailed" } });
    const forged = new ResourceManagementClient(
      { getToken: async () => ({ token: "forged", expiresOnTimestamp: Date.now() + 3_600_000 }) },
      SUB,
      { endpoint: armUrl, tlsOptions: { ca } },
    );
    await expect(forged.resourceGroups.get("anything")).rejects.toMatchObject({
      statusCode: 401,
      code: "InvalidAuthenticationToken",
    });
  });

  it("runs a resource group through create, read, update, list and a long-running delete", async () => {
    const client = arm();
    const name = `rg-fakes-${suffix}`;
    let status = "";
    const onResponse = (r: { status: number }) => {
      status = String(r.status);
    };
    const created = await client.resourceGroups.createOrUpdate(
      name,
      { location: "West Europe", tags: { team: "a" } },
      { onResponse },
    );
    expect(status).toBe("201");
    expect(created).toMatchObject({
      id: `/subscriptions/${SUB}/resourceGroups/${name}`,
      name,
      type: "Microsoft.Resources/resourceGroups",
      location: "westeurope",
      tags: { team: "a" },
      properties: { provisioningState: "Succeeded" },
    });
    await client.resourceGroups.createOrUpdate(
      name,
      { location: "westeurope", tags: { team: "a" } },
      { onResponse },
    );
    expect(status).toBe("200");

    expect((await client.resourceGroups.get(name.toUpperCase())).name).toBe(name);
    expect(await client.resourceGroups.checkExistence(name)).toEqual({ body: true });
    expect(await client.resourceGroups.checkExistence(`${name}-nope`)).toEqual({ body: false });

    const updated = await client.resourceGroups.update(name, { tags: { owner: "b" } });
    expect(updated.tags).toEqual({ owner: "b" });

    const names: string[] = [];
    for await (const g of client.resourceGroups.list()) names.push(g.name ?? "");
    expect(names).toContain(name);

    await client.resourceGroups.beginDeleteAndWait(name, { updateIntervalInMs: 10 });
    await expect(client.resourceGroups.get(name)).rejects.toMatchObject({
      statusCode: 404,
      code: "ResourceGroupNotFound",
      message: `Resource group '${name}' could not be found.`,
    });
    await expect(client.resourceGroups.delete(name)).rejects.toMatchObject({ statusCode: 404 });
  });

  it("serves provider resources under a group and deletes them with it", async () => {
    const client = arm();
    const rg = `rg-vnet-${suffix}`;
    const id = `/subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Network/virtualNetworks/vnet1`;
    const vnet = { location: "eastus", properties: { addressSpace: { addressPrefixes: ["10.0.0.0/16"] } } };
    await expect(client.resources.createOrUpdateById(id, "2024-05-01", vnet)).rejects.toMatchObject({
      statusCode: 404,
      code: "ResourceGroupNotFound",
    });
    await client.resourceGroups.createOrUpdate(rg, { location: "eastus" });
    const created = await client.resources.createOrUpdateById(id, "2024-05-01", vnet);
    expect(created).toMatchObject({ id, type: "Microsoft.Network/virtualNetworks", location: "eastus" });
    const poller = await client.resourceGroups.beginDelete(rg, { updateIntervalInMs: 10 });
    expect((await client.resourceGroups.get(rg)).properties?.provisioningState).toBe("Deleting");
    await expect(client.resources.createOrUpdateById(id, "2024-05-01", vnet)).rejects.toMatchObject({
      statusCode: 409,
      code: "ResourceGroupBeingDeleted",
    });
    await poller.pollUntilDone();
    await expect(client.resources.getById(id, "2024-05-01")).rejects.toMatchObject({ statusCode: 404 });
  });

  it("counts requests by method and resource type, and resets the counters", async () => {
    const stats = JSON.parse((await rawArm("/__fake/stats")).body) as {
      requests: Record<string, number>;
      total: number;
    };
    expect(stats.requests["PUT resourcegroups"]).toBeGreaterThanOrEqual(2);
    expect(stats.requests["GET operationresults"]).toBeGreaterThanOrEqual(2);
    expect(stats.requests["POST token"]).toBeGreaterThanOrEqual(1);
    expect(stats.total).toBeGreaterThan(10);
    await new Promise<void>((resolve, reject) =>
      request(`${armUrl}/__fake/reset`, { method: "POST", ca }, (res) => {
        res.resume();
        res.on("end", resolve);
      })
        .on("error", reject)
        .end(),
    );
    expect(JSON.parse((await rawArm("/__fake/stats")).body)).toEqual({ requests: {}, total: 0 });
  });
});

describe("GCS fake", () => {
  const storage = () => new Storage({ apiEndpoint: gcsUrl, projectId: "driftless-test" });

  it("runs a bucket through create, conflict, read, patch, list and delete", async () => {
    const gcs = storage();
    const name = `bkt-fakes-${suffix}`;
    const [bucket] = await gcs.createBucket(name, { location: "us-east1", labels: { team: "a", tier: "x" } });
    expect(bucket.metadata).toMatchObject({
      kind: "storage#bucket",
      id: name,
      name,
      metageneration: "1",
      location: "US-EAST1",
      locationType: "region",
      storageClass: "STANDARD",
      labels: { team: "a", tier: "x" },
    });
    await expect(gcs.bucket(name).create()).rejects.toMatchObject({ code: 409 });
    await expect(gcs.createBucket("Not_A_Valid!Name")).rejects.toMatchObject({ code: 400 });

    const b = gcs.bucket(name);
    const [meta] = await b.getMetadata();
    expect(meta.timeCreated).toBeTruthy();
    const [patched] = await b.setMetadata({
      labels: { tier: null, env: "dev" },
      versioning: { enabled: true },
    });
    expect(patched.labels).toEqual({ team: "a", env: "dev" });
    expect(patched.versioning).toEqual({ enabled: true });
    expect(patched.metageneration).toBe("2");
    await expect(b.setMetadata({ labels: { x: "y" } }, { ifMetagenerationMatch: 1 })).rejects.toMatchObject({
      code: 412,
    });

    const [all] = await gcs.getBuckets();
    expect(all.map((x) => x.name)).toContain(name);
    expect(await b.exists()).toEqual([true]);
    await b.delete();
    expect(await b.exists()).toEqual([false]);
    await expect(b.getMetadata()).rejects.toMatchObject({ code: 404 });
  });
});
