// Area 6 — least privilege, for real. infra/k8s/rbac.yaml is applied to the real API server (RBAC on);
// the ServiceAccount tokens the stack's kube-controller-manager minted into token Secrets authenticate a
// full reconcile (create → Ready → delete) as the reconciler's ServiceAccount and a forwarder as the
// forwarder's. Then what each identity must NOT do is tried, and must get 403. The tighter variant of the
// generator (`--secret-namespaces`) is applied under a separate identity and shown to work, and to refuse
// Secrets outside its namespaces. Attempts that would harm other suites if they were (wrongly) allowed —
// deleting a CRD, binding cluster-admin — are sent as server-side dry runs: authorization still decides. Last, serverless.yml's IAM policies are read and checked against every
// AWS call the providers make.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { FORWARDER, NAMESPACE, RECONCILER, rbacObjects } from "../../infra/k8s/gen-rbac.ts";
import { REPO_ROOT } from "../../infra/local/stack.ts";
import { Queue } from "../../shared/api/aws/sqs.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { type KubeObject, statusOf } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { KubeEventRecorder } from "../../shared/kube/events.ts";
import { Forwarder } from "../../shared/pipeline/forwarder.ts";
import { OWNER_TAG } from "../../shared/providers/aws/ec2-common.ts";
import { managedKinds, providerConfigKinds } from "../../shared/providers/index.ts";
import { NO_OWN_QUEUES, setOwnQueues } from "../../shared/providers/own-queues.ts";
import { ProviderConfigReconciler } from "../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { RecordingSink, TEST_LABEL } from "../integration/pipeline/helpers.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace, motoSqs } from "../support/aws.ts";
import { eventually, kubeConfig, newKube, uniqueName } from "../support/env.ts";
import { conditionOf, getMr, keyOf, newReconciler, settle } from "../support/reconcile.ts";
import { kubeWithToken, tokenSecretOf } from "../support/tokens.ts";
import { forceDelete, Tally, type TallyScope } from "./support.ts";

const admin = newKube();
const api = KubernetesObjectApi.makeApiClient(kubeConfig());
const tally = new Tally("6 least privilege");
const PC = uniqueName("pc-lp");
const created: string[] = [];
const cleanupObjects: KubernetesObject[] = [];
const manifests = (file: string) =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, "infra/k8s", file), "utf8")).map(
    (d) => d.toJS() as KubernetesObject,
  );

/** Create-or-replace; ServiceAccounts are only created (replacing one makes the controller mint a new token). */
async function apply(obj: KubernetesObject) {
  for (let attempt = 0; ; attempt++) {
    try {
      const current = await api.read({
        apiVersion: obj.apiVersion ?? "",
        kind: obj.kind ?? "",
        metadata: {
          name: obj.metadata?.name ?? "",
          ...(obj.metadata?.namespace ? { namespace: obj.metadata.namespace } : {}),
        },
      });
      if (obj.kind === "ServiceAccount" || obj.kind === "Namespace") return;
      await api.replace({
        ...obj,
        metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
      });
      return;
    } catch (err) {
      const code = statusOf(err) ?? (err as { code?: number }).code;
      if (code === 404) {
        try {
          await api.create(obj);
          return;
        } catch (createErr) {
          if ((statusOf(createErr) ?? (createErr as { code?: number }).code) !== 409 || attempt > 3)
            throw createErr;
          continue;
        }
      }
      if (code !== 409 || attempt > 3) throw err;
    }
  }
}

/** The HTTP status of an attempt: 403 is what a denied call must get. */
const statusOfCall = async (call: () => Promise<unknown>) => {
  try {
    await call();
    return 200;
  } catch (err) {
    return statusOf(err) ?? (err as { code?: number }).code ?? 0;
  }
};

async function denied(mine: TallyScope, name: string, call: () => Promise<unknown>) {
  const status = await statusOfCall(call);
  mine.record(name, status === 403, `HTTP ${status}`);
}

