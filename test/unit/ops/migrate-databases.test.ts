// Crossplane → driftless for the database kinds of issue 19 (Cloud SQL with its private network pieces,
// Azure Database for PostgreSQL flexible servers), on the Upjet providers' own example manifests
// (test/fixtures/crossplane/v1/ and v2/, sources in their READMEs): v1 cluster-scoped and v2 `.m.` input.
import { describe, expect, it } from "vitest";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { type MigrateResult, migrate } from "../../../shared/ops/migrate.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { exported, find, fixture, issuesOf, RAND, upjet } from "./migrate-helpers.ts";

const fieldsOf = (r: MigrateResult, severity: string) =>
  r.issues.filter((i) => i.severity === severity).map((i) => `${i.source.split("/")[0]} ${i.field}`);

const defs = managedKinds.map((k) => k.definition);
const SERVER_ID =
  "/subscriptions/0000/resourceGroups/db-rg/providers/Microsoft.DBforPostgreSQL/flexibleServers";

/** Every converted object is a registered driftless kind whose forProvider (and spec) schema accepts it. */
function expectValid(r: MigrateResult, shape: "cluster" | "namespaced") {
  expect(r.objects.length).toBeGreaterThan(0);
  for (const { object } of r.objects) {
    const def = defs.find(
      (d): d is ManagedKindDef => d.kind === object.kind && d.apiVersion === object.apiVersion,
    );
    expect(def, `${object.kind} ${object.apiVersion}`).toBeDefined();
    if (!def) continue;
    expect(def.scope).toBe(shape === "cluster" ? "Cluster" : "Namespaced");
    const fp = def.forProvider.safeParse(object.spec.forProvider);
    expect(fp.success, JSON.stringify(fp.error?.issues)).toBe(true);
    expect(def.spec.safeParse(object.spec).success, JSON.stringify(object.spec)).toBe(true);
    expect(object.spec.managementPolicies).toEqual(["Observe"]);
  }
}

