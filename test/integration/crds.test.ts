import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { CustomObjectsApi } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { Bucket } from "../../shared/api/aws/s3.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { allCrds } from "../../shared/crds.ts";
import { KubeError } from "../../shared/kube/client.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { ensureCrds } from "../support/aws.ts";
import { kubeConfig, newKube, uniqueName } from "../support/env.ts";
import { getTable } from "../support/table.ts";

const ROOT = join(import.meta.dirname, "../..");
const kube = newKube();
const kc = kubeConfig();
const crdsApi = kc.makeApiClient(CustomObjectsApi);

interface StoredCrd {
  metadata: { name: string };
  spec: {
    versions: Array<{ name: string; additionalPrinterColumns?: Array<{ name: string }>; schema: unknown }>;
  };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Reads a CRD back exactly as the server stores it (untyped, so no client model renames fields). */
const readCrd = async (name: string) =>
  (await crdsApi.getClusterCustomObject({
    group: "apiextensions.k8s.io",
    version: "v1",
    plural: "customresourcedefinitions",
    name,
  })) as StoredCrd;

/** What `kubectl get <kind> <name>` asks for: the server renders the printer columns as a Table. */
const getAsTable = (def: ManagedKindDef, name: string) =>
  getTable(kc, `/apis/${def.group}/${def.version}/${def.plural}/${name}`);

const managed = (name: string, spec: Record<string, unknown>, def: ManagedKindDef = Queue) => ({
  apiVersion: def.apiVersion,
  kind: def.kind,
  metadata: { name },
  spec,
});

/** Creates an object the server should refuse; returns the server's error. */
async function rejected(
  obj: { metadata: { name: string } },
  def: ManagedKindDef = Queue,
): Promise<KubeError> {
  const err = await kube.create(def, obj).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the API server accepted an invalid object").toBeInstanceOf(KubeError);
  return err as KubeError;
}

beforeAll(async () => {
  await ensureCrds();
});

describe("generated CRDs on the real API server", () => {
  it("are all accepted, established and stored unchanged (no field pruned by the server)", async () => {
    for (const crd of allCrds()) {
      const stored = await readCrd(crd.metadata.name);
      expect(stored.status?.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Established", status: "True" })]),
      );
      expect(stored.spec.versions[0]?.schema).toEqual(crd.spec.versions[0]?.schema);
    }
  });

  it("give every managed kind the READY, SYNCED, EXTERNAL-NAME and AGE columns", async () => {
    for (const k of managedKinds) {
      const stored = await readCrd(`${k.definition.plural}.${k.definition.group}`);
      expect(stored.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name)).toEqual([
        "READY",
        "SYNCED",
        "EXTERNAL-NAME",
        "AGE",
      ]);
    }
    for (const pc of Object.values(providerConfigs)) {
      const stored = await readCrd(`${pc.type.plural}.${pc.type.group}`);
      expect(stored.spec.versions[0]?.additionalPrinterColumns?.map((c) => c.name)).toEqual([
        "READY",
        "USERS",
        "SOURCE",
        "AGE",
      ]);
    }
  });

  it("print the conditions and the external name the way kubectl get shows them", async () => {
    for (const def of [Queue, Bucket]) {
      const name = uniqueName(`crd-cols-${def.kind.toLowerCase()}`);
      await kube.create(def, {
        ...managed(name, { forProvider: {} }, def),
        metadata: { name, annotations: { [Annotations.externalName]: `${name}-ext` } },
      });
      const at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      await kube.patchStatus(def, name, {
        conditions: [
          { type: "Ready", status: "True", reason: "Available", lastTransitionTime: at },
          { type: "Synced", status: "False", reason: "ReconcileError", message: "x", lastTransitionTime: at },
        ],
      });

      const table = await getAsTable(def, name);

      expect(table.kind).toBe("Table");
      expect(table.columnDefinitions.map((c) => c.name)).toEqual([
        "Name",
        "READY",
        "SYNCED",
        "EXTERNAL-NAME",
        "AGE",
      ]);
      expect(table.rows[0]?.cells.slice(0, 4)).toEqual([name, "True", "False", `${name}-ext`]);
    }
  });

  it("reject a field of the wrong type with the API server's own error", async () => {
    const err = await rejected(managed(uniqueName("crd-type"), { forProvider: { delaySeconds: "soon" } }));
    expect(err.status).toBe(422);
    expect(err.message).toContain("spec.forProvider.delaySeconds");
    expect(err.message).toMatch(/must be of type integer/);
  });

  it("reject a missing spec.forProvider", async () => {
    const err = await rejected(managed(uniqueName("crd-noforprovider"), { deletionPolicy: "Delete" }));
    expect(err.status).toBe(422);
    expect(err.message).toContain("spec.forProvider: Required value");
  });

  it("reject a missing spec", async () => {
    const err = await rejected({
      apiVersion: Queue.apiVersion,
      kind: Queue.kind,
      metadata: { name: uniqueName("crd-nospec") },
    } as {
      metadata: { name: string };
    });
    expect(err.status).toBe(422);
    expect(err.message).toContain("spec: Required value");
  });

  it("reject a deletionPolicy or management policy outside its enum", async () => {
    const deletion = await rejected(
      managed(uniqueName("crd-enum"), { forProvider: {}, deletionPolicy: "Keep" }),
    );
    expect(deletion.status).toBe(422);
    expect(deletion.message).toContain('spec.deletionPolicy: Unsupported value: "Keep"');
    expect(deletion.message).toContain('"Delete", "Orphan"');

    const policy = await rejected(
      managed(uniqueName("crd-enum2"), { forProvider: {}, managementPolicies: ["Everything"] }),
    );
    expect(policy.status).toBe(422);
    expect(policy.message).toContain('Unsupported value: "Everything"');

    const versioning = await rejected(
      managed(uniqueName("crd-enum3"), { forProvider: { versioning: "On" } }, Bucket),
      Bucket,
    );
    expect(versioning.message).toContain('spec.forProvider.versioning: Unsupported value: "On"');
  });

  it("reject an integer out of range", async () => {
    const high = await rejected(managed(uniqueName("crd-range"), { forProvider: { delaySeconds: 901 } }));
    expect(high.status).toBe(422);
    expect(high.message).toContain("spec.forProvider.delaySeconds");
    expect(high.message).toContain("less than or equal to 900");

    const low = await rejected(
      managed(uniqueName("crd-range2"), { forProvider: { maximumMessageSize: 10 } }),
    );
    expect(low.message).toContain("greater than or equal to 1024");
  });

  it("reject an empty required string", async () => {
    const err = await rejected(
      managed(uniqueName("crd-minlen"), { forProvider: {}, providerConfigRef: { name: "" } }),
    );
    expect(err.status).toBe(422);
    expect(err.message).toContain("spec.providerConfigRef.name");
  });

  it("have the server apply the defaults", async () => {
    const name = uniqueName("crd-defaults");

    const created = await kube.create(Queue, managed(name, { forProvider: {} }));

    expect(created.spec).toEqual({
      forProvider: {},
      providerConfigRef: { name: "default" },
      deletionPolicy: "Delete",
      managementPolicies: ["*"],
    });
    expect((await kube.get(Queue, name))?.spec).toEqual(created.spec);
  });

  it("keep values the user set instead of the defaults", async () => {
    const name = uniqueName("crd-nodefaults");
    const spec = {
      forProvider: { delaySeconds: 3 },
      providerConfigRef: { name: "mine" },
      deletionPolicy: "Orphan",
      managementPolicies: ["Observe"],
    };

    const created = await kube.create(Queue, managed(name, spec));

    expect(created.spec).toEqual(spec);
  });

  it("default and validate the ProviderConfig too", async () => {
    const type = providerConfigs.aws.type;
    const name = uniqueName("crd-pc");
    const created = await kube.create(type, {
      apiVersion: `${type.group}/${type.version}`,
      kind: "ProviderConfig",
      metadata: { name },
      spec: { credentials: { source: "InjectedIdentity" } },
    });
    expect(created.spec).toMatchObject({ region: "us-east-1" });

    const err = await kube
      .create(type, {
        apiVersion: `${type.group}/${type.version}`,
        kind: "ProviderConfig",
        metadata: { name: uniqueName("crd-pc-bad") },
        spec: { credentials: { source: "Magic" } },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as Error).message).toContain('spec.credentials.source: Unsupported value: "Magic"');
  });

  it("match the checked-in YAML (node infra/gen-crds.ts --check exits 0)", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "infra/gen-crds.ts"), "--check"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });
});