const queueObject = (name: string, connNamespace: string) => ({
  apiVersion: Queue.apiVersion,
  kind: Queue.kind,
  metadata: { name, labels: { [TEST_LABEL]: "lp" } },
  spec: {
    forProvider: {},
    providerConfigRef: { name: PC },
    writeConnectionSecretToRef: { namespace: connNamespace, name: `${name}-conn` },
  },
});

// The checked-in manifests, applied under names of this run: other suites apply (and change) the shared
// driftless-* ClusterRoles on the same API server, so the identities tested here are this file's own.
const RUN = uniqueName("lp");
const FWD = `${RUN}-forwarder`;
const REC = `${RUN}-reconciler`;
const renamed = (objects: KubernetesObject[]) =>
  objects.map(
    (o) =>
      JSON.parse(
        JSON.stringify(o)
          .replaceAll(`"${FORWARDER}"`, `"${FWD}"`)
          .replaceAll(`"${RECONCILER}"`, `"${REC}"`)
          .replaceAll(`"${RECONCILER}-secrets"`, `"${REC}-secrets"`),
      ) as KubernetesObject,
  );

beforeAll(async () => {
  await ensureCrds();
  await apply(manifests("namespace.yaml")[0] as KubernetesObject);
  const forwarderSa = manifests("forwarder.yaml").filter((o) => o.kind === "ServiceAccount");
  for (const obj of renamed([...forwarderSa, ...manifests("rbac.yaml")])) {
    await apply(obj);
    cleanupObjects.push(obj);
  }
  await createAwsProviderConfig(admin, PC);
});

afterAll(async () => {
  await forceDelete(admin, Queue, created);
  for (const obj of cleanupObjects.reverse()) await api.delete(obj).catch(() => undefined);
  tally.report();
  expect(tally.lost).toBe(0);
});

