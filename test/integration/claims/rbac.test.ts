import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig, type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { REPO_ROOT } from "../../../infra/local/stack.ts";
import { Queue as SqsQueue } from "../../../shared/api/aws/sqs.ts";
import { Queue } from "../../../shared/api/claims/claims.ts";
import { classKinds, SQSQueueClass } from "../../../shared/api/claims/classes.ts";
import { Kube, statusOf } from "../../../shared/kube/client.ts";
import { coreApi } from "../../../shared/kube/core.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace } from "../../support/aws.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { newReconciler } from "../../support/reconcile.ts";
import { ClaimReconciler } from "../../support/routed.ts";
import { claimObject, classObject, conditionOf, drive, getClaim, isReady, newNamespace } from "./support.ts";

const admin = newKube();
const objects = KubernetesObjectApi.makeApiClient(kubeConfig());
const RUN = uniqueName("claims-rbac");
const PC = `${RUN}-pc`;
const CLASS = `${RUN}-sqs`;
const cleanup: KubernetesObject[] = [];

/** The ClusterRole app teams are bound to, exactly as examples/claims.yaml gives it. */
const editorRole = () =>
  parseAllDocuments(readFileSync(join(REPO_ROOT, "examples/claims.yaml"), "utf8"))
    .map((d) => d.toJS() as KubernetesObject)
    .find(
      (o) => o.kind === "ClusterRole" && o.metadata?.name === "driftless-claims-editor",
    ) as KubernetesObject;

async function apply(obj: KubernetesObject) {
  try {
    await objects.create(obj);
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    const current = await objects.read({
      apiVersion: obj.apiVersion!,
      kind: obj.kind!,
      metadata: { name: obj.metadata!.name!, namespace: obj.metadata?.namespace },
    });
    await objects.replace({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: current.metadata?.resourceVersion },
    });
  }
}

const rbac = (kind: string, metadata: object, rest: object): KubernetesObject =>
  ({ apiVersion: "rbac.authorization.k8s.io/v1", kind, metadata, ...rest }) as KubernetesObject;
const bind = (
  kind: "RoleBinding" | "ClusterRoleBinding",
  name: string,
  namespace: string | undefined,
  role: { kind: string; name: string },
  sa: { name: string; namespace: string },
) =>
  rbac(
    kind,
    { name, ...(namespace ? { namespace } : {}) },
    {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", ...role },
      subjects: [{ kind: "ServiceAccount", ...sa }],
    },
  );

/** A client authenticated as a ServiceAccount, with a token from the TokenRequest API. */
async function kubeAs(namespace: string, name: string): Promise<Kube> {
  await coreApi(admin)
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name } } })
    .catch((err) => {
      if (statusOf(err) !== 409) throw err;
    });
  const res = await coreApi(admin).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "local", server: env("DRIFTLESS_KUBE_SERVER"), caFile: env("DRIFTLESS_CA_FILE") }],
    users: [{ name, token: res.status?.token ?? "" }],
    contexts: [{ name: "sa", cluster: "local", user: name }],
    currentContext: "sa",
  });
  return new Kube(kc);
}

const forbidden = async (p: Promise<unknown>) =>
  statusOf(
    await p.then(
      () => undefined,
      (e: unknown) => e,
    ),
  );

beforeAll(async () => {
  await ensureCrds();
  await ensureNamespace(admin, "driftless-system");
  await createAwsProviderConfig(admin, PC);
  await admin.create(
    SQSQueueClass,
    classObject(SQSQueueClass, CLASS, { providerConfigRef: { name: PC } }, { labels: { run: RUN } }),
  );
  await apply(editorRole());
});

afterAll(async () => {
  await admin.delete(SQSQueueClass, CLASS);
  for (const o of cleanup.reverse()) await objects.delete(o).catch(() => undefined);
});

