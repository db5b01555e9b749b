// Twenty generated AWS kinds (CloudFormation types through Cloud Control) against the real API server
// and the Cloud Control fake: create, observe, update (a patch of what drifted), drift put back, delete,
// import; then the Cloud Control specifics — asynchronous creates, an interrupted create resumed by its
// idempotency token, failed requests, create-only fields, write-only secrets, secret attributes, throttling.
import {
  CreateResourceCommand,
  type ProgressEvent,
  UpdateResourceCommand,
} from "@aws-sdk/client-cloudcontrol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { CREATE_REQUEST_ANNOTATION } from "../../../shared/providers/awscc/cloudcontrol.ts";
import { desiredModel } from "../../../shared/providers/awscc/model.ts";
import { awsccRegistry, awsccTestbed, requestDone, type startFake } from "../../support/awscc.ts";
import { CrashBeforeSucceeded, expectAvailable, managedObject } from "../../support/conformance.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { captureLogger, conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;

interface Fixture {
  type: string;
  forProvider: (name: string) => Json;
  /** A spec change, and where it shows on the wire (CloudFormation name) with its value there. */
  change: Json;
  wire: { prop: string; after: unknown };
}

const tags = (v: string) => [{ Key: "team", Value: v }];
const FIXTURES: Fixture[] = [
  {
    type: "AWS::DynamoDB::Table",
    forProvider: () => ({
      keySchema: [{ attributeName: "id", keyType: "HASH" }],
      attributeDefinitions: [{ attributeName: "id", attributeType: "S" }],
      billingMode: "PAY_PER_REQUEST",
    }),
    change: { tableClass: "STANDARD_INFREQUENT_ACCESS" },
    wire: { prop: "TableClass", after: "STANDARD_INFREQUENT_ACCESS" },
  },
  {
    type: "AWS::SNS::Topic",
    forProvider: () => ({ displayName: "one" }),
    change: { displayName: "two" },
    wire: { prop: "DisplayName", after: "two" },
  },
  {
    type: "AWS::KMS::Key",
    forProvider: () => ({ description: "one" }),
    change: { description: "two" },
    wire: { prop: "Description", after: "two" },
  },
  {
    type: "AWS::IAM::Role",
    forProvider: () => ({
      assumeRolePolicyDocument: '{"Version":"2012-10-17","Statement":[]}',
      description: "one",
    }),
    change: { description: "two" },
    wire: { prop: "Description", after: "two" },
  },
  {
    type: "AWS::Logs::LogGroup",
    forProvider: () => ({ retentionInDays: 7 }),
    change: { retentionInDays: 14 },
    wire: { prop: "RetentionInDays", after: 14 },
  },
  {
    type: "AWS::ECR::Repository",
    forProvider: () => ({ imageTagMutability: "MUTABLE" }),
    change: { imageTagMutability: "IMMUTABLE" },
    wire: { prop: "ImageTagMutability", after: "IMMUTABLE" },
  },
  {
    type: "AWS::SecretsManager::Secret",
    forProvider: (n) => ({ name: n, description: "one" }),
    change: { description: "two" },
    wire: { prop: "Description", after: "two" },
  },
  {
    type: "AWS::Route53::HostedZone",
    forProvider: (n) => ({ name: `${n}.example.com`, hostedZoneTags: { team: "a" } }),
    change: { hostedZoneTags: { team: "b" } },
    wire: { prop: "HostedZoneTags", after: tags("b") },
  },
  {
    type: "AWS::ElastiCache::SubnetGroup",
    forProvider: () => ({ description: "one", subnetIds: ["subnet-0a"] }),
    change: { description: "two" },
    wire: { prop: "Description", after: "two" },
  },
  {
    type: "AWS::Lambda::Function",
    forProvider: () => ({
      code: { zipFile: "exports.handler = async () => 1" },
      role: "arn:aws:iam::123456789012:role/fn",
      runtime: "nodejs22.x",
      handler: "index.handler",
      timeout: 3,
    }),
    change: { timeout: 10 },
    wire: { prop: "Timeout", after: 10 },
  },
  {
    type: "AWS::Events::Rule",
    forProvider: (n) => ({ name: n, scheduleExpression: "rate(5 minutes)", state: "ENABLED" }),
    change: { state: "DISABLED" },
    wire: { prop: "State", after: "DISABLED" },
  },
  {
    type: "AWS::Kinesis::Stream",
    forProvider: () => ({ shardCount: 1, retentionPeriodHours: 24 }),
    change: { retentionPeriodHours: 48 },
    wire: { prop: "RetentionPeriodHours", after: 48 },
  },
  {
    type: "AWS::EFS::FileSystem",
    forProvider: () => ({ throughputMode: "bursting" }),
    change: { throughputMode: "elastic" },
    wire: { prop: "ThroughputMode", after: "elastic" },
  },
  {
    type: "AWS::SSM::Parameter",
    forProvider: () => ({ type: "String", value: "one" }),
    change: { value: "two" },
    wire: { prop: "Value", after: "two" },
  },
  {
    type: "AWS::SQS::Queue",
    forProvider: () => ({ visibilityTimeout: 30 }),
    change: { visibilityTimeout: 60 },
    wire: { prop: "VisibilityTimeout", after: 60 },
  },
  {
    type: "AWS::S3::Bucket",
    forProvider: () => ({ tags: { team: "a" } }),
    change: { tags: { team: "b" } },
    wire: { prop: "Tags", after: tags("b") },
  },
  {
    type: "AWS::ECS::Cluster",
    forProvider: () => ({ tags: { team: "a" } }),
    change: { tags: { team: "b" } },
    wire: { prop: "Tags", after: tags("b") },
  },
  {
    type: "AWS::StepFunctions::Activity",
    forProvider: (n) => ({ name: n, tags: { team: "a" } }),
    change: { tags: { team: "b" } },
    wire: { prop: "Tags", after: tags("b") },
  },
  {
    type: "AWS::EC2::VPC",
    forProvider: () => ({ cidrBlock: "10.0.0.0/16", instanceTenancy: "default" }),
    change: { instanceTenancy: "dedicated" },
    wire: { prop: "InstanceTenancy", after: "dedicated" },
  },
  {
    type: "AWS::Glue::Database",
    forProvider: () => ({ catalogId: "123456789012", databaseInput: { description: "one" } }),
    change: { databaseInput: { description: "two" } },
    wire: { prop: "DatabaseInput", after: { Description: "two" } },
  },
];