describe("migrate: Cloud SQL (provider-upjet-gcp examples, v1)", () => {
  it("flattens the PostgreSQL DatabaseInstance's settings into driftless's flat fields", () => {
    const r = migrate(fixture("v1/gcp/sql-databaseinstance.yaml"));
    expectValid(r, "cluster");
    expect(find(r, "DatabaseInstance", "main")).toMatchObject({
      apiVersion: "sql.gcp.driftless.dev/v1alpha1",
      metadata: {
        annotations: {
          "crossplane.io/external-name": "main",
          "driftless.dev/migrated-from": "DatabaseInstance.sql.gcp.upbound.io/v1beta2",
        },
      },
      spec: { forProvider: { databaseVersion: "POSTGRES_15", region: "us-central1", tier: "db-f1-micro" } },
    });
    expect(r.issues.filter((i) => i.severity !== "note")).toEqual([]);
  });

  it("converts the User, and refuses the example's MySQL instance instead of adopting it as PostgreSQL", () => {
    const r = migrate(fixture("v1/gcp/sql-user.yaml", "v1/gcp/sql-database.yaml"));
    expectValid(r, "cluster");
    expect(find(r, "User", "example-user")?.spec).toMatchObject({
      forProvider: {
        instanceSelector: { matchLabels: { "testing.upbound.io/example-name": "example_instance" } },
        passwordSecretRef: { name: "example-sql-user", namespace: "upbound-system", key: "password" },
      },
      writeConnectionSecretToRef: { name: "example-sql-db-user-secret", namespace: "upbound-system" },
    });
    expect(find(r, "Database", `example-database-${RAND}`)?.spec.forProvider).toEqual({
      instanceSelector: { matchLabels: { "testing.upbound.io/example-name": "example_instance" } },
    });
    expect(find(r, "DatabaseInstance", `example-instance-${RAND}`)).toBeUndefined();
    expect(issuesOf(r, "error")).toEqual([
      `DatabaseInstance.sql.gcp.upbound.io/example-instance-${RAND}: databaseVersion MYSQL_5_7: driftless manages Cloud SQL for PostgreSQL instances only; it was not migrated`,
    ]);
    expect(r.skipped).toBe(2); // the MySQL instance and the v1 Secret
  });

  it("flattens an exported instance's nested blocks, reports what it cannot carry, keeps the network reference", () => {
    // Fields of `settings` that keep their names, flat in driftless's forProvider.
    const settings = {
      tier: "db-custom-1-3840",
      diskSize: 20,
      diskType: "PD_SSD",
      diskAutoresize: true,
      availabilityType: "REGIONAL",
      deletionProtectionEnabled: true,
      userLabels: { team: "orders" },
    };
    const r = migrate([
      {
        apiVersion: "sql.gcp.upbound.io/v1beta1",
        kind: "DatabaseInstance",
        metadata: {
          name: "orders",
          annotations: { "crossplane.io/external-name": "projects/acme/instances/orders-pg" },
        },
        spec: {
          deletionPolicy: "Orphan",
          forProvider: {
            databaseVersion: "POSTGRES_16",
            region: "europe-west1",
            deletionProtection: true,
            project: "acme",
            rootPasswordSecretRef: { name: "orders-root", namespace: "db", key: "password" },
            // v1beta1's Terraform blocks: lists of one element.
            settings: [
              {
                ...settings,
                backupConfiguration: [{ enabled: true }],
                ipConfiguration: [
                  {
                    ipv4Enabled: false,
                    privateNetworkRef: { name: "orders-net" },
                    sslMode: "ENCRYPTED_ONLY",
                    requireSsl: false,
                    authorizedNetworks: [{ value: "203.0.113.0/24" }],
                  },
                ],
              },
            ],
          },
        },
      },
    ]);
    expectValid(r, "cluster");
    expect(find(r, "DatabaseInstance", "orders")).toMatchObject({
      metadata: { annotations: { "crossplane.io/external-name": "orders-pg" } },
      spec: {
        deletionPolicy: "Orphan",
        forProvider: {
          databaseVersion: "POSTGRES_16",
          region: "europe-west1",
          rootPasswordSecretRef: { name: "orders-root", namespace: "db", key: "password" },
          ...settings,
          ipv4Enabled: false,
          privateNetworkRef: { name: "orders-net" },
          sslMode: "ENCRYPTED_ONLY",
        },
      },
    });
    expect(find(r, "DatabaseInstance", "orders")?.spec.forProvider).not.toHaveProperty("settings");
    expect(fieldsOf(r, "dropped")).toEqual([
      "DatabaseInstance.sql.gcp.upbound.io deletionProtection",
      "DatabaseInstance.sql.gcp.upbound.io settings.backupConfiguration",
      "DatabaseInstance.sql.gcp.upbound.io settings.ipConfiguration.authorizedNetworks",
    ]);
    // A guard that is off loses nothing: noted only.
    expect(r.issues).toContainEqual(
      expect.objectContaining({ severity: "note", field: "settings.ipConfiguration.requireSsl" }),
    );
    expect(issuesOf(r, "error")).toEqual([]);
  });

  it("refuses read replicas and non-built-in users; reports Terraform's ABANDON", () => {
    const r = migrate([
      upjet("sql.gcp.upbound.io/v1beta2", "DatabaseInstance", "replica", {
        databaseVersion: "POSTGRES_16",
        masterInstanceName: "orders-pg",
      }),
      upjet("sql.gcp.upbound.io/v1beta2", "User", "iam", { instance: "orders-pg", type: "CLOUD_IAM_USER" }),
      upjet("sql.gcp.upbound.io/v1beta1", "Database", "orders", {
        instance: "orders-pg",
        charset: "UTF8",
        deletionPolicy: "ABANDON",
      }),
    ]);
    expect(issuesOf(r, "error")).toEqual([
      "DatabaseInstance.sql.gcp.upbound.io/replica: a read replica of orders-pg: driftless manages primary instances only; it was not migrated",
      "User.sql.gcp.upbound.io/iam: a CLOUD_IAM_USER user: driftless manages built-in users only; it was not migrated",
    ]);
    expect(find(r, "Database", "orders")?.spec.forProvider).toEqual({
      instance: "orders-pg",
      charset: "UTF8",
    });
    expect(fieldsOf(r, "dropped")).toEqual(["Database.sql.gcp.upbound.io deletionPolicy"]);
  });
});

