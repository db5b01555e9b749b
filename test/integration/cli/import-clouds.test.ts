// `driftless import` beyond EC2, on the local stack and the real kube-apiserver: a generated AWS kind
// (Cloud Control ListResources, paged with NextToken; a child type is named and skipped), hand-written AWS
// kinds (SQS ListQueues, S3 ListBuckets, RDS DescribeDBSubnetGroups and DescribeDBInstances on moto, each
// through the SDK's paginator), Azure (Resource Groups - List
// on the ARM fake; a generated kind listed group by group in nextLink pages), Google (Pub/Sub ListTopics on
// the emulator; a generated kind's list method on the generic fake). Each run writes what exists as
// Observe-only managed resources, skips what a managed resource already names, and the written files apply
// as they are and become Ready in Observe while nothing in the cloud changes.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateResourceCommand } from "@aws-sdk/client-cloudcontrol";
import { CreateSubnetCommand, CreateVpcCommand, EC2Client } from "@aws-sdk/client-ec2";
import {
  CreateDBInstanceCommand,
  CreateDBSubnetGroupCommand,
  DeleteDBInstanceCommand,
  DeleteDBSubnetGroupCommand,
  DescribeDBInstancesCommand,
  DescribeDBSubnetGroupsCommand,
  RDSClient,
} from "@aws-sdk/client-rds";
import { CreateBucketCommand, DeleteBucketCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, DeleteQueueCommand, GetQueueUrlCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { type SqlFake, startSqlFake } from "../../../infra/local/fakes/gcp-sql-fake.ts";
import { DBInstance, DBSubnetGroup } from "../../../shared/api/aws/rds.ts";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { VirtualNetwork } from "../../../shared/api/azure/network.ts";
import { ResourceGroup } from "../../../shared/api/azure/resources.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { Subscription, Topic } from "../../../shared/api/gcp/pubsub.ts";
import { Database, DatabaseInstance, User } from "../../../shared/api/gcp/sql.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { createAwsProviderConfig, ensureCrds, motoOptions, motoS3 } from "../../support/aws.ts";
import { awsccTestbed, requestDone } from "../../support/awscc.ts";
import {
  armClient,
  createAzureProviderConfig,
  networkClient,
  startGenericArmFake,
} from "../../support/azure.ts";
import { managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { env, eventually, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, emulatorPubSub, gcpProject } from "../../support/gcp.ts";
import { googleGenSpecs } from "../../support/gcp-generated.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";
import { cli } from "./helpers.ts";

type Written = ManagedResource & KubeObject;
const LOGS = "AWS::Logs::LogGroup";
/** A child type: its list handler needs the parent's restApiId in the request. */
const CHILD = "AWS::ApiGateway::Resource";
/** Its parent type, listed on its own. */
const REST_API = "AWS::ApiGateway::RestApi";
/** Three levels, two needed fields: a version needs its Application's and its ConfigurationProfile's ids. */
const APPCONFIG = [
  "AWS::AppConfig::Application",
  "AWS::AppConfig::ConfigurationProfile",
  "AWS::AppConfig::HostedConfigurationVersion",
] as const;
/** Log groups made by hand: more than one ListResources page (100). */
const HAND_MADE = 101;
const SLOW = 300_000;

const kube = newKube();

beforeAll(async () => {
  await ensureCrds();
}, 120_000);

/** Runs the import of `kinds` into a fresh directory: its counts line per kind and the written objects. */
async function runImport(pc: string, kinds: string, env: Record<string, string> = {}) {
  const out = mkdtempSync(join(tmpdir(), "driftless-import-"));
  const res = await cli(["import", "--provider-config", pc, "--kinds", kinds, "-o", out], { env });
  expect(res.code, res.stderr).toBe(0);
  const counts = (alias: string) => {
    const m = new RegExp(
      `^${alias.replace(".", "\\.")}: (\\d+) found, (\\d+) written, (\\d+) already managed$`,
      "m",
    ).exec(res.stdout);
    expect(m, res.stdout).not.toBeNull();
    const [found, written, managed] = (m ?? []).slice(1).map(Number) as [number, number, number];
    return { found, written, managed };
  };
  const objects = readdirSync(out).map((f) => parse(readFileSync(join(out, f), "utf8")) as Written);
  const byExt = (name: string) =>
    objects.find((o) => o.metadata.annotations?.[Annotations.externalName] === name);
  return { res, counts, objects, byExt };
}

/** Applies a written object as it is (after removing the test's earlier copy) and settles it: Ready in Observe. */
async function appliesReady(r: Reconciler, def: ManagedKindDef, o: Written) {
  await kube.delete(def, o.metadata.name);
  await kube.create(def, o as KubeObject);
  await settle(r, keyOf(def, o.metadata.name));
  const mr = await getMr(kube, def, o.metadata.name);
  expect(conditionOf(mr, "Ready")?.status, JSON.stringify(mr?.status)).toBe("True");
  expect(conditionOf(mr, "Synced")?.status, JSON.stringify(mr?.status)).toBe("True");
  return mr;
}

describe("driftless import: generated AWS kinds (Cloud Control)", () => {
  const PC = uniqueName("pc-import-cc");
  let bed: Awaited<ReturnType<typeof awsccTestbed>>;
  beforeAll(async () => {
    bed = await awsccTestbed(kube, PC, [LOGS, CHILD, REST_API, ...APPCONFIG]);
  }, 120_000);
  afterAll(async () => {
    await bed?.close();
  });
  /** The testbed's kinds activated for the CLI (DRIFTLESS_ACTIVATE). */
  const activated = () => ({
    DRIFTLESS_ACTIVATE: [...bed.defs.values()].map((d) => `${d.plural}.${d.group}`).join(","),
  });
  /** Creates a resource through the Cloud Control fake (made by hand, outside driftless): its identifier. */
  let cc: ReturnType<typeof bed.fake.client> | undefined;
  const make = async (type: string, state: Record<string, unknown>) => {
    cc ??= bed.fake.client();
    const out = await cc.send(
      new CreateResourceCommand({ TypeName: type, DesiredState: JSON.stringify(state) }),
    );
    return (await requestDone(cc, out.ProgressEvent))?.Identifier as string;
  };

  it(
    "pages ListResources, writes the log groups no managed resource names, skips the managed one; the child type is listed per parent (none yet)",
    async () => {
      const def = bed.defs.get(LOGS) as ManagedKindDef;
      const prefix = uniqueName("lg-import");
      for (let i = 0; i < HAND_MADE; i++)
        await make(LOGS, { LogGroupName: `${prefix}-${String(i).padStart(3, "0")}` });
      const managed = uniqueName("lg-managed");
      await kube.create(def, managedObject(def, managed, PC, { forProvider: {}, connectionSecret: false }));
      await settle(bed.reconciler, keyOf(def, managed));
      const managedId = (await getMr(kube, def, managed))?.metadata.annotations?.[Annotations.externalName];
      expect(managedId).toBeTruthy();

      const before = await bed.fake.requests();
      const childAlias = `${(bed.defs.get(CHILD) as ManagedKindDef).group.split(".")[0]}.resource`;
      const { res, counts, objects, byExt } = await runImport(PC, `logs.loggroup,${childAlias}`, activated());
      const total = (await bed.fake.resources(LOGS)).length;
      expect(counts("logs.loggroup")).toEqual({ found: total, written: total - 1, managed: 1 });
      expect(total).toBeGreaterThan(100);
      // The child type is listed per parent: none made yet, so none found (import-clouds: its own test below).
      expect(res.stderr).not.toContain(`${childAlias}: not imported`);
      expect(counts(childAlias)).toEqual({ found: 0, written: 0, managed: 0 });
      expect(byExt(managedId as string)).toBeUndefined();
      const first = `${prefix}-000`;
      expect(byExt(first)).toEqual({
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: { name: first, annotations: { [Annotations.externalName]: first } },
        spec: {
          managementPolicies: ["Observe"],
          providerConfigRef: { name: PC },
          forProvider: { region: "us-east-1" },
        },
      });
      expect(objects.filter((o) => o.kind === def.kind)).toHaveLength(total - 1);

      const mr = await appliesReady(bed.reconciler, def, byExt(first) as Written);
      expect(mr?.status?.atProvider).toBeDefined();
      // Reads only: no request that writes reached Cloud Control during the import and the observe.
      const after = await bed.fake.requests();
      for (const op of ["CreateResource", "UpdateResource", "DeleteResource"])
        expect(after[op] ?? 0, op).toBe(before[op] ?? 0);
    },
    SLOW,
  );

  it(
    "lists a child type per parent: each RestApi ListResources names, then its Resources with restApiId in the ResourceModel",
    async () => {
      const apis = [
        await make(REST_API, { Name: uniqueName("api-import") }),
        await make(REST_API, { Name: uniqueName("api-import") }),
      ];
      const children: string[] = [];
      for (const api of apis)
        for (const part of ["a", "b"])
          children.push(await make(CHILD, { RestApiId: api, ParentId: "root", PathPart: part }));
      const def = bed.defs.get(CHILD) as ManagedKindDef;
      const childAlias = `${def.group.split(".")[0]}.resource`;
      const before = await bed.fake.requests();
      const { counts, objects } = await runImport(PC, childAlias, activated());
      expect(counts(childAlias)).toEqual({ found: 4, written: 4, managed: 0 });
      const written = objects.filter((o) => o.kind === def.kind);
      expect(written.map((o) => o.metadata.annotations?.[Annotations.externalName]).sort()).toEqual(
        [...children].sort(),
      );
      for (const o of written)
        expect(apis).toContain((o.spec.forProvider as { restApiId?: string }).restApiId);
      // Per parent: one ListResources of the parent type, one of the child type per parent (one page each).
      const after = await bed.fake.requests();
      expect((after.ListResources ?? 0) - (before.ListResources ?? 0)).toBe(1 + apis.length);
      expect(after.CreateResource).toBe(before.CreateResource);

      // --parents managed: the parents are the RestApis this ProviderConfig's managed resources hold (one
      // here, Observe-only): no list of RestApis, one of Resources under it, its children only.
      const restApi = bed.defs.get(REST_API) as ManagedKindDef;
      const held = uniqueName("restapi-managed");
      await kube.create(restApi, {
        ...managedObject(restApi, held, PC, { connectionSecret: false }),
        metadata: { name: held, annotations: { [Annotations.externalName]: apis[0] as string } },
        spec: { managementPolicies: ["Observe"], providerConfigRef: { name: PC }, forProvider: {} },
      } as KubeObject);
      const out = mkdtempSync(join(tmpdir(), "driftless-import-"));
      const listedBefore = (await bed.fake.requests()).ListResources ?? 0;
      const res = await cli(
        ["import", "--provider-config", PC, "--kinds", childAlias, "--parents", "managed", "-o", out],
        {
          env: activated(),
        },
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(`${childAlias}: 2 found, 2 written, 0 already managed`);
      const underManaged = readdirSync(out).map((f) => parse(readFileSync(join(out, f), "utf8")) as Written);
      expect(underManaged.map((o) => (o.spec.forProvider as { restApiId?: string }).restApiId)).toEqual([
        apis[0],
        apis[0],
      ]);
      expect(((await bed.fake.requests()).ListResources ?? 0) - listedBefore).toBe(1);
      await kube.delete(restApi, held);
    },
    SLOW,
  );

  it(
    "lists a child type whose list handler needs two fields, under a parent that is itself a child: Applications, then each one's ConfigurationProfiles, then each profile's versions",
    async () => {
      const [APP, PROFILE, VERSION] = APPCONFIG;
      const versions: string[] = [];
      const homes: Array<{ applicationId: string; configurationProfileId: string }> = [];
      // Two Applications, the first with two profiles; one version in each profile.
      for (const a of [0, 1]) {
        const app = await make(APP, { Name: uniqueName(`app-${a}`) });
        for (const _ of a === 0 ? [1, 2] : [1]) {
          const profile = await make(PROFILE, {
            ApplicationId: app,
            Name: uniqueName("profile"),
            LocationUri: "hosted",
          });
          // The profile's identifier is `<ApplicationId>|<ConfigurationProfileId>`.
          const profileId = profile.split("|")[1] as string;
          homes.push({ applicationId: app, configurationProfileId: profileId });
          versions.push(
            await make(VERSION, {
              ApplicationId: app,
              ConfigurationProfileId: profileId,
              Content: "v1",
              ContentType: "text/plain",
            }),
          );
        }
      }
      const def = bed.defs.get(VERSION) as ManagedKindDef;
      const alias = `${def.group.split(".")[0]}.hostedconfigurationversion`;
      const before = await bed.fake.requests();
      const { res, counts, objects } = await runImport(PC, alias, activated());
      expect(res.stderr).not.toContain(`${alias}: not imported`);
      expect(counts(alias)).toEqual({ found: 3, written: 3, managed: 0 });
      const written = objects.filter((o) => o.kind === def.kind);
      expect(written.map((o) => o.metadata.annotations?.[Annotations.externalName]).sort()).toEqual(
        [...versions].sort(),
      );
      for (const o of written) {
        const fp = o.spec.forProvider as Record<string, string>;
        expect(homes).toContainEqual({
          applicationId: fp.applicationId,
          configurationProfileId: fp.configurationProfileId,
        });
        expect(o.metadata.annotations?.[Annotations.externalName]).toContain(
          `${fp.applicationId}|${fp.configurationProfileId}|`,
        );
      }
      // Level by level: one list of Applications, one of profiles per Application, one of versions per profile.
      const after = await bed.fake.requests();
      expect((after.ListResources ?? 0) - (before.ListResources ?? 0)).toBe(1 + 2 + 3);
      expect(after.CreateResource).toBe(before.CreateResource);
    },
    SLOW,
  );
});

/** A hand-written kind's case: its ProviderConfig, a resource made by hand (and how to see and remove it). */
interface Case {
  cloud: string;
  def: ManagedKindDef;
  alias: string;
  providerConfig: (pc: string) => Promise<void>;
  /** Spec fields the managed resource needs to be created. */
  managedForProvider: Record<string, unknown> | (() => Promise<Record<string, unknown>>);
  /** The managed one publishes a connection Secret (a DB instance's generated password needs one). */
  managedSecret?: boolean;
  /** Makes one by hand (not through driftless): its external name. */
  byHand: () => Promise<string>;
  /** The forProvider the import writes for it (its home fields). */
  home: Record<string, unknown>;
  /** The object name the import gives it, where not its external name (a name unique only in its group). */
  objectName?: (externalName: string) => string;
  exists: (name: string) => Promise<boolean>;
  remove: (name: string) => Promise<void>;
}

const sqs = new SQSClient(motoOptions());
const s3 = motoS3();
const rds = new RDSClient(motoOptions());
const ec2 = new EC2Client(motoOptions());
/** Two subnets of a new VPC in two availability zones, as a DB subnet group needs. */
async function twoSubnets(): Promise<string[]> {
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "10.93.0.0/16" }))).Vpc?.VpcId;
  const ids: string[] = [];
  for (const [i, az] of ["us-east-1a", "us-east-1b"].entries())
    ids.push(
      (
        await ec2.send(
          new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `10.93.${i + 1}.0/24`, AvailabilityZone: az }),
        )
      ).Subnet?.SubnetId as string,
    );
  return ids;
}
const arm = armClient();
const network = networkClient();
const VNET_RG = uniqueName("rg-import-vnet");
const ps = emulatorPubSub();
const queueUrls = new Map<string, string>();
const CASES: Case[] = [
  {
    cloud: "AWS (SQS ListQueues)",
    def: Queue,
    alias: "sqs.queue",
    providerConfig: (pc) => createAwsProviderConfig(kube, pc),
    managedForProvider: {},
    byHand: async () => {
      const name = uniqueName("q-by-hand");
      queueUrls.set(name, (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string);
      return name;
    },
    home: { region: "us-east-1" },
    exists: async (name) => !!(await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl,
    remove: async (name) => {
      await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrls.get(name) }));
    },
  },
  {
    cloud: "AWS (S3 ListBuckets)",
    def: Bucket,
    alias: "s3.bucket",
    providerConfig: (pc) => createAwsProviderConfig(kube, pc),
    managedForProvider: {},
    byHand: async () => {
      const name = uniqueName("bucket-by-hand");
      await s3.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    home: { region: "us-east-1" },
    exists: async (name) =>
      s3.send(new HeadBucketCommand({ Bucket: name })).then(
        () => true,
        () => false,
      ),
    remove: async (name) => {
      await s3.send(new DeleteBucketCommand({ Bucket: name }));
    },
  },
  {
    cloud: "AWS (RDS DescribeDBSubnetGroups)",
    def: DBSubnetGroup,
    alias: "rds.dbsubnetgroup",
    providerConfig: (pc) => createAwsProviderConfig(kube, pc),
    managedForProvider: async () => ({ subnetIds: await twoSubnets() }),
    byHand: async () => {
      const name = uniqueName("dbsg-by-hand");
      await rds.send(
        new CreateDBSubnetGroupCommand({
          DBSubnetGroupName: name,
          DBSubnetGroupDescription: "by hand",
          SubnetIds: await twoSubnets(),
        }),
      );
      return name;
    },
    home: { region: "us-east-1" },
    exists: async (name) =>
      rds.send(new DescribeDBSubnetGroupsCommand({ DBSubnetGroupName: name })).then(
        (o) => (o.DBSubnetGroups ?? []).length === 1,
        () => false,
      ),
    remove: async (name) => {
      await rds.send(new DeleteDBSubnetGroupCommand({ DBSubnetGroupName: name }));
    },
  },
  {
    cloud: "AWS (RDS DescribeDBInstances)",
    def: DBInstance,
    alias: "rds.dbinstance",
    providerConfig: (pc) => createAwsProviderConfig(kube, pc),
    managedForProvider: {
      engine: "postgres",
      dbInstanceClass: "db.t3.micro",
      allocatedStorage: 20,
      masterUsername: "dbadmin",
      skipFinalSnapshot: true,
    },
    managedSecret: true,
    byHand: async () => {
      const name = uniqueName("db-by-hand");
      await rds.send(
        new CreateDBInstanceCommand({
          DBInstanceIdentifier: name,
          Engine: "postgres",
          DBInstanceClass: "db.t3.micro",
          AllocatedStorage: 20,
          MasterUsername: "byhand",
          MasterUserPassword: "By-Hand-Passw0rd",
        }),
      );
      return name;
    },
    // The fields its schema requires come along: the written object applies as it is.
    home: { region: "us-east-1", engine: "postgres", dbInstanceClass: "db.t3.micro" },
    exists: async (name) =>
      rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: name })).then(
        (o) => (o.DBInstances ?? []).length === 1,
        () => false,
      ),
    remove: async (name) => {
      await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: name, SkipFinalSnapshot: true }));
    },
  },
  {
    cloud: "Azure (Resource Groups - List)",
    def: ResourceGroup,
    alias: "resources.resourcegroup",
    providerConfig: (pc) => createAzureProviderConfig(kube, pc),
    managedForProvider: { location: "westeurope" },
    byHand: async () => {
      const name = uniqueName("rg-by-hand");
      await arm.resourceGroups.createOrUpdate(name, { location: "westeurope" });
      return name;
    },
    home: { location: "westeurope" },
    exists: async (name) => (await arm.resourceGroups.checkExistence(name)).body,
    remove: async (name) => {
      await arm.resourceGroups.beginDeleteAndWait(name);
    },
  },
  {
    cloud: "Azure (Virtual Networks - List, group by group)",
    def: VirtualNetwork,
    alias: "network.virtualnetwork",
    providerConfig: async (pc) => {
      await createAzureProviderConfig(kube, pc);
      await arm.resourceGroups.createOrUpdate(VNET_RG, { location: "westeurope" });
    },
    managedForProvider: {
      resourceGroupName: VNET_RG,
      location: "westeurope",
      addressSpace: { addressPrefixes: ["10.95.0.0/16"] },
    },
    byHand: async () => {
      const name = uniqueName("vnet-by-hand");
      await network.virtualNetworks
        .createOrUpdate(VNET_RG, name, {
          location: "westeurope",
          addressSpace: { addressPrefixes: ["10.96.0.0/16"] },
        })
        .submitted();
      return name;
    },
    home: { resourceGroupName: VNET_RG, location: "westeurope" },
    objectName: (name) => `${VNET_RG}-${name}`.toLowerCase(),
    exists: async (name) =>
      network.virtualNetworks.get(VNET_RG, name).then(
        () => true,
        () => false,
      ),
    remove: async (name) => {
      await network.virtualNetworks.delete(VNET_RG, name).submitted();
    },
  },
  {
    cloud: "Google (Pub/Sub ListTopics)",
    def: Topic,
    alias: "pubsub.topic",
    providerConfig: (pc) => createGcpProviderConfig(kube, pc),
    managedForProvider: {},
    byHand: async () => {
      const name = uniqueName("topic-by-hand");
      await ps.createTopic(name);
      return name;
    },
    home: {},
    exists: async (name) => (await ps.topic(name).exists())[0],
    remove: async (name) => {
      await ps.topic(name).delete();
    },
  },
  {
    cloud: "Google (Pub/Sub projects.subscriptions.list)",
    def: Subscription,
    alias: "pubsub.subscription",
    providerConfig: (pc) => createGcpProviderConfig(kube, pc),
    managedForProvider: async () => {
      const topic = uniqueName("topic-for-managed-sub");
      await ps.createTopic(topic);
      return { topic };
    },
    byHand: async () => {
      const topic = uniqueName("topic-for-sub-by-hand");
      await ps.createTopic(topic);
      const name = uniqueName("sub-by-hand");
      await ps.topic(topic).createSubscription(name);
      return name;
    },
    // The topic is observed and late-initialized: an Observe-only subscription needs only its name.
    home: {},
    exists: async (name) => (await ps.subscription(name).exists())[0],
    remove: async (name) => {
      await ps.subscription(name).delete();
    },
  },
];

