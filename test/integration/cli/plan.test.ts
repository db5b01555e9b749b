// `driftless plan -f`: manifests planned by the engine's own plan step against the real API server and moto
// — a new queue is a create with its fields, an imported queue that differs is an update (current → desired),
// an immutable difference is a replace refused, an in-sync manifest is nothing; exit 0 / 1 / 2; nothing written.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateQueueCommand, GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { createAwsProviderConfig, ensureCrds, motoSqs } from "../../support/aws.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { cli } from "./helpers.ts";

const kube = newKube();
const sqs = motoSqs();

const queue = (name: string, pc: string, forProvider: Record<string, unknown>, externalName?: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, ...(externalName ? { annotations: { [Annotations.externalName]: externalName } } : {}) },
  spec: { forProvider, providerConfigRef: { name: pc } },
});

/** A directory holding each manifest in its own file. */
function manifestDir(...objects: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), "driftless-plan-"));
  for (const [i, o] of objects.entries()) writeFileSync(join(dir, `${i}.yaml`), stringify(o));
  return dir;
}

beforeAll(async () => {
  await ensureCrds();
});

describe("plan -f", { timeout: 180_000 }, () => {
  it("plans a create, an import that differs and an in-sync object, exit 2, writing nothing", async () => {
    // Prepare: a ProviderConfig; a queue made out of band (delay 0) to import; a queue driftless manages.
    const pc = uniqueName("plan-f-pc");
    await createAwsProviderConfig(kube, pc);
    const imported = uniqueName("plan-f-import");
    await sqs.send(new CreateQueueCommand({ QueueName: imported }));
    const managed = uniqueName("plan-f-live");
    await kube.create(Queue, queue(managed, pc, { visibilityTimeoutSeconds: 31 }));
    await settle(newReconciler(kube), keyOf(Queue, managed));
    const before = await getMr(kube, Queue, managed);
    const fresh = uniqueName("plan-f-new");
    const dir = manifestDir(
      queue(fresh, pc, { visibilityTimeoutSeconds: 40, tags: { team: "a" } }),
      queue(uniqueName("plan-f-imp"), pc, { delaySeconds: 5 }, imported),
      queue(managed, pc, { visibilityTimeoutSeconds: 31 }),
    );

    // Act
    const text = await cli(["plan", "-f", dir]);
    const json = await cli(["plan", "-f", dir, "-o", "json"]);

    // Assess
    expect(text.code, text.stderr).toBe(2);
    expect(text.stdout).toMatch(new RegExp(`^CREATE queue\\.sqs\\.aws\\.driftless\\.dev/${fresh}$`, "m"));
    expect(text.stdout).toMatch(/^ {4}\+ visibilityTimeoutSeconds: 40$/m);
    expect(text.stdout).toMatch(/^ {4}~ delaySeconds: 0 → 5$/m);
    expect(text.stdout).toMatch(new RegExp(`^NOTHING queue\\.sqs\\.aws\\.driftless\\.dev/${managed}$`, "m"));
    expect(text.stdout).toContain("plan: 1 to create, 1 to update, 0 to delete, 0 waiting, 1 unchanged");
    expect(JSON.parse(json.stdout).map((p: { action: string }) => p.action)).toEqual([
      "create",
      "update",
      "nothing",
    ]);
    // Nothing was written: no queue, no object, the live object untouched.
    await expect(sqs.send(new GetQueueUrlCommand({ QueueName: fresh }))).rejects.toThrow();
    expect(await getMr(kube, Queue, fresh)).toBeUndefined();
    expect((await getMr(kube, Queue, managed))?.metadata.resourceVersion).toBe(
      before?.metadata.resourceVersion,
    );
  });

  it("exits 0 when every manifest is in sync, 1 when an immutable field differs (replace refused)", async () => {
    const pc = uniqueName("plan-f-pc2");
    await createAwsProviderConfig(kube, pc);
    const managed = uniqueName("plan-f-same");
    await kube.create(Queue, queue(managed, pc, {}));
    await settle(newReconciler(kube), keyOf(Queue, managed));

    const inSync = await cli(["plan", "-f", manifestDir(queue(managed, pc, {}))]);
    const immutable = await cli(["plan", "-f", manifestDir(queue(managed, pc, { fifoQueue: true }))]);

    expect(inSync.code, inSync.stderr).toBe(0);
    expect(inSync.stdout).toContain("0 to create, 0 to update, 0 to delete, 0 waiting, 1 unchanged");
    expect(immutable.code, immutable.stdout).toBe(1);
    expect(immutable.stdout).toMatch(
      /^REPLACE REFUSED queue\.sqs\.aws\.driftless\.dev\/.*cannot update immutable field\(s\) fifoQueue/m,
    );
  });

  it("never shows a secret field's value", async () => {
    const pc = uniqueName("plan-f-pc3");
    await createAwsProviderConfig(kube, pc);
    const name = uniqueName("plan-f-db");
    const db = {
      apiVersion: DBInstance.apiVersion,
      kind: DBInstance.kind,
      metadata: { name },
      spec: {
        forProvider: {
          engine: "postgres",
          dbInstanceClass: "db.t3.micro",
          allocatedStorage: 20,
          masterUsername: "app",
          masterPasswordSecretRef: { name: "db-password-secret-name", namespace: "default", key: "pw" },
        },
        providerConfigRef: { name: pc },
      },
    };

    const out = await cli(["plan", "-f", manifestDir(db)]);

    expect(out.code, out.stdout + out.stderr).toBe(2);
    expect(out.stdout).toMatch(/^ {4}\+ masterPasswordSecretRef: \(redacted\)$/m);
    expect(out.stdout).not.toContain("db-password-secret-name");
  });

  it("refuses what is not a managed resource, and takes either kind/name or -f", async () => {
    const notManaged = await cli([
      "plan",
      "-f",
      manifestDir({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }),
    ]);
    const both = await cli(["plan", "queue/x", "-f", manifestDir()]);
    expect(notManaged.code).toBe(2);
    expect(notManaged.stderr).toContain("ConfigMap v1 is not a managed resource kind");
    expect(both.code).toBe(2);
  });
});