describe("migrate: private services access (provider-upjet-gcp examples, v1)", () => {
  it("converts Connection, GlobalAddress and Network with their selectors renamed", () => {
    const r = migrate(fixture("v1/gcp/servicenetworking-connection.yaml", "v1/gcp/compute-network.yaml"));
    expectValid(r, "cluster");
    expect(find(r, "Connection", "service-connection")?.spec.forProvider).toEqual({
      networkSelector: { matchLabels: { "testing.upbound.io/example-name": "service-connection" } },
      reservedPeeringRangeSelector: {
        matchLabels: { "testing.upbound.io/example-name": "service-connection" },
      },
      service: "servicenetworking.googleapis.com",
    });
    expect(find(r, "GlobalAddress", "service-connection")?.spec.forProvider).toEqual({
      addressType: "INTERNAL",
      purpose: "VPC_PEERING",
      prefixLength: 16,
      networkSelector: { matchLabels: { "testing.upbound.io/example-name": "service-connection" } },
    });
    expect(find(r, "Network", "example-network")?.spec.forProvider).toEqual({ autoCreateSubnetworks: false });
    // The connection is found by its network: no external name is needed (nor invented).
    expect(find(r, "Connection", "service-connection")?.metadata.annotations).not.toHaveProperty(
      "crossplane.io/external-name",
    );
    expect(r.issues.filter((i) => i.severity !== "note")).toEqual([]);
  });

  it("turns Terraform's connection id into driftless's <network path>:<service>", () => {
    const docs = fixture("v1/gcp/servicenetworking-connection.yaml");
    const r = migrate(
      exported(docs, {
        "Connection/service-connection":
          "projects%2Facme%2Fglobal%2Fnetworks%2Fservice-connection:servicenetworking.googleapis.com",
        "GlobalAddress/service-connection": "projects/acme/global/addresses/service-connection",
      }),
    );
    expect(
      find(r, "Connection", "service-connection")?.metadata.annotations?.["crossplane.io/external-name"],
    ).toBe("projects/acme/global/networks/service-connection:servicenetworking.googleapis.com");
    expect(
      find(r, "GlobalAddress", "service-connection")?.metadata.annotations?.["crossplane.io/external-name"],
    ).toBe("service-connection");
    const url = migrate([
      upjet("servicenetworking.gcp.upbound.io/v1beta1", "Connection", "c", {
        network: "https://www.googleapis.com/compute/v1/projects/acme/global/networks/main",
        reservedPeeringRanges: ["range-a"],
      }),
    ]);
    expect(find(url, "Connection", "c")?.metadata.annotations?.["crossplane.io/external-name"]).toBe(
      "projects/acme/global/networks/main:servicenetworking.googleapis.com",
    );
  });

  it("refuses the example's GlobalAddress: with no purpose, Google reserves an external address", () => {
    const r = migrate(fixture("v1/gcp/compute-globaladdress.yaml"));
    expect(r.objects).toEqual([]);
    expect(issuesOf(r, "error")).toEqual([
      expect.stringMatching(
        /^GlobalAddress\.compute\.gcp\.upbound\.io\/global-address: purpose unset, addressType unset .*VPC_PEERING range/,
      ),
    ]);
  });
});