describe.each(CASES)("driftless import: $cloud", (c) => {
  const PC = uniqueName("pc-import");
  beforeAll(async () => {
    await c.providerConfig(PC);
  });

  it(`writes what the list names, skips the managed one; the written ${c.def.kind} becomes Ready in Observe`, async () => {
    const manual = await c.byHand();
    const managed = uniqueName(`${c.def.kind.toLowerCase()}-managed`);
    await kube.create(
      c.def,
      managedObject(c.def, managed, PC, {
        forProvider:
          typeof c.managedForProvider === "function" ? await c.managedForProvider() : c.managedForProvider,
        connectionSecret: c.managedSecret ?? false,
      }),
    );
    await settle(newReconciler(kube), keyOf(c.def, managed));
    expect(conditionOf(await getMr(kube, c.def, managed), "Ready")?.status).toBe("True");

    const { counts, byExt } = await runImport(PC, c.alias);
    // Other suites' resources share the stack's account: every one is either written or already managed.
    const n = counts(c.alias);
    expect(n.written + n.managed).toBe(n.found);
    expect(n.managed).toBeGreaterThanOrEqual(1);
    expect(byExt(managed)).toBeUndefined();
    const written = byExt(manual) as Written;
    expect(written).toEqual({
      apiVersion: c.def.apiVersion,
      kind: c.def.kind,
      metadata: {
        name: c.objectName?.(manual) ?? manual,
        annotations: { [Annotations.externalName]: manual },
      },
      spec: { managementPolicies: ["Observe"], providerConfigRef: { name: PC }, forProvider: c.home },
    });

    // Applied as written: Ready in Observe; deleted again, it leaves the cloud as it was.
    const r = newReconciler(kube);
    await appliesReady(r, c.def, written);
    await kube.delete(c.def, written.metadata.name);
    await settle(r, keyOf(c.def, written.metadata.name));
    expect(await getMr(kube, c.def, written.metadata.name)).toBeUndefined();
    expect(r.externalCalls).toMatchObject({ create: 0, update: 0, delete: 0 });
    expect(await c.exists(manual)).toBe(true);
    await c.remove(manual);
  });
});

