import { DescribeDBInstancesCommand, RDSClient } from "@aws-sdk/client-rds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { PostgreSQLInstance } from "../../../shared/api/claims/claims.ts";
import { RDSInstanceClass } from "../../../shared/api/claims/classes.ts";
import { createAwsProviderConfig, ensureCrds } from "../../support/aws.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { newReconciler } from "../../support/reconcile.ts";
import {
  claimObject,
  classObject,
  conditionOf,
  drive,
  isReady,
  type KubeMr,
  newClaimReconciler,
  newNamespace,
  secretData,
} from "./support.ts";

const kube = newKube();
const rds = new RDSClient({
  region: "us-east-1",
  endpoint: env("AWS_ENDPOINT_URL"),
  credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
});
const PC = uniqueName("pc-claims-rds");
const CLASS = uniqueName("rds-postgres");

const describeDb = async (id: string) =>
  (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances?.[0];

beforeAll(async () => {
  await ensureCrds();
  await createAwsProviderConfig(kube, PC);
  await kube.create(
    RDSInstanceClass,
    classObject(RDSInstanceClass, CLASS, {
      providerConfigRef: { name: PC },
      forProvider: { masterUsername: "pgadmin", skipFinalSnapshot: true, tags: { owner: "platform" } },
      sizes: { small: "db.t3.micro", medium: "db.t3.small" },
    }),
  );
});

afterAll(async () => {
  await kube.delete(RDSInstanceClass, CLASS);
});

describe("PostgreSQLInstance claims served by RDS", () => {
  it("makes an RDS postgres instance and puts host, port, username and password in the app's Secret", async () => {
    const ns = await newNamespace(kube, "pg-app");
    await kube.create(
      PostgreSQLInstance,
      claimObject(PostgreSQLInstance, ns, "db", {
        classRef: { kind: "RDSInstanceClass", name: CLASS },
        version: "16",
        storageGB: 50,
        size: "medium",
        writeConnectionSecretToRef: { name: "db-conn" },
      }),
    );
    const claims = newClaimReconciler(kube);
    const mrs = newReconciler(kube);

    const { claim } = await drive({
      kube,
      claims,
      mrs,
      def: PostgreSQLInstance,
      namespace: ns,
      name: "db",
      until: isReady,
    });

    expect(conditionOf(claim, "Synced")?.status).toBe("True");
    const id = claim?.status?.resourceRef?.name ?? "";
    expect(claim?.status?.resourceRef).toEqual({
      apiVersion: DBInstance.apiVersion,
      kind: "DBInstance",
      name: id,
    });
    const mr = await kube.get<KubeMr>(DBInstance, id);
    expect(mr?.spec.forProvider).toMatchObject({
      engine: "postgres",
      engineVersion: "16",
      allocatedStorage: 50,
      dbInstanceClass: "db.t3.small",
      masterUsername: "pgadmin",
      skipFinalSnapshot: true,
      tags: { owner: "platform" },
    });
    expect(mr?.spec.forProvider).not.toHaveProperty("masterPasswordSecretRef");
    const db = await describeDb(id);
    expect(db).toMatchObject({
      Engine: "postgres",
      DBInstanceClass: "db.t3.small",
      AllocatedStorage: 50,
      MasterUsername: "pgadmin",
    });

    const data = await secretData(kube, ns, "db-conn");
    expect(data).toMatchObject({
      service: "rds-postgresql",
      host: db?.Endpoint?.Address,
      endpoint: db?.Endpoint?.Address,
      port: "5432",
      username: "pgadmin",
      password: expect.stringMatching(/^[A-Za-z][A-Za-z0-9]{29}$/),
    });
    // The password lives in two Secrets only: the resource's (driftless-system) and the app's copy.
    expect(JSON.stringify(claim)).not.toContain(data?.password);
    expect(JSON.stringify(mr)).not.toContain(data?.password);
  });

  it("carries a size change from the claim to the instance", async () => {
    const ns = await newNamespace(kube, "pg-resize");
    await kube.create(
      PostgreSQLInstance,
      claimObject(PostgreSQLInstance, ns, "db", { classRef: { kind: "RDSInstanceClass", name: CLASS } }),
    );
    const claims = newClaimReconciler(kube);
    const mrs = newReconciler(kube);
    const { claim } = await drive({
      kube,
      claims,
      mrs,
      def: PostgreSQLInstance,
      namespace: ns,
      name: "db",
      until: isReady,
    });
    const id = claim?.status?.resourceRef?.name ?? "";
    // The API server's defaults for the portable fields: small, 20 GiB.
    expect(claim?.spec).toMatchObject({ size: "small", storageGB: 20 });
    expect((await describeDb(id))?.DBInstanceClass).toBe("db.t3.micro");

    await kube.patch(
      PostgreSQLInstance,
      "db",
      { spec: { size: "medium", storageGB: 30 } },
      { namespace: ns },
    );
    await drive({
      kube,
      claims,
      mrs,
      def: PostgreSQLInstance,
      namespace: ns,
      name: "db",
      until: (c, r) => isReady(c) && r.outcome === "in-sync",
    });

    const mr = await kube.get<KubeMr>(DBInstance, id);
    expect(mr?.spec.forProvider).toMatchObject({ dbInstanceClass: "db.t3.small", allocatedStorage: 30 });
    expect(conditionOf(mr, "Synced")?.status).toBe("True");
  });
});