describe("migrate: Azure Database for PostgreSQL (provider-upjet-azure examples, v1)", () => {
  it("maps the private-access FlexibleServer: sku, storage in GiB, network access, delegated Subnet", () => {
    const r = migrate(fixture("v1/azure/dbforpostgresql-flexibleserver.yaml"));
    expectValid(r, "cluster");
    expect(find(r, "FlexibleServer", "example")?.spec.forProvider).toEqual({
      administratorLogin: "psqladmin",
      administratorPasswordSecretRef: {
        key: "example-key",
        name: "example-secret",
        namespace: "upbound-system",
      },
      delegatedSubnetIdSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      location: "West Europe",
      publicNetworkAccess: "Disabled",
      resourceGroupNameSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      sku: { name: "Standard_D4s_v3", tier: "GeneralPurpose" },
      storageSizeGB: 32,
      version: "16",
    });
    expect(find(r, "Subnet", "example")?.spec.forProvider).toMatchObject({
      addressPrefix: "10.0.2.0/24",
      delegations: [{ name: "fs", serviceName: "Microsoft.DBforPostgreSQL/flexibleServers" }],
    });
    expect(fieldsOf(r, "dropped")).toEqual([
      "FlexibleServer.dbforpostgresql.azure.upbound.io privateDnsZoneIdSelector",
      "FlexibleServer.dbforpostgresql.azure.upbound.io storageTier",
      "Subnet.network.azure.upbound.io serviceEndpoints",
    ]);
    expect(issuesOf(r, "error")).toEqual([
      expect.stringMatching(
        /^PrivateDNSZone\.network\.azure\.upbound\.io\/example: driftless has no equivalent/,
      ),
      expect.stringMatching(
        /^PrivateDNSZoneVirtualNetworkLink\.network\.azure\.upbound\.io\/example: driftless has no equivalent/,
      ),
    ]);
  });

  it("gives firewall rules and databases their server's resource group, and says what has no equivalent", () => {
    const r = migrate(fixture("v1/azure/dbforpostgresql-flexibleserver-all-in-one.yaml"));
    expectValid(r, "cluster");
    const byServer = {
      serverNameSelector: { matchLabels: { "testing.upbound.io/example-name": "example" } },
      resourceGroupNameSelector: {
        matchLabels: { "testing.upbound.io/example-name": "example-flexible-server-pg" },
      },
    };
    expect(find(r, "FlexibleServerFirewallRule", "example")?.spec.forProvider).toEqual({
      startIpAddress: "122.122.0.0",
      endIpAddress: "122.122.0.0",
      ...byServer,
    });
    expect(find(r, "FlexibleServerDatabase", "example")?.spec.forProvider).toEqual({
      charset: "utf8",
      collation: "en_US.utf8",
      ...byServer,
    });
    expect(find(r, "FlexibleServer", `example-${RAND}`)?.spec.forProvider).toMatchObject({
      sku: { name: "Standard_D4s_v3", tier: "GeneralPurpose" },
      storageSizeGB: 32,
      version: "12",
    });
    expect(issuesOf(r, "error")).toEqual([
      expect.stringMatching(
        /^FlexibleServerConfiguration\.dbforpostgresql\.azure\.upbound\.io\/example: driftless has no equivalent/,
      ),
    ]);
    expect(r.issues.filter((i) => i.severity === "dropped" || i.severity === "warning")).toEqual([]);
  });

  it("splits an exported serverId into resource group and server; reports sizes it cannot convert", () => {
    const r = migrate([
      upjet(
        "dbforpostgresql.azure.upbound.io/v1beta1",
        "FlexibleServerFirewallRule",
        "office",
        {
          serverId: `${SERVER_ID}/orders`,
          serverIdRef: { name: "orders" },
          startIpAddress: "203.0.113.1",
          endIpAddress: "203.0.113.9",
        },
        `${SERVER_ID}/orders/firewallRules/office`,
      ),
      upjet("dbforpostgresql.azure.upbound.io/v1beta1", "FlexibleServerDatabase", "lonely", {
        serverIdRef: { name: "elsewhere" },
      }),
      upjet("dbforpostgresql.azure.upbound.io/v1beta2", "FlexibleServer", "odd", {
        skuName: "Standard_B1ms",
        storageMb: 1000,
        zone: "2",
        geoRedundantBackupEnabled: true,
        resourceGroupName: "db-rg",
      }),
    ]);
    expectValid(r, "cluster");
    expect(find(r, "FlexibleServerFirewallRule", "office")).toMatchObject({
      metadata: { annotations: { "crossplane.io/external-name": "office" } },
      spec: {
        forProvider: {
          resourceGroupName: "db-rg",
          serverName: "orders",
          serverNameRef: { name: "orders" },
          startIpAddress: "203.0.113.1",
          endIpAddress: "203.0.113.9",
        },
      },
    });
    expect(find(r, "FlexibleServer", "odd")?.spec.forProvider).toEqual({
      availabilityZone: "2",
      geoRedundantBackup: "Enabled",
      resourceGroupName: "db-rg",
    });
    expect(issuesOf(r, "error")).toEqual([]);
    expect(issuesOf(r, "dropped")).toEqual([
      'FlexibleServer.dbforpostgresql.azure.upbound.io/odd: forProvider.skuName "Standard_B1ms" is not <B|GP|MO>_<size>; left out',
      "FlexibleServer.dbforpostgresql.azure.upbound.io/odd: forProvider.storageMb 1000 MB is not a whole number of GiB; left out",
    ]);
    expect(issuesOf(r, "warning")).toEqual([
      expect.stringMatching(
        /^FlexibleServerDatabase\.dbforpostgresql\.azure\.upbound\.io\/lonely: forProvider\.resourceGroupName is unset/,
      ),
    ]);
  });
});