describe("tenant isolation: RBAC for app teams and for driftless", () => {
  it("an app team's identity can claim in its namespace, and cannot make managed resources or classes, claim elsewhere, or read driftless's Secrets", async () => {
    const team = await newNamespace(admin, "team-a");
    const other = await newNamespace(admin, "team-b");
    await apply(
      bind(
        "RoleBinding",
        "claims",
        team,
        { kind: "ClusterRole", name: "driftless-claims-editor" },
        { name: "app", namespace: team },
      ),
    );
    const app = await kubeAs(team, "app");

    const created = await app.create(
      Queue,
      claimObject(Queue, team, "mine", { classSelector: { matchLabels: { run: RUN } } }),
    );
    expect(created.metadata.uid).toBeDefined();
    expect((await app.list(Queue, { namespace: team })).items.map((c) => c.metadata.name)).toEqual(["mine"]);

    expect(await forbidden(app.create(Queue, claimObject(Queue, other, "theirs")))).toBe(403);
    expect(await forbidden(app.list(Queue, { namespace: other }))).toBe(403);
    expect(
      await forbidden(
        app.create(SqsQueue, {
          apiVersion: SqsQueue.apiVersion,
          kind: "Queue",
          metadata: { name: uniqueName("direct") },
          spec: { forProvider: {}, providerConfigRef: { name: PC } },
        }),
      ),
    ).toBe(403);
    expect(
      await forbidden(
        app.create(SQSQueueClass, classObject(SQSQueueClass, uniqueName("own"), {}, { isDefault: true })),
      ),
    ).toBe(403);
    expect(await forbidden(app.patch(SQSQueueClass, CLASS, { spec: { allowedNamespaces: [team] } }))).toBe(
      403,
    );
    expect(await forbidden(app.getSecret("driftless-system", `${PC}-aws-creds`))).toBe(403);
    expect(await forbidden(coreApi(app).listNamespacedSecret({ namespace: "driftless-system" }))).toBe(403);
  });

  it("driftless's claim identity writes Secrets only where it is bound: claim namespaces and driftless-system", async () => {
    const onboarded = await newNamespace(admin, "team-on");
    const notOnboarded = await newNamespace(admin, "team-off");
    const sa = { name: `${RUN}-claims`, namespace: "driftless-system" };
    const claimTypes = [Queue, ...classKinds];
    const mrTypes = managedKinds.map((k) => k.definition);
    const cluster = rbac(
      "ClusterRole",
      { name: `${RUN}-claims` },
      {
        rules: [
          {
            apiGroups: ["claims.driftless.dev"],
            resources: ["queues", "buckets", "postgresqlinstances"],
            verbs: ["get", "list", "watch", "patch", "update"],
          },
          {
            apiGroups: ["claims.driftless.dev"],
            resources: ["queues/status", "buckets/status", "postgresqlinstances/status"],
            verbs: ["patch", "update"],
          },
          {
            apiGroups: ["classes.driftless.dev"],
            resources: claimTypes.slice(1).map((t) => t.plural),
            verbs: ["get", "list", "watch"],
          },
          ...[...new Set(mrTypes.map((t) => t.group))].map((g) => ({
            apiGroups: [g],
            resources: mrTypes.filter((t) => t.group === g).map((t) => t.plural),
            verbs: ["get", "list", "watch", "create", "patch", "delete"],
          })),
          { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        ],
      },
    );
    // Secrets: read in driftless-system (what the resources publish), write in each onboarded namespace.
    const secrets = rbac(
      "ClusterRole",
      { name: `${RUN}-claim-secrets` },
      {
        rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "create", "update", "delete"] }],
      },
    );
    for (const o of [cluster, secrets]) {
      await apply(o);
      cleanup.push(o);
    }
    const bindings = [
      bind(
        "ClusterRoleBinding",
        `${RUN}-claims`,
        undefined,
        { kind: "ClusterRole", name: `${RUN}-claims` },
        sa,
      ),
      ...["driftless-system", onboarded].map((ns) =>
        bind("RoleBinding", `${RUN}-secrets`, ns, { kind: "ClusterRole", name: `${RUN}-claim-secrets` }, sa),
      ),
    ];
    for (const o of bindings) {
      await apply(o);
      cleanup.push(o);
    }
    cleanup.push({ apiVersion: "v1", kind: "ServiceAccount", metadata: { ...sa } });
    const driftless = await kubeAs(sa.namespace, sa.name);
    const claims = new ClaimReconciler(driftless);
    const mrs = newReconciler(admin);
    const spec = {
      classRef: { kind: "SQSQueueClass", name: CLASS },
      writeConnectionSecretToRef: { name: "conn" },
    };
    await admin.create(Queue, claimObject(Queue, onboarded, "q", spec));
    await admin.create(Queue, claimObject(Queue, notOnboarded, "q", spec));

    const on = await drive({
      kube: admin,
      claims,
      mrs,
      def: Queue,
      namespace: onboarded,
      name: "q",
      until: isReady,
    });
    const off = await drive({
      kube: admin,
      claims,
      mrs,
      def: Queue,
      namespace: notOnboarded,
      name: "q",
      until: (c) => conditionOf(c, "Synced")?.message?.includes("forbidden") ?? false,
    });

    expect((await admin.getSecret(onboarded, "conn"))?.data?.url).toBeDefined();
    expect(conditionOf(on.claim, "Synced")?.status).toBe("True");
    expect(conditionOf(off.claim, "Synced")?.message).toMatch(
      /^cannot propagate connection Secret: .*forbidden/,
    );
    expect(await admin.getSecret(notOnboarded, "conn")).toBeUndefined();
    expect(await forbidden(driftless.getSecret("default", "anything"))).toBe(403);
    expect(
      await forbidden(driftless.createSecret({ metadata: { name: "x", namespace: notOnboarded } })),
    ).toBe(403);
    expect((await getClaim(admin, Queue, notOnboarded, "q"))?.status?.resourceRef).toBeDefined();
  });
});