// The tests of this file are independent (own objects, own queues): they run at once.
describe.concurrent("least privilege, on the real API server with RBAC", () => {
  it("the reconciler's ServiceAccount reconciles create → Ready → delete, and cannot do what it need not", async () => {
    const mine = tally.scope("least-privilege#1");
    const kube = kubeWithToken(await tokenSecretOf(admin, NAMESPACE, REC), "reconciler-sa");
    const name = uniqueName("lp-q");
    created.push(name);
    // The shipped rbac.yaml reaches Secrets in driftless-system only (other namespaces are onboarded).
    await admin.create(Queue, queueObject(name, NAMESPACE));
    const reconciler = newReconciler(kube, { events: new KubeEventRecorder(kube) });
    await settle(reconciler, keyOf(Queue, name));
    const ready = conditionOf(await getMr(admin, Queue, name), "Ready")?.status === "True";
    const conn = await admin.getSecret(NAMESPACE, `${name}-conn`);
    mine.record(
      "reconciler SA: create → Ready, connection Secret written",
      ready && conn !== undefined,
      `Ready ${ready}`,
    );
    const pcs = new ProviderConfigReconciler(kube, new KindRegistry(managedKinds), providerConfigKinds);
    const pcResult = await pcs
      .reconcile({
        apiVersion: `${providerConfigs.aws.type.group}/${providerConfigs.aws.type.version}`,
        kind: "ProviderConfig",
        name: PC,
      })
      .catch((e: Error) => e);
    mine.record(
      "reconciler SA: ProviderConfig check (status, users, finalizer)",
      !(pcResult instanceof Error) && pcResult.outcome !== "unready",
      pcResult instanceof Error ? pcResult.message : JSON.stringify(pcResult),
    );
    await admin.delete(Queue, name);
    const deleted = await settle(reconciler, keyOf(Queue, name));
    mine.record(
      "reconciler SA: delete → object and connection Secret gone",
      !(await getMr(admin, Queue, name)),
      deleted
        .map((r) => r.error?.message)
        .filter(Boolean)
        .join("; "),
    );

    await denied(mine, "reconciler SA: cannot list Secrets cluster-wide", () =>
      coreApi(kube).listSecretForAllNamespaces(),
    );
    await denied(mine, "reconciler SA: cannot list Secrets in kube-system", () =>
      coreApi(kube).listNamespacedSecret({ namespace: "kube-system" }),
    );
    // Listing Secrets where the Role grants them (driftless-system here) is allowed: the batched drift
    // check reads a namespace's connection Secrets with one LIST (docs/security.md).
    // Not tried: creating or deleting managed resources — the claims reconciler composes them (see report).
    const asReconciler = KubernetesObjectApi.makeApiClient(kube.kubeConfig("KubernetesObjectApi"));
    await denied(mine, "reconciler SA: cannot delete CRDs", () =>
      asReconciler.delete(
        {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "queues.sqs.aws.driftless.dev" },
        },
        undefined,
        "All",
      ),
    );
    // Verbs the code never uses on them (test/unit/rbac-verbs.test.ts): no patch on Secrets, no PUT on
    // driftless objects. Dry runs: authorization still decides.
    await denied(
      mine,
      "reconciler SA: cannot patch a Secret (it only gets, creates, replaces, deletes)",
      () =>
        asReconciler.patch(
          {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: `${PC}-aws-creds`, namespace: NAMESPACE, labels: { x: "y" } },
          },
          undefined,
          "All",
        ),
    );
    await denied(mine, "reconciler SA: cannot replace (PUT) a managed resource, only merge-patch it", () =>
      asReconciler.replace(
        {
          apiVersion: Queue.apiVersion,
          kind: Queue.kind,
          metadata: { name: `${name}-put`, resourceVersion: "1" },
          spec: { forProvider: {} },
        } as KubernetesObject,
        undefined,
        "All",
      ),
    );
    await denied(mine, "reconciler SA: cannot bind itself more roles", () =>
      asReconciler.create(
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: uniqueName("lp-escalate") },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
          subjects: [{ kind: "ServiceAccount", name: REC, namespace: NAMESPACE }],
        } as KubernetesObject,
        undefined,
        "All",
      ),
    );
    await denied(mine, "reconciler SA: cannot mint ServiceAccount tokens", () =>
      coreApi(kube).createNamespacedServiceAccountToken({
        name: FWD,
        namespace: NAMESPACE,
        body: { spec: { audiences: [] } },
      }),
    );
    // The shipped rbac.yaml grants Secrets per namespace (driftless-system), not cluster-wide.
    const probe = uniqueName("lp-probe");
    await admin.createSecret({ metadata: { name: probe, namespace: "default" }, stringData: { k: "v" } });
    await denied(mine, "reconciler SA: cannot get a Secret by name outside its namespaces (default)", () =>
      coreApi(kube).readNamespacedSecret({ name: probe, namespace: "default" }),
    );
    await admin.deleteSecret("default", probe);
  }, 60_000);

  it("the forwarder's ServiceAccount watches and forwards, and can read no Secret and write nothing", async () => {
    const mine = tally.scope("least-privilege#2");
    const kube = kubeWithToken(await tokenSecretOf(admin, NAMESPACE, FWD), "forwarder-sa");
    const label = uniqueName("lp-fwd");
    const sink = new RecordingSink();
    const forwarder = new Forwarder({ kube, types: [Queue], sink, labelSelector: `${TEST_LABEL}=${label}` });
    await forwarder.start();
    const name = uniqueName("lp-fq");
    created.push(name);
    try {
      await admin.create<KubeObject>(Queue, {
        ...queueObject(name, "default"),
        metadata: { name, labels: { [TEST_LABEL]: label } },
      });
      const seen = await eventually(async () => sink.for(name).length >= 1 || undefined, {
        timeoutMs: 15_000,
        what: "forwarded",
      }).catch(() => false);
      mine.record("forwarder SA: lists, watches and forwards the key", seen === true, "");
    } finally {
      await forwarder.stop();
    }
    const asForwarder = KubernetesObjectApi.makeApiClient(kube.kubeConfig("KubernetesObjectApi"));
    const someKubeSystemSecret =
      (await coreApi(admin).listNamespacedSecret({ namespace: "kube-system", limit: 1 })).items[0]?.metadata
        ?.name ?? "x";
    await denied(mine, "forwarder SA: cannot get a Secret in kube-system", () =>
      kube.getSecret("kube-system", someKubeSystemSecret),
    );
    await denied(mine, "forwarder SA: cannot get the credentials Secret in driftless-system", () =>
      kube.getSecret(NAMESPACE, `${PC}-aws-creds`),
    );
    await denied(mine, "forwarder SA: cannot list Secrets anywhere", () =>
      coreApi(kube).listSecretForAllNamespaces(),
    );
    await denied(mine, "forwarder SA: cannot patch a managed resource", () =>
      kube.patch(Queue, name, { metadata: { labels: { x: "y" } } }),
    );
    await denied(mine, "forwarder SA: cannot patch a managed resource's status", () =>
      kube.patchStatus(Queue, name, { conditions: [] }),
    );
    await denied(mine, "forwarder SA: cannot delete a managed resource", () => kube.delete(Queue, name));
    await denied(mine, "forwarder SA: cannot patch a ProviderConfig", () =>
      kube.patch(providerConfigs.aws.type, PC, { metadata: { labels: { x: "y" } } }),
    );
    await denied(mine, "forwarder SA: cannot delete CRDs", () =>
      asForwarder.delete(
        {
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "CustomResourceDefinition",
          metadata: { name: "queues.sqs.aws.driftless.dev" },
        },
        undefined,
        "All",
      ),
    );
    await denied(mine, "forwarder SA: cannot create Events", () =>
      coreApi(kube).createNamespacedEvent({
        namespace: "default",
        body: {
          metadata: { name: uniqueName("lp-ev") },
          involvedObject: { name },
          reason: "x",
          message: "x",
        },
      }),
    );
  }, 60_000);

  it("tighter variant (--secret-namespaces): works in its namespaces, refused elsewhere", async () => {
    const mine = tally.scope("least-privilege#3");
    const alt = uniqueName("lp-rec");
    const ns = uniqueName("lp-team");
    await ensureNamespace(admin, ns);
    cleanupObjects.push({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    // The generator's reconciler objects, under a separate identity so the shared rbac.yaml is untouched.
    const objects = rbacObjects(undefined, undefined, { secretNamespaces: [NAMESPACE, ns] })
      .map((o) => JSON.stringify(o))
      .filter((j) => j.includes(`"${RECONCILER}`))
      .map(
        (j) =>
          JSON.parse(
            j
              .replaceAll(`"${RECONCILER}"`, `"${alt}"`)
              .replaceAll(`"${RECONCILER}-secrets"`, `"${alt}-secrets"`),
          ) as KubernetesObject,
      );
    const secretRules = objects.find((o) => o.kind === "ClusterRole") as unknown as {
      rules: Array<{ resources: string[] }>;
    };
    mine.record(
      "tighter variant: the ClusterRole grants no Secret access",
      !secretRules.rules.some((r) => r.resources.includes("secrets")),
      "",
    );
    for (const o of objects) {
      await apply(o);
      cleanupObjects.push(o);
    }
    const token = await coreApi(admin).createNamespacedServiceAccountToken({
      name: alt,
      namespace: NAMESPACE,
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const kube = kubeWithToken(token.status?.token ?? "", alt);
    const reconciler = newReconciler(kube);
    const inside = uniqueName("lp-in");
    const outside = uniqueName("lp-out");
    created.push(inside, outside);
    await admin.create(Queue, queueObject(inside, ns));
    await admin.create(Queue, queueObject(outside, "default"));
    // RBAC caches can take a moment to see a new binding.
    await eventually(
      async () => {
        await settle(reconciler, keyOf(Queue, inside));
        return conditionOf(await getMr(admin, Queue, inside), "Ready")?.status === "True" || undefined;
      },
      { timeoutMs: 20_000, what: "Ready with namespace-scoped Secrets" },
    ).then(
      () =>
        mine.record(
          "tighter variant: credentials from driftless-system, connection Secret in its namespace → Ready",
          true,
          "",
        ),
      (e: Error) =>
        mine.record(
          "tighter variant: credentials from driftless-system, connection Secret in its namespace → Ready",
          false,
          e.message,
        ),
    );
    await settle(reconciler, keyOf(Queue, outside));
    const synced = conditionOf(await getMr(admin, Queue, outside), "Synced");
    mine.record(
      "tighter variant: a connection Secret outside its namespaces → Synced=False, forbidden",
      synced?.status === "False" && /forbidden|Forbidden|cannot (get|create)/.test(synced.message ?? ""),
      synced?.message,
    );
    await denied(mine, "tighter variant: cannot get a Secret in kube-system", () =>
      kube.getSecret("kube-system", "anything"),
    );
    for (const n of [inside, outside]) {
      await admin.delete(Queue, n);
      await settle(reconciler, keyOf(Queue, n));
    }
  }, 60_000);

  it("a tenant's Queue naming driftless's own work queue is refused: not imported, changed or deleted", async () => {
    const mine = tally.scope("least-privilege#own-queue");
    const sqs = motoSqs();
    // The stack's own work queue and DLQ, as the functions' typed config names them (functions/aws/reconcile.ts).
    const own = uniqueName("driftless-lp-reconcile");
    const ownUrl = (
      await sqs.send(new CreateQueueCommand({ QueueName: own, Attributes: { VisibilityTimeout: "360" } }))
    ).QueueUrl;
    setOwnQueues({ aws: [ownUrl ?? "", `${ownUrl}-dlq`] });
    const name = uniqueName("lp-hijack");
    created.push(name);
    try {
      await admin.create(Queue, {
        ...queueObject(name, NAMESPACE),
        metadata: {
          name,
          labels: { [TEST_LABEL]: "lp" },
          annotations: { "crossplane.io/external-name": own },
        },
        spec: {
          ...queueObject(name, NAMESPACE).spec,
          forProvider: { visibilityTimeoutSeconds: 0, delaySeconds: 900 },
        },
      });
      const reconciler = newReconciler(admin);
      await settle(reconciler, keyOf(Queue, name));
      const synced = conditionOf(await getMr(admin, Queue, name), "Synced");
      mine.record(
        "own work queue: Synced=False, the message says it is driftless's own",
        synced?.status === "False" && /own work queue/.test(synced.message ?? ""),
        JSON.stringify(synced),
      );
      const attrsOf = async () =>
        (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: ownUrl, AttributeNames: ["All"] })))
          .Attributes;
      const attrs = await attrsOf();
      mine.record(
        "own work queue: the tenant's settings were not applied",
        attrs?.VisibilityTimeout === "360" && attrs.DelaySeconds === "0",
        JSON.stringify(attrs),
      );
      await admin.delete(Queue, name);
      await settle(reconciler, keyOf(Queue, name));
      mine.record(
        "own work queue: deleting the tenant's object leaves the queue",
        (await attrsOf().catch(() => undefined))?.VisibilityTimeout === "360",
        "",
      );
    } finally {
      setOwnQueues(NO_OWN_QUEUES);
      await sqs.send(new DeleteQueueCommand({ QueueUrl: ownUrl })).catch(() => undefined);
    }
    expect(mine.lost()).toEqual([]);
  }, 60_000);

  it("serverless.yml IAM: no wildcard actions, resources scoped, and every AWS call the providers make allowed", () => {
    const mine = tally.scope("least-privilege#4");
    const doc = parse(readFileSync(join(REPO_ROOT, "serverless.yml"), "utf8"), { logLevel: "silent" }) as {
      resources: {
        Resources: Record<
          string,
          { Type: string; Properties: { Policies?: Array<{ PolicyDocument: { Statement: unknown[] } }> } }
        >;
      };
    };
    const roles = Object.entries(doc.resources.Resources).filter(([, r]) => r.Type === "AWS::IAM::Role");
    interface Statement {
      Sid?: string;
      Effect: string;
      Action: string | string[];
      Resource: unknown;
      Condition?: Record<string, Record<string, unknown>>;
    }
    const statementsOf = (role: string) =>
      (doc.resources.Resources[role]?.Properties.Policies ?? [])
        .flatMap((p) => p.PolicyDocument.Statement)
        .map((s) => {
          // Fn::If [cond, statement, AWS::NoValue]: the statement when the condition holds.
          const iff = (s as { "Fn::If"?: unknown[] })["Fn::If"];
          return (iff ? iff[1] : s) as Statement;
        })
        .filter((s) => s && typeof s === "object" && "Effect" in s);
    const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
    const resources = (s: Statement) => (Array.isArray(s.Resource) ? s.Resource : [s.Resource]);
    const everything = roles.flatMap(([name]) => statementsOf(name).map((s) => ({ role: name, s })));

    const wildcardActions = everything.filter(({ s }) => actions(s).some((a) => a === "*" || /:\*$/.test(a)));
    mine.record(
      "IAM: no '*' or 'service:*' actions",
      wildcardActions.length === 0,
      JSON.stringify(wildcardActions.map((w) => w.s.Sid)),
    );
    const starResources = everything.filter(({ s }) => resources(s).includes("*"));
    const starOk = starResources.every(({ s }) =>
      actions(s).every((a) => a === "sts:GetCallerIdentity" || /^ec2:Describe/.test(a)),
    );
    mine.record(
      "IAM: Resource '*' only where AWS has no resource-level permissions (sts:GetCallerIdentity, ec2:Describe*)",
      starOk,
      starResources.map(({ s }) => `${s.Sid}: ${actions(s).join(",")}`).join("; "),
    );
    // Destructive actions (anything that creates, changes or deletes) on an account-wide pattern (every
    // VPC, every queue: `…:*`, `…/*`) need a Condition; a resource named by the stage's name prefix, a
    // GetAtt of this stack's own resource or the kubeconfig secret's ARN is specific enough.
    const destructive = (a: string) =>
      /:(Create|Delete|Modify|Authorize|Revoke|Update|Put|Set|Add|Remove|Tag|Untag|Attach|Detach|Associate|Disassociate|Replace|Terminate|Send|Change|Reboot|Start|Stop|Restore)/.test(
        a,
      );
    const specific = (r: unknown) =>
      /managedNamePrefix|Fn::GetAtt|kubeconfigSecretArn/.test(JSON.stringify(r)) ||
      (typeof r === "string" && r !== "*" && !/[:/]\*$/.test(r));
    const unconditioned = everything.filter(
      ({ s }) =>
        s.Effect === "Allow" &&
        actions(s).some(destructive) &&
        s.Condition === undefined &&
        resources(s).some((r) => !specific(r)),
    );
    mine.record(
      "IAM: no destructive action on an account-wide resource pattern without a Condition",
      unconditioned.length === 0,
      unconditioned
        .map(({ role, s }) => `${role}/${s.Sid}: ${actions(s).filter(destructive).join(",")}`)
        .join("; "),
    );
    // EC2 ids are provider-chosen (no name prefix): the ownership tag driftless writes is the scope.
    const ec2Writes = statementsOf("ReconcileRole").filter((s) =>
      actions(s).some((a) => a.startsWith("ec2:") && destructive(a)),
    );
    const ownershipKeys = [`aws:ResourceTag/${OWNER_TAG}`, `aws:RequestTag/${OWNER_TAG}`, "ec2:CreateAction"];
    const unscopedEc2 = ec2Writes.filter(
      (s) =>
        !Object.values(s.Condition ?? {}).some((keys) =>
          Object.keys(keys).some((k) => ownershipKeys.includes(k)),
        ),
    );
    mine.record(
      `IAM: every EC2 write is conditioned on the ownership tag ${OWNER_TAG} (or on being part of a create)`,
      ec2Writes.length > 0 && unscopedEc2.length === 0,
      unscopedEc2.map((s) => s.Sid).join(", ") || `${ec2Writes.length} statements`,
    );
    const sweep = statementsOf("SweepRole")
      .flatMap(actions)
      .filter((a) => !a.startsWith("logs:"));
    mine.record(
      "IAM: the sweep may only send to the work queue, count the dead letters (and read the kubeconfig secret)",
      sweep.every((a) =>
        [
          "sqs:SendMessage",
          "sqs:GetQueueAttributes",
          "secretsmanager:GetSecretValue",
          "ssm:GetParameter",
        ].includes(a),
      ),
      sweep.join(","),
    );
    mine.record(
      "IAM: no iam:*, no kms:*, no secretsmanager beyond the kubeconfig ARN",
      everything.every(({ s }) => actions(s).every((a) => !a.startsWith("iam:") && !a.startsWith("kms:"))) &&
        everything
          .filter(({ s }) => actions(s).some((a) => a.startsWith("secretsmanager:")))
          .every(({ s }) => JSON.stringify(s.Resource).includes("kubeconfigSecretArn")),
      "",
    );

    // Every SDK command the AWS providers send, as an IAM action, must be in the reconcile role.
    const reconcileActions = new Set(statementsOf("ReconcileRole").flatMap(actions));
    const s3Actions: Record<string, string> = {
      HeadBucket: "s3:ListBucket",
      GetPublicAccessBlock: "s3:GetBucketPublicAccessBlock",
      PutPublicAccessBlock: "s3:PutBucketPublicAccessBlock",
      DeletePublicAccessBlock: "s3:PutBucketPublicAccessBlock",
      DeleteBucketTagging: "s3:PutBucketTagging",
      ListBuckets: "s3:ListAllMyBuckets",
    };
    // Sent only by `driftless import`'s listers (ExternalClient.list), with the operator's own credentials
    // (docs/concepts.md, "import"), never by the functions: the reconcile role must not have them.
    const importOnly = new Set(["sqs:ListQueues", "s3:ListAllMyBuckets"]);
    const files = [
      "config",
      "ec2-common",
      "ec2-vpc",
      "ec2-subnet",
      "ec2-securitygroup",
      "rds-dbinstance",
      "rds-dbsubnetgroup",
      "s3-bucket",
      "sqs-queue",
    ];
    const needed = new Set<string>();
    for (const f of files) {
      const src = readFileSync(join(REPO_ROOT, "shared/providers/aws", `${f}.ts`), "utf8");
      // A call is `new XCommand(…)` sent by hand, or `paginateX(…)`: the SDK's paginator sends XCommand.
      for (const m of src.matchAll(/\bnew ([A-Z][A-Za-z]+)Command\b|\bpaginate([A-Z][A-Za-z]+)\(/g)) {
        const op = m[1] ?? m[2] ?? "";
        const imported = m[1] ? `${op}Command` : `paginate${op}`;
        const svc = /client-(\w+)/.exec(
          [...src.matchAll(/import \{([^}]*)\} from "@aws-sdk\/client-(\w+)"/g)].find((i) =>
            (i[1] ?? "").split(/[\s,]+/).includes(imported),
          )?.[0] ?? "",
        )?.[1];
        if (!svc) continue;
        needed.add(svc === "s3" ? (s3Actions[op] ?? `s3:${op}`) : `${svc}:${op}`);
      }
    }
    const missing = [...needed].filter((a) => !reconcileActions.has(a) && !importOnly.has(a)).sort();
    const granted = [...importOnly].filter((a) => reconcileActions.has(a));
    mine.record(
      "IAM: the actions only `driftless import` sends are not granted to the reconcile role",
      granted.length === 0 && [...importOnly].every((a) => needed.has(a)),
      granted.length ? `granted: ${granted.join(", ")}` : [...importOnly].join(","),
    );
    mine.record(
      `IAM: the ${needed.size} AWS actions the providers call are granted to the reconcile role (InjectedIdentity)`,
      missing.length === 0,
      missing.length ? `missing: ${missing.join(", ")}` : [...needed].sort().join(","),
    );
    expect(mine.lost()).toEqual([]);
  });
});