describe("migrate: the database kinds from Crossplane v2 (namespaced examples)", () => {
  it("converts Cloud SQL into the namespaced kinds, Secret references local", () => {
    const r = migrate(
      fixture("v2/gcp/sql-databaseinstance.yaml", "v2/gcp/sql-database.yaml", "v2/gcp/sql-user.yaml"),
    );
    expectValid(r, "namespaced");
    expect(find(r, "DatabaseInstance", "main")).toMatchObject({
      apiVersion: "sql.gcp.m.driftless.dev/v1alpha1",
      metadata: { namespace: "upbound-system" },
      spec: {
        forProvider: { databaseVersion: "POSTGRES_15", region: "us-central1", tier: "db-f1-micro" },
        providerConfigRef: { kind: "ClusterProviderConfig", name: "default" },
      },
    });
    expect(find(r, "User", "example-user")?.spec).toMatchObject({
      forProvider: { passwordSecretRef: { name: "example-sql-user", key: "password" } },
      writeConnectionSecretToRef: { name: "example-sql-db-user-secret" },
    });
    expect(find(r, "Database", `example-database-${RAND}`)?.metadata.namespace).toBe("upbound-system");
    expect(issuesOf(r, "error")).toEqual([
      expect.stringContaining(
        `DatabaseInstance.sql.gcp.m.upbound.io/example-instance-${RAND}: databaseVersion MYSQL_5_7`,
      ),
    ]);
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("converts Connection, GlobalAddress and Network, and refuses the external GlobalAddress", () => {
    const r = migrate(
      exported(fixture("v2/gcp/servicenetworking-connection.yaml", "v2/gcp/compute-network.yaml"), {
        "Connection/service-connection":
          "projects%2Facme%2Fglobal%2Fnetworks%2Fservice-connection:servicenetworking.googleapis.com",
      }),
    );
    expectValid(r, "namespaced");
    expect(find(r, "Connection", "service-connection")).toMatchObject({
      apiVersion: "servicenetworking.gcp.m.driftless.dev/v1alpha1",
      metadata: {
        annotations: {
          "crossplane.io/external-name":
            "projects/acme/global/networks/service-connection:servicenetworking.googleapis.com",
        },
      },
      spec: { forProvider: { reservedPeeringRangeSelector: expect.any(Object) } },
    });
    expect(find(r, "Network", "example-network")?.apiVersion).toBe("compute.gcp.m.driftless.dev/v1alpha1");
    expect(r.issues.filter((i) => i.severity !== "note")).toEqual([]);
    const external = migrate(fixture("v2/gcp/compute-globaladdress.yaml"));
    expect(external.objects).toEqual([]);
    expect(issuesOf(external, "error")).toEqual([expect.stringContaining("VPC_PEERING range")]);
  });

  it("converts the flexible servers, firewall rule and database into the namespaced kinds", () => {
    const r = migrate(
      fixture(
        "v2/azure/dbforpostgresql-flexibleserver.yaml",
        "v2/azure/dbforpostgresql-flexibleserver-all-in-one.yaml",
      ),
    );
    expectValid(r, "namespaced");
    expect(find(r, "FlexibleServer", "example")).toMatchObject({
      apiVersion: "dbforpostgresql.azure.m.driftless.dev/v1alpha1",
      metadata: { namespace: "upbound-system" },
      spec: {
        forProvider: {
          administratorPasswordSecretRef: { key: "example-key", name: "example-secret" },
          publicNetworkAccess: "Disabled",
          sku: { name: "Standard_D4s_v3", tier: "GeneralPurpose" },
          storageSizeGB: 32,
        },
      },
    });
    // The all-in-one's children select their server by labels; the private-access example's server
    // carries the same labels, so the selector is ambiguous and the resource group is left to the user.
    expect(issuesOf(r, "warning")).toEqual([
      expect.stringMatching(/FlexibleServerDatabase.*resourceGroupName is unset.*2 FlexibleServers match/),
      expect.stringMatching(
        /FlexibleServerFirewallRule.*resourceGroupName is unset.*2 FlexibleServers match/,
      ),
    ]);
    const alone = migrate(fixture("v2/azure/dbforpostgresql-flexibleserver-all-in-one.yaml"));
    expectValid(alone, "namespaced");
    expect(find(alone, "FlexibleServerFirewallRule", "example")?.spec.forProvider).toMatchObject({
      resourceGroupNameSelector: {
        matchLabels: { "testing.upbound.io/example-name": "example-flexible-server-pg" },
      },
    });
    expect(issuesOf(alone, "warning")).toEqual([]);
  });

  it("writes v1 input in the namespaced shape with --namespaced", () => {
    const r = migrate(
      fixture("v1/gcp/sql-databaseinstance.yaml", "v1/azure/dbforpostgresql-flexibleserver.yaml"),
      {
        namespaced: { namespace: "data" },
      },
    );
    expectValid(r, "namespaced");
    expect(find(r, "FlexibleServer", "example")?.spec.forProvider).toMatchObject({
      administratorPasswordSecretRef: { key: "example-key", name: "example-secret" },
    });
    expect(issuesOf(r, "warning")).toContainEqual(
      expect.stringMatching(/administratorPasswordSecretRef named Secret upbound-system\/example-secret/),
    );
  });
});