const kube = newKube();
let fake: Awaited<ReturnType<typeof startFake>>;
const specs = new Map<string, AwsccKindSpec>();
const defs = new Map<string, ManagedKindDef>();
const PC = uniqueName("pc-awscc");
let r: Reconciler;

const EXTRA = ["AWS::IAM::User", "AWS::AmazonMQ::Broker", "AWS::Cognito::UserPoolClient"];

let bed: Awaited<ReturnType<typeof awsccTestbed>>;

beforeAll(async () => {
  bed = await awsccTestbed(kube, PC, [...FIXTURES.map((f) => f.type), ...EXTRA]);
  fake = bed.fake;
  r = bed.reconciler;
  for (const [t, s] of bed.specs) specs.set(t, s);
  for (const [t, d] of bed.defs) defs.set(t, d);
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const defOf = (t: string) => defs.get(t) as ManagedKindDef;
const object = (
  t: string,
  name: string,
  forProvider: Json,
  extra: { annotations?: Json; spec?: Json } = {},
) => managedObject(defOf(t), name, PC, { forProvider, connectionSecret: false, ...(extra as object) });
const wireOf = async (t: string, identifier: string) =>
  (await fake.resources(t)).find((x) => x.identifier === identifier)?.model;
const externalNameOf = async (t: string, name: string) =>
  (await getMr(kube, defOf(t), name))?.metadata.annotations?.[Annotations.externalName] ?? "";
const nameFor = (t: string) => uniqueName(t.split("::")[2]?.toLowerCase() ?? "x");

/** Creates a resource behind driftless's back, the way another tool would; returns its identifier. */
async function createInCloud(t: string, cloudName: string, forProvider: Json): Promise<string> {
  const spec = specs.get(t) as AwsccKindSpec;
  const cc = fake.client();
  const model = desiredModel(spec, { forProvider, externalName: cloudName });
  const out = await cc.send(new CreateResourceCommand({ TypeName: t, DesiredState: JSON.stringify(model) }));
  return (await finish(out.ProgressEvent)).Identifier ?? "";
}

/** Waits for a request of our own to end, as the SDK's user would. */
async function finish(ev: ProgressEvent | undefined) {
  const done = await requestDone(fake.client(), ev);
  expect(done.OperationStatus).toBe("SUCCESS");
  return done;
}

/** Changes a resource behind driftless's back (the console, another tool). */
async function changeInCloud(t: string, id: string, patch: unknown[]) {
  const out = await fake
    .client()
    .send(new UpdateResourceCommand({ TypeName: t, Identifier: id, PatchDocument: JSON.stringify(patch) }));
  await finish(out.ProgressEvent);
}

describe.each(FIXTURES)("generated $type through Cloud Control", (fx) => {
  it("creates, observes, updates only what changed, puts drift back and deletes", async () => {
    const t = fx.type;
    const def = defOf(t);
    const name = nameFor(t);
    await kube.create(def, object(t, name, fx.forProvider(name)));

    await settle(r, keyOf(def, name));

    const mr = await getMr(kube, def, name);
    const id = await externalNameOf(t, name);
    expectAvailable(mr, specs.get(t)?.externalName === "fromAnnotation" ? name : undefined);
    expect(id).not.toBe("");
    expect(await wireOf(t, id)).toBeDefined();
    expect(mr?.metadata.annotations?.[CREATE_REQUEST_ANNOTATION]).toMatch(/^1\//);

    // In sync: one GetResource, nothing written.
    const before = await fake.requests();
    expect((await r.reconcile(keyOf(def, name))).outcome).toBe("in-sync");
    const during = await fake.requests();
    expect((during.GetResource ?? 0) - (before.GetResource ?? 0)).toBe(1);
    expect(during.UpdateResource ?? 0).toBe(before.UpdateResource ?? 0);

    await kube.patch(def, name, { spec: { forProvider: fx.change } });
    const results = await settle(r, keyOf(def, name));
    expect(results.map((x) => x.outcome)).toContain("updated");
    // A kind's tag property carries Crossplane's default tags beside the spec's.
    const field = def.tagging?.field ?? "";
    const isTags = fx.wire.prop === `${field.charAt(0).toUpperCase()}${field.slice(1)}`;
    const after = isTags
      ? [
          ...Object.entries(defaultTags(def, name, PC)).map(([Key, Value]) => ({ Key, Value })),
          ...(fx.wire.after as unknown[]),
        ]
      : fx.wire.after;
    expect((await wireOf(t, id))?.[fx.wire.prop]).toEqual(after);

    // Drift: someone changes it in the cloud; the next reconcile puts the spec's value back.
    const drifted = await fake.requests();
    await changeInCloud(t, id, [{ op: "remove", path: `/${fx.wire.prop}` }]);
    expect((await wireOf(t, id))?.[fx.wire.prop]).toBeUndefined();
    await settle(r, keyOf(def, name));
    expect((await wireOf(t, id))?.[fx.wire.prop]).toEqual(after);
    expect((await fake.requests()).UpdateResource).toBe((drifted.UpdateResource ?? 0) + 2);

    await kube.delete(def, name);
    await settle(r, keyOf(def, name));
    expect(await getMr(kube, def, name)).toBeUndefined();
    expect(await wireOf(t, id)).toBeUndefined();
  });

  it("imports an existing resource read-only (Observe) and never writes to it", async () => {
    const t = fx.type;
    const def = defOf(t);
    const name = nameFor(t);
    const cloudName = `${name}-cloud`;
    const id = await createInCloud(t, cloudName, fx.forProvider(cloudName));
    await kube.create(
      def,
      object(
        t,
        name,
        {},
        {
          annotations: { [Annotations.externalName]: id },
          spec: { managementPolicies: ["Observe"] },
        },
      ),
    );

    await settle(r, keyOf(def, name));
    await kube.patch(def, name, { spec: { forProvider: fx.change } });
    const before = await fake.requests();
    await settle(r, keyOf(def, name));

    const mr = await getMr(kube, def, name);
    expect(conditionOf(mr, "Ready")).toMatchObject({ status: "True", reason: "Available" });
    expect(conditionOf(mr, "Synced")).toMatchObject({ status: "True" });
    const after = await fake.requests();
    expect(after.UpdateResource ?? 0).toBe(before.UpdateResource ?? 0);
    expect(after.CreateResource ?? 0).toBe(before.CreateResource ?? 0);
    await kube.delete(def, name);
    await settle(r, keyOf(def, name));
    expect(await wireOf(t, id)).toBeDefined();
  });
});

describe("Cloud Control specifics", () => {
  const TOPIC = "AWS::SNS::Topic";
  const REPO = "AWS::ECR::Repository";

  it("follows a create that takes several polls: Creating until Cloud Control reports success", async () => {
    await fake.control("config", { pollsToComplete: 12 });
    try {
      const def = defOf(TOPIC);
      const name = nameFor(TOPIC);
      await kube.create(def, object(TOPIC, name, { displayName: `slow-${name}` }));
      expect((await r.reconcile(keyOf(def, name))).outcome).toBe("created");
      const first = await getMr(kube, def, name);
      expect(first?.metadata.annotations?.[CREATE_REQUEST_ANNOTATION]).toBeTruthy();
      await r.reconcile(keyOf(def, name));
      expect(conditionOf(await getMr(kube, def, name), "Ready")).toMatchObject({ reason: "Creating" });

      await settle(r, keyOf(def, name), 20);
      const mr = await getMr(kube, def, name);
      expectAvailable(mr);
      expect(await fake.resources(TOPIC)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ identifier: mr?.metadata.annotations?.[Annotations.externalName] }),
        ]),
      );
      // Never a second create while the first was running.
      expect(
        (await fake.resources(TOPIC)).filter((x) => x.model.DisplayName === `slow-${name}`),
      ).toHaveLength(1);
    } finally {
      await fake.control("config", { pollsToComplete: 1 });
    }
  });

  it("resumes an interrupted create with the same idempotency token: one resource, never two", async () => {
    const def = defOf(TOPIC);
    const name = nameFor(TOPIC);
    await kube.create(def, object(TOPIC, name, { displayName: `resume-${name}` }));
    const crashing = new Reconciler(
      new CrashBeforeSucceeded(kubeConfig()),
      awsccRegistry([...specs.values()]),
      {
        creationGracePeriodMs: 0,
        retryBaseMs: 1,
      },
    );
    await crashing.reconcile(keyOf(def, name)); // CreateResource sent, its result never recorded
    const after = new Reconciler(kube, awsccRegistry([...specs.values()]), {
      creationGracePeriodMs: 0,
      createPendingTimeoutMs: 0,
    });

    await settle(after, keyOf(def, name));

    expectAvailable(await getMr(kube, def, name));
    const mine = (await fake.resources(TOPIC)).filter((x) => x.model.DisplayName === `resume-${name}`);
    expect(mine).toHaveLength(1);
  });

  it("reports a create that fails at once in Synced (a create error, retried with backoff)", async () => {
    const def = defOf(TOPIC);
    const name = nameFor(TOPIC);
    await fake.control("fail", {
      operation: "CREATE",
      errorCode: "InvalidRequest",
      message: "display name refused",
    });
    await kube.create(def, object(TOPIC, name, { displayName: "bad" }));
    const [res] = await settle(r, keyOf(def, name));
    expect(res?.outcome).toBe("error");
    const synced = conditionOf(await getMr(kube, def, name), "Synced");
    expect(synced).toMatchObject({ status: "False" });
    expect(synced?.message).toContain("display name refused");
  });

  it("a create that fails after it was accepted stops until the spec changes, then is made anew", async () => {
    const def = defOf(TOPIC);
    const name = nameFor(TOPIC);
    await fake.control("config", { pollsToComplete: 8 });
    try {
      await fake.control("fail", {
        operation: "CREATE",
        errorCode: "InvalidRequest",
        message: "late refusal",
      });
      await kube.create(def, object(TOPIC, name, { displayName: "bad" }));
      expect((await r.reconcile(keyOf(def, name))).outcome).toBe("created");
      for (let i = 0; i < 4; i++) await r.reconcile(keyOf(def, name));
      const synced = conditionOf(await getMr(kube, def, name), "Synced");
      expect(synced?.message).toContain("late refusal");
      const creates = (await fake.requests()).CreateResource;
      await r.reconcile(keyOf(def, name));
      expect((await fake.requests()).CreateResource).toBe(creates);
    } finally {
      await fake.control("config", { pollsToComplete: 1 });
    }
    await kube.patch(def, name, { spec: { forProvider: { displayName: "good" } } });
    await settle(r, keyOf(def, name));
    expectAvailable(await getMr(kube, def, name));
  });

  it("never updates a create-only field below the top level: Synced=False names it, the cloud is unchanged", async () => {
    // The registry schema: /properties/EncryptionConfiguration/EncryptionType is create-only.
    const def = defOf(REPO);
    const name = nameFor(REPO);
    await kube.create(def, object(REPO, name, { encryptionConfiguration: { encryptionType: "AES256" } }));
    await settle(r, keyOf(def, name));
    await kube.patch(def, name, {
      spec: { forProvider: { encryptionConfiguration: { encryptionType: "KMS" } } },
    });
    await settle(r, keyOf(def, name));
    const synced = conditionOf(await getMr(kube, def, name), "Synced");
    expect(synced).toMatchObject({ status: "False" });
    expect(synced?.message).toContain("immutable");
    expect(synced?.message).toContain("encryptionConfiguration");
    expect((await wireOf(REPO, name))?.EncryptionConfiguration).toEqual({ EncryptionType: "AES256" });
  });

  it("the fake refuses a create-only path in a patch, as Cloud Control does", async () => {
    const name = nameFor(REPO);
    const id = await createInCloud(REPO, name, { encryptionConfiguration: { encryptionType: "AES256" } });
    await expect(
      fake.client().send(
        new UpdateResourceCommand({
          TypeName: REPO,
          Identifier: id,
          PatchDocument: JSON.stringify([
            { op: "add", path: "/EncryptionConfiguration/EncryptionType", value: "KMS" },
          ]),
        }),
      ),
    ).rejects.toMatchObject({ name: "ValidationException" });
  });

  it("takes a write-only secret from a Secret, sends it, never compares or logs it", async () => {
    const t = "AWS::SecretsManager::Secret";
    const def = defOf(t);
    const name = nameFor(t);
    const value = `s3cr3t-${name}`;
    await kube.createSecret({ metadata: { name, namespace: "default" }, stringData: { value } });
    const { lines, logger } = captureLogger();
    const logged = new Reconciler(kube, awsccRegistry([...specs.values()]), {
      creationGracePeriodMs: 0,
      logger,
      // A cluster-scoped resource without a connection Secret reads Secrets only where the platform allows.
      secretRefNamespaces: ["default"],
    });
    await kube.create(
      def,
      object(t, name, { name, secretStringSecretRef: { namespace: "default", name, key: "value" } }),
    );
    await settle(logged, keyOf(def, name));
    const mr = await getMr(kube, def, name);
    expectAvailable(mr);
    const id = await externalNameOf(t, name);
    expect((await wireOf(t, id))?.SecretString).toBe(value);
    expect((await logged.reconcile(keyOf(def, name))).outcome).toBe("in-sync");
    expect(lines.join("\n") + JSON.stringify(mr)).not.toContain(value);
  });

  it("reads secrets below the top level (an object's, a list item's) from Secrets: sent on create, never stored, compared, re-sent or logged", async () => {
    const USER = "AWS::IAM::User";
    const BROKER = "AWS::AmazonMQ::Broker";
    const name = nameFor(USER);
    const value = `n3st3d-${name}`;
    await kube.createSecret({ metadata: { name, namespace: "default" }, stringData: { value } });
    const ref = { namespace: "default", name, key: "value" };
    const { lines, logger } = captureLogger();
    const logged = new Reconciler(kube, awsccRegistry([...specs.values()]), {
      creationGracePeriodMs: 0,
      logger,
      // A cluster-scoped resource without a connection Secret reads Secrets only where the platform allows.
      secretRefNamespaces: ["default"],
    });
    // Prepare: a login profile's password (an object's member) and a broker user's (a list item's).
    await kube.create(
      defOf(USER),
      object(USER, name, {
        path: "/a/",
        loginProfile: { passwordSecretRef: ref, passwordResetRequired: false },
      }),
    );
    const broker = nameFor(BROKER);
    await kube.create(
      defOf(BROKER),
      object(BROKER, broker, {
        brokerName: broker,
        hostInstanceType: "mq.t3.micro",
        deploymentMode: "SINGLE_INSTANCE",
        engineType: "ACTIVEMQ",
        publiclyAccessible: false,
        users: [{ username: "admin", passwordSecretRef: ref }],
      }),
    );
    await settle(logged, keyOf(defOf(USER), name));
    await settle(logged, keyOf(defOf(BROKER), broker));
    // Assess: the cloud got the values; the cluster holds only the references.
    expect((await wireOf(USER, name))?.LoginProfile).toEqual({
      Password: value,
      PasswordResetRequired: false,
    });
    const brokerId = await externalNameOf(BROKER, broker);
    expect((await wireOf(BROKER, brokerId))?.Users).toEqual([{ Username: "admin", Password: value }]);
    const user = await getMr(kube, defOf(USER), name);
    expectAvailable(user);
    expectAvailable(await getMr(kube, defOf(BROKER), broker));
    expect((await logged.reconcile(keyOf(defOf(USER), name))).outcome).toBe("in-sync");
    expect((await logged.reconcile(keyOf(defOf(BROKER), broker))).outcome).toBe("in-sync");
    // A password changed in the cloud stays as it is when another field is updated: never re-sent.
    await changeInCloud(USER, name, [
      { op: "add", path: "/LoginProfile/Password", value: "changed-elsewhere" },
    ]);
    await kube.patch(defOf(USER), name, { spec: { forProvider: { path: "/b/" } } });
    await settle(logged, keyOf(defOf(USER), name));
    expect((await wireOf(USER, name))?.Path).toBe("/b/");
    expect((await wireOf(USER, name))?.LoginProfile).toEqual({
      Password: "changed-elsewhere",
      PasswordResetRequired: false,
    });
    const objects = JSON.stringify([
      await getMr(kube, defOf(USER), name),
      await getMr(kube, defOf(BROKER), broker),
    ]);
    expect(objects).toContain("passwordSecretRef");
    expect(lines.join("\n") + objects).not.toContain(value);
  });

  it("publishes a secret attribute (a Cognito client's secret) to the connection Secret, never to status", async () => {
    const t = "AWS::Cognito::UserPoolClient";
    const def = defOf(t);
    const name = nameFor(t);
    await kube.create(
      def,
      managedObject(def, name, PC, { forProvider: { userPoolId: "us-east-1_pool", generateSecret: true } }),
    );
    await settle(r, keyOf(def, name));
    const mr = await getMr(kube, def, name);
    expectAvailable(mr);
    const clientSecret = (await wireOf(t, await externalNameOf(t, name)))?.ClientSecret;
    expect(typeof clientSecret).toBe("string");
    const conn = await kube.getSecret("default", `${name}-conn`);
    expect(Buffer.from(conn?.data?.clientSecret ?? "", "base64").toString()).toBe(clientSecret);
    expect(JSON.stringify(mr)).not.toContain(String(clientSecret));
  });

  it("backs off on throttling and says so in Synced", async () => {
    const def = defOf(TOPIC);
    const name = nameFor(TOPIC);
    await kube.create(def, object(TOPIC, name, { displayName: "t" }));
    await fake.control("throttle", { count: 10 });
    try {
      await r.reconcile(keyOf(def, name));
    } finally {
      await fake.control("throttle", { count: 0 });
    }
    expect(conditionOf(await getMr(kube, def, name), "Synced")?.message).toMatch(/throttled/i);
    await settle(r, keyOf(def, name));
    expectAvailable(await getMr(kube, def, name));
  });
});
