// "The same claim can be used in either cluster so long as the claim can be matched to a suitable class":
// one PostgreSQLInstance file, unchanged, applied to three isolated clusters whose default classes are
// RDS (moto), Cloud SQL (the stack's Cloud SQL fake) and Azure Database for PostgreSQL (the ARM fake).
// Each binds it to its own cloud's database and writes the app's Secret with the same portable keys.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DBInstance } from "../../../shared/api/aws/rds.ts";
import { FlexibleServer } from "../../../shared/api/azure/dbforpostgresql.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { PostgreSQLInstance } from "../../../shared/api/claims/claims.ts";
import {
  AzurePostgreSQLClass,
  type ClassKindDef,
  CloudSQLInstanceClass,
  RDSInstanceClass,
} from "../../../shared/api/claims/classes.ts";
import { DatabaseInstance } from "../../../shared/api/gcp/sql.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { allCrds } from "../../../shared/crds.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import { createAwsProviderConfig, ensureNamespace } from "../../support/aws.ts";
import { createAzureProviderConfig } from "../../support/azure.ts";
import { uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig } from "../../support/gcp.ts";
import { newReconciler, settle } from "../../support/reconcile.ts";
import {
  classObject,
  conditionOf,
  drive,
  isReady,
  type KubeClaim,
  newClaimReconciler,
  secretData,
  startSecondCluster,
} from "./support.ts";

const CLAIM_FILE = new URL("../../fixtures/claims/postgresql-instance.yaml", import.meta.url);
const claimYaml = readFileSync(CLAIM_FILE, "utf8");
const stops: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
}, 60_000);

interface Cloud {
  cloud: string;
  cls: ClassKindDef;
  managed: ManagedKindDef[];
  /** The ProviderConfig "default" and anything the class's template refers to. */
  arrange(kube: Kube, suffix: string): Promise<Record<string, unknown>>;
  service: string;
  resource: ManagedKindDef;
}

const clouds: Cloud[] = [
  {
    cloud: "aws",
    cls: RDSInstanceClass,
    managed: [DBInstance],
    resource: DBInstance,
    service: "rds-postgresql",
    arrange: async (kube) => {
      await createAwsProviderConfig(kube, "default");
      return { forProvider: { skipFinalSnapshot: true } };
    },
  },
  {
    cloud: "gcp",
    cls: CloudSQLInstanceClass,
    managed: [DatabaseInstance],
    resource: DatabaseInstance,
    service: "cloudsql-postgresql",
    arrange: async (kube) => {
      await createGcpProviderConfig(kube, "default");
      return { forProvider: { region: "europe-west1", ipv4Enabled: true } };
    },
  },
  {
    cloud: "azure",
    cls: AzurePostgreSQLClass,
    managed: [FlexibleServer, ResourceGroup],
    resource: FlexibleServer,
    service: "azure-postgresql",
    arrange: async (kube, suffix) => {
      await createAzureProviderConfig(kube, "default", { noStorage: true });
      // The platform's resource group, which the class's template refers to.
      const rg = `databases-${suffix}`;
      await kube.create(ResourceGroup, {
        apiVersion: ResourceGroup.apiVersion,
        kind: "ResourceGroup",
        metadata: { name: rg },
        spec: { forProvider: { location: "westeurope" } },
      });
      await settle(newReconciler(kube), {
        apiVersion: ResourceGroup.apiVersion,
        kind: "ResourceGroup",
        name: rg,
      });
      return {
        forProvider: {
          resourceGroupNameRef: { name: rg },
          location: "westeurope",
          publicNetworkAccess: "Enabled",
        },
      };
    },
  },
];

describe("one PostgreSQLInstance claim file, three clouds", () => {
  it.each(clouds)(
    "binds on $cloud through the cluster's default class, with host, port, username and password in the app's Secret",
    async (c) => {
      const suffix = uniqueName("pg").slice(3);
      // Only what this cloud's cluster needs: its managed kinds and ProviderConfig, and every claim and class kind.
      const names = new Set(c.managed.map((t) => `${t.plural}.${t.group}`));
      const crds = allCrds().filter(
        (crd) =>
          names.has(crd.metadata.name) ||
          crd.metadata.name.startsWith(`providerconfigs.${c.cloud}.`) ||
          [PostgreSQLInstance.group, c.cls.group].includes(crd.spec.group),
      );
      const cluster = await startSecondCluster({ crds });
      stops.push(cluster.stop);
      const kube = cluster.kube;
      const spec = await c.arrange(kube, suffix);
      await kube.create(
        c.cls,
        classObject(
          c.cls,
          `${c.cloud}-postgres`,
          { providerConfigRef: { name: "default" }, ...spec },
          { isDefault: true },
        ),
      );

      // The identical file, applied as `kubectl apply -n shop -f` would.
      await ensureNamespace(kube, "shop");
      const claim = parse(claimYaml) as KubeClaim;
      await kube.create(PostgreSQLInstance, { ...claim, metadata: { ...claim.metadata, namespace: "shop" } });

      const { claim: bound } = await drive({
        kube,
        claims: newClaimReconciler(kube),
        mrs: newReconciler(kube),
        def: PostgreSQLInstance,
        namespace: "shop",
        name: "orders-db",
        until: isReady,
        timeoutMs: 60_000,
      });

      expect(conditionOf(bound, "Bound")?.status ?? "True").toBe("True");
      expect(bound?.status?.resourceRef).toMatchObject({
        apiVersion: c.resource.apiVersion,
        kind: c.resource.kind,
      });
      const data = await secretData(kube, "shop", "orders-db");
      expect(data).toMatchObject({
        service: c.service,
        host: expect.stringMatching(/.+/),
        port: "5432",
        username: expect.stringMatching(/.+/),
        password: expect.stringMatching(/.{16,}/),
      });
      // The password is only in Secrets: never in the claim's status.
      expect(JSON.stringify(bound)).not.toContain(data?.password);

      // Deleting the claim deletes its database (the class's reclaim policy Delete): nothing is left behind.
      const ref = bound?.status?.resourceRef as { apiVersion: string; kind: string; name: string };
      await kube.delete(PostgreSQLInstance, "orders-db", "shop");
      await drive({
        kube,
        claims: newClaimReconciler(kube),
        mrs: newReconciler(kube),
        def: PostgreSQLInstance,
        namespace: "shop",
        name: "orders-db",
        until: (claim) => claim === undefined,
        timeoutMs: 60_000,
      });
      const mrs = newReconciler(kube);
      for (let i = 0; i < 50 && (await kube.get(c.resource, ref.name)); i++) {
        await mrs.reconcile(ref);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await kube.get(c.resource, ref.name)).toBeUndefined();
    },
    120_000,
  );
});