describe("driftless import: generated Google kinds (their list methods)", () => {
  const PC = uniqueName("pc-import-gcpgen");
  const TYPE = "secretmanager.googleapis.com/Secret";
  let fake: GoogleGenericFake;
  let def: ManagedKindDef;
  let r: Reconciler;
  beforeAll(async () => {
    generateGcp();
    fake = await startGoogleGenericFake({ opPolls: 0 });
    const spec = googleGenSpecs([TYPE]).get(TYPE) as GoogleKindSpec;
    def = googleKindOf(spec);
    await installCrds(kube, [def]);
    await createGcpProviderConfig(kube, PC, {
      credentials: "InjectedIdentity",
      endpoint: { apis: `${fake.url}/{api}` },
    });
    r = new Reconciler(
      kube,
      new KindRegistry(withNamespacedVariants(googleProviders([spec], { pollDelaysMs: [] }))),
      {
        creationGracePeriodMs: 0,
      },
    );
  }, 120_000);
  afterAll(async () => {
    await removeCrds(kube, [def]);
    await fake?.close();
  });

  it("writes the secrets the list method names, skips the managed one; the written Secret becomes Ready in Observe", async () => {
    const manual = uniqueName("secret-by-hand");
    const made = await fetch(
      `${fake.url}/secretmanager/v1/projects/${gcpProject()}/secrets?secretId=${manual}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ replication: { automatic: {} } }),
      },
    );
    expect(made.status, await made.text()).toBe(200);
    const managed = uniqueName("secret-managed");
    await kube.create(
      def,
      managedObject(def, managed, PC, {
        forProvider: { replication: { automatic: {} } },
        connectionSecret: false,
      }),
    );
    await settle(r, keyOf(def, managed));
    expect(conditionOf(await getMr(kube, def, managed), "Ready")?.status).toBe("True");

    const { counts, byExt } = await runImport(PC, "secretmanager.secret", {
      DRIFTLESS_ACTIVATE: `${def.plural}.${def.group}`,
    });
    expect(counts("secretmanager.secret")).toEqual({ found: 2, written: 1, managed: 1 });
    const written = byExt(manual) as Written;
    expect(written.spec).toEqual({
      managementPolicies: ["Observe"],
      providerConfigRef: { name: PC },
      forProvider: {},
    });
    const creates = r.externalCalls.create;
    await appliesReady(r, def, written);
    expect(r.externalCalls).toMatchObject({ create: creates, update: 0, delete: 0 });
  });
});

describe("driftless import: generated regional and zonal Compute kinds (aggregatedList)", () => {
  const PC = uniqueName("pc-import-gcpagg");
  const kindOf = (kind: string) => {
    const type = `compute.googleapis.com/${kind}`;
    return googleGenSpecs([type]).get(type) as GoogleKindSpec;
  };
  let fake: GoogleGenericFake;
  let address: ManagedKindDef;
  let disk: ManagedKindDef;
  let r: Reconciler;
  beforeAll(async () => {
    generateGcp();
    fake = await startGoogleGenericFake({ opPolls: 0 });
    const specs = [kindOf("Address"), kindOf("Disk")];
    [address, disk] = specs.map(googleKindOf) as [ManagedKindDef, ManagedKindDef];
    await installCrds(kube, [address, disk]);
    await createGcpProviderConfig(kube, PC, {
      credentials: "InjectedIdentity",
      endpoint: { apis: `${fake.url}/{api}` },
    });
    r = new Reconciler(
      kube,
      new KindRegistry(withNamespacedVariants(googleProviders(specs, { pollDelaysMs: [] }))),
      { creationGracePeriodMs: 0 },
    );
  }, 120_000);
  afterAll(async () => {
    await removeCrds(kube, [address, disk]);
    await fake?.close();
  });

  const insert = async (scope: string, collection: string, body: Record<string, unknown>) => {
    const res = await fetch(
      `${fake.url}/compute/compute/v1/projects/${gcpProject()}/${scope}/${collection}`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      },
    );
    expect(res.status, await res.text()).toBe(200);
  };

  it("lists every region's addresses and every zone's disks in one aggregatedList each; a name in two regions is two objects; the managed one is skipped; written objects become Ready in Observe", async () => {
    const twice = uniqueName("addr-by-hand");
    await insert("regions/us-central1", "addresses", { name: twice });
    await insert("regions/europe-west1", "addresses", { name: twice });
    const zonal = uniqueName("disk-by-hand");
    await insert("zones/us-central1-a", "disks", { name: zonal });
    // A regional disk is another kind (RegionDisk): aggregated/disks lists it under regions/, import of Disk does not.
    const regional = uniqueName("rdisk-by-hand");
    await insert("regions/us-central1", "disks", { name: regional });
    const managed = uniqueName("addr-managed");
    await kube.create(
      address,
      managedObject(address, managed, PC, {
        forProvider: { region: "us-central1" },
        connectionSecret: false,
      }),
    );
    await settle(r, keyOf(address, managed));
    expect(conditionOf(await getMr(kube, address, managed), "Ready")?.status).toBe("True");

    fake.reset();
    const { counts, objects } = await runImport(PC, "compute.address,compute.disk", {
      DRIFTLESS_ACTIVATE: [address, disk].map((d) => `${d.plural}.${d.group}`).join(","),
    });
    expect(counts("compute.address")).toEqual({ found: 3, written: 2, managed: 1 });
    expect(counts("compute.disk")).toEqual({ found: 1, written: 1, managed: 0 });
    // One aggregatedList per kind (one page each), no per-region or per-zone list.
    expect(fake.stats()).toEqual({ "GET compute aggregated": 2 });
    const summary = objects
      .map((o) => [
        o.kind,
        o.metadata.name,
        o.metadata.annotations?.[Annotations.externalName],
        o.spec.forProvider,
      ])
      .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(summary).toEqual(
      [
        ["Address", `europe-west1-${twice}`, twice, { region: "europe-west1" }],
        ["Address", `us-central1-${twice}`, twice, { region: "us-central1" }],
        ["Disk", `us-central1-a-${zonal}`, zonal, { zone: "us-central1-a" }],
      ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
    );
    const calls = { ...r.externalCalls };
    for (const o of objects) await appliesReady(r, o.kind === "Disk" ? disk : address, o);
    expect(r.externalCalls).toMatchObject({
      create: calls.create,
      update: calls.update,
      delete: calls.delete,
    });
  });

  it("the fake answers aggregatedList as Compute does: items keyed by scope, paged with maxResults; a filter is refused", async () => {
    const agg = (q: Record<string, string>) =>
      fetch(
        `${fake.url}/compute/compute/v1/projects/${gcpProject()}/aggregated/addresses?${new URLSearchParams(q)}`,
      );
    const first = (await (await agg({ maxResults: "1" })).json()) as {
      kind: string;
      items: Record<string, { addresses: unknown[] }>;
      nextPageToken?: string;
    };
    expect(first.kind).toBe("compute#addressAggregatedList");
    expect(Object.values(first.items).flatMap((s) => s.addresses)).toHaveLength(1);
    expect(Object.keys(first.items)[0]).toMatch(/^regions\//);
    expect(first.nextPageToken).toBeDefined();
    expect((await agg({ filter: "name = x" })).status).toBe(400);
    // A collection Compute has no aggregatedList for (global addresses only: globalAddresses has none).
    const none = await fetch(
      `${fake.url}/compute/compute/v1/projects/${gcpProject()}/aggregated/instantSnapshotGroups`,
    );
    expect(none.status).toBe(404);
  });
});

describe("driftless import: Cloud SQL (instances, and their databases and users instance by instance)", () => {
  const PC = uniqueName("pc-import-sql");
  const project = gcpProject();
  let sql: SqlFake;
  beforeAll(async () => {
    // The suite's own fake: the counts below are exact.
    sql = await startSqlFake();
    await createGcpProviderConfig(kube, PC, { credentials: "InjectedIdentity", endpoint: { sql: sql.url } });
  });
  afterAll(async () => {
    await sql?.close();
  });

  /** A write made by hand on the fake (not through driftless), its operation read until DONE. */
  async function byHand(path: string, body: Record<string, unknown>) {
    const res = await fetch(`${sql.url}/sql/v1beta4/projects/${project}/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const op = (await res.json()) as { selfLink?: string; status?: string };
    expect(res.status, JSON.stringify(op)).toBe(200);
    await eventually(
      async () =>
        ((await (await fetch(String(op.selfLink))).json()) as { status?: string }).status === "DONE",
    );
  }
  const writes = () =>
    Object.entries(sql.stats())
      .filter(([k]) => !k.startsWith("GET "))
      .reduce((n, [, v]) => n + v, 0);

  it(
    "writes the PostgreSQL primaries, their databases and built-in users the lists name, within their instance; skips the managed ones; the written objects become Ready in Observe; 0 cloud writes",
    async () => {
      const manual = uniqueName("pg-by-hand");
      sql.seedInstance(project, manual, {
        databaseVersion: "POSTGRES_16",
        settings: { tier: "db-f1-micro" },
      });
      // Not the kind's: a MySQL instance is never listed, nor its databases.
      sql.seedInstance(project, uniqueName("mysql-by-hand"), {
        databaseVersion: "MYSQL_8_0",
        settings: { tier: "db-f1-micro" },
      });
      await byHand(`instances/${manual}/databases`, { name: "app" });
      await byHand(`instances/${manual}/users`, { name: "reporter", password: "by-hand-Passw0rd" });
      // Not the kind's: an IAM user (its name is a principal).
      await byHand(`instances/${manual}/users`, { name: "ops@example.com", type: "CLOUD_IAM_USER" });

      // Managed: an instance, and a database named "app" in it — the same name as the one by hand.
      const r = newReconciler(kube);
      const managed = uniqueName("pg-managed");
      await kube.create(
        DatabaseInstance,
        managedObject(DatabaseInstance, managed, PC, {
          forProvider: { databaseVersion: "POSTGRES_16", tier: "db-f1-micro" },
        }),
      );
      const managedDb = uniqueName("app-managed");
      await kube.create(
        Database,
        managedObject(Database, managedDb, PC, {
          forProvider: { instance: managed },
          annotations: { [Annotations.externalName]: "app" },
          connectionSecret: false,
        }),
      );
      for (const [def, name] of [
        [DatabaseInstance, managed],
        [Database, managedDb],
      ] as const)
        await eventually(
          async () => {
            await settle(r, keyOf(def, name));
            return conditionOf(await getMr(kube, def, name), "Ready")?.status === "True";
          },
          { what: `${def.kind} ${name} Ready` },
        );

      const before = writes();
      const { counts, objects, byExt } = await runImport(PC, "sql.databaseinstance,sql.database,sql.user");
      const of = (def: ManagedKindDef, name: string) =>
        objects.find((o) => o.kind === def.kind && o.metadata.name === name) as Written;
      const names = (def: ManagedKindDef) =>
        objects
          .filter((o) => o.kind === def.kind)
          .map((o) => o.metadata.name)
          .sort();
      expect(counts("sql.databaseinstance")).toEqual({ found: 2, written: 1, managed: 1 });
      expect(byExt(manual)?.spec).toEqual({
        managementPolicies: ["Observe"],
        providerConfigRef: { name: PC },
        forProvider: { region: "us-central1" },
      });

      // postgres and app in each instance; the managed instance's app is the managed one.
      expect(counts("sql.database")).toEqual({ found: 4, written: 3, managed: 1 });
      expect(names(Database)).toEqual([`${managed}-postgres`, `${manual}-app`, `${manual}-postgres`].sort());
      const app = of(Database, `${manual}-app`);
      expect(app.metadata.annotations?.[Annotations.externalName]).toBe("app");
      expect(app.spec.forProvider).toEqual({ instance: manual });

      expect(counts("sql.user")).toEqual({ found: 3, written: 3, managed: 0 });
      expect(names(User)).toEqual([`${managed}-postgres`, `${manual}-postgres`, `${manual}-reporter`].sort());
      const reporter = of(User, `${manual}-reporter`);
      expect(reporter.spec.forProvider).toEqual({ instance: manual });
      expect(writes()).toBe(before);

      // Applied as written: Ready in Observe, and nothing in the cloud changes.
      const calls = { ...r.externalCalls };
      await appliesReady(r, DatabaseInstance, byExt(manual) as Written);
      await appliesReady(r, Database, app);
      await appliesReady(r, User, reporter);
      expect(r.externalCalls).toMatchObject({
        create: calls.create,
        update: calls.update,
        delete: calls.delete,
      });
      expect(writes()).toBe(before);
      expect(sql.passwordOf(project, manual, "reporter")).toBe("by-hand-Passw0rd");
    },
    SLOW,
  );
});

describe("driftless import: generated Azure kinds (ARM lists, nextLink pages)", () => {
  const PC = uniqueName("pc-import-azgen");
  const TYPE = "Microsoft.Network/applicationSecurityGroups";
  const GROUPS = [uniqueName("rg-import-a"), uniqueName("rg-import-b")];
  /** Per resource group: more than one list page (the fake links pages of 2 with nextLink). */
  const PER_GROUP = 3;
  /** A child type of it: listed under each parent, the parents listed first. */
  const CHILD_TYPE = "Microsoft.Network/applicationSecurityGroups/addressPrefixSets";
  /** A subscription-scoped type: one list of the subscription. */
  const SUB_TYPE = "Microsoft.Resources/resourceGroups";
  let fake: FakeServer;
  let spec: AzureKindSpec;
  let def: ManagedKindDef;
  let child: { spec: AzureKindSpec; def: ManagedKindDef };
  let sub: { spec: AzureKindSpec; def: ManagedKindDef };
  let r: Reconciler;
  const put = async (group: string, name: string) => {
    const [ns, type] = spec.type.split("/");
    const res = await fetch(
      `${fake.url}/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${group}/providers/${ns}/${type}/${name}?api-version=${spec.apiVersion}`,
      {
        method: "PUT",
        headers: { authorization: "Bearer user-tooling", "content-type": "application/json" },
        body: JSON.stringify({ location: "westeurope" }),
      },
    );
    expect(res.status, await res.text()).toBeLessThan(300);
  };
  beforeAll(async () => {
    generateAzure();
    const load = (type: string) => {
      const s = loadAzureSpec(loadAzureCatalog().kinds.find((k) => k.type === type) as never);
      return { spec: s, def: azureGenKindOf(s) };
    };
    ({ spec, def } = load(TYPE));
    child = load(CHILD_TYPE);
    sub = load(SUB_TYPE);
    fake = await startGenericArmFake({ listPageSize: 2 });
    await installCrds(kube, [def, child.def, sub.def]);
    await createAzureProviderConfig(kube, PC, { armEndpoint: fake.url, noStorage: true });
    for (const g of GROUPS)
      await armClient(fake.url).resourceGroups.createOrUpdate(g, { location: "westeurope" });
    r = new Reconciler(
      kube,
      new KindRegistry([
        ...managedKinds,
        ...withNamespacedVariants(azureGenProviders([spec, child.spec, sub.spec])),
      ]),
      { creationGracePeriodMs: 0 },
    );
  }, 120_000);
  afterAll(async () => {
    await removeCrds(kube, [def, child.def, sub.def]);
    await fake?.close();
  });

  it("lists every resource group's page by page, skips the managed one; the written object becomes Ready in Observe", async () => {
    const byHand = GROUPS.flatMap((g) =>
      Array.from({ length: PER_GROUP }, (_, i) => ({ group: g, name: `asg-${g}-${i}` })),
    );
    for (const { group, name } of byHand) await put(group, name);
    const managed = uniqueName("asg-managed");
    await kube.create(
      def,
      managedObject(def, managed, PC, {
        forProvider: { location: "westeurope", resourceGroupName: GROUPS[0] },
        connectionSecret: false,
      }),
    );
    for (let i = 0; i < 4; i++) await r.reconcile(keyOf(def, managed));
    expect(conditionOf(await getMr(kube, def, managed), "Ready")?.status).toBe("True");

    const alias = `${def.group.split(".")[0]}.${def.kind.toLowerCase()}`;
    const { counts, byExt } = await runImport(PC, alias, {
      DRIFTLESS_ACTIVATE: `${def.plural}.${def.group}`,
    });
    expect(counts(alias)).toEqual({ found: byHand.length + 1, written: byHand.length, managed: 1 });
    for (const { group, name } of byHand)
      expect(byExt(name)?.spec.forProvider, name).toEqual({
        resourceGroupName: group,
        location: "westeurope",
      });

    const first = byExt(byHand[0]?.name as string) as Written;
    const creates = r.externalCalls.create;
    await appliesReady(r, def, first);
    expect(r.externalCalls).toMatchObject({ create: creates, update: 0, delete: 0 });
  });

  it("lists a child type under every parent (the parents listed first, each with its own api-version); a child is held only with its parent", async () => {
    const [ns, parentSeg, childSeg] = child.spec.type.split("/");
    const group = GROUPS[1] as string;
    const parents = [uniqueName("asg-parent-a"), uniqueName("asg-parent-b")];
    for (const p of parents) await put(group, p);
    // One child name in both parents: both are listed and written, under their parents' names.
    for (const p of parents) {
      const res = await fetch(
        `${fake.url}/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${group}/providers/${ns}/${parentSeg}/${p}/${childSeg}/shared?api-version=${child.spec.apiVersion}`,
        {
          method: "PUT",
          headers: { authorization: "Bearer user-tooling", "content-type": "application/json" },
          body: JSON.stringify({ properties: { addressPrefixes: ["10.98.0.0/24"] } }),
        },
      );
      expect(res.status, await res.text()).toBeLessThan(300);
    }
    const field = (child.spec.parents[0] as { field: string }).field;
    // Held: parent b's, by an Observe-only object naming it.
    const held = uniqueName("aps-held");
    await kube.create(
      child.def,
      managedObject(child.def, held, PC, {
        forProvider: { resourceGroupName: group, [field]: parents[1] },
        annotations: { [Annotations.externalName]: "shared" },
        spec: { managementPolicies: ["Observe"] },
        connectionSecret: false,
      }),
    );
    const alias = `${child.def.group.split(".")[0]}.${child.def.kind.toLowerCase()}`;
    const { counts, objects } = await runImport(PC, alias, {
      DRIFTLESS_ACTIVATE: [def, child.def].map((d) => `${d.plural}.${d.group}`).join(","),
    });
    expect(counts(alias)).toEqual({ found: 2, written: 1, managed: 1 });
    const [written] = objects.filter((o) => o.kind === child.def.kind);
    expect(written?.metadata.name).toBe(`${group}-${parents[0]}-shared`.toLowerCase());
    expect(written?.spec.forProvider).toEqual({ resourceGroupName: group, [field]: parents[0] });
    const creates = r.externalCalls.create;
    await appliesReady(r, child.def, written as Written);
    expect(r.externalCalls).toMatchObject({ create: creates, update: 0, delete: 0 });
  });

  it("lists a subscription-scoped type in one list of the subscription", async () => {
    const alias = `${sub.def.group.split(".")[0]}.${sub.def.kind.toLowerCase()}`;
    const { counts, byExt } = await runImport(PC, alias, {
      DRIFTLESS_ACTIVATE: `${sub.def.plural}.${sub.def.group}`,
    });
    // Every group of the fake's subscription (this suite's own among them), none managed by this kind.
    const n = counts(alias);
    expect(n.found).toBeGreaterThanOrEqual(GROUPS.length);
    expect(n.written).toBe(n.found);
    for (const g of GROUPS) expect(byExt(g)?.spec.forProvider, g).toEqual({ location: "westeurope" });
    const creates = r.externalCalls.create;
    await appliesReady(r, sub.def, byExt(GROUPS[0] as string) as Written);
    expect(r.externalCalls).toMatchObject({ create: creates, update: 0, delete: 0 });
  });
});
