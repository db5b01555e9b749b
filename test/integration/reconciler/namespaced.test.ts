// The namespaced (Crossplane v2) shape on the real API server (RBAC on) and moto: a team that may write
// only in its own namespace (a ServiceAccount bound to a Role there, as a platform would set it up) gets a
// cloud resource and its connection Secret there, and cannot make driftless use another namespace's
// ProviderConfig or Secrets, reference another namespace's resources, write a Secret elsewhere, use a
// ClusterProviderConfig the platform keeps from it, borrow the functions' own identity, or point an
// endpoint at the instance metadata service.
import { GetQueueUrlCommand } from "@aws-sdk/client-sqs";
import { type KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Subnet, VPC } from "../../../shared/api/aws/ec2.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import {
  clusterProviderConfigType,
  type ManagedResource,
  namespacedProviderConfigType,
  namespacedVariantOf,
} from "../../../shared/api/managed.ts";
import type { ResourceType } from "../../../shared/api/meta.ts";
import { type Kube, statusOf } from "../../../shared/kube/client.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { ProviderConfigReconciler } from "../../../shared/reconciler/provider-config.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { ensureCrds, ensureNamespace, MOTO_CREDENTIALS, motoSqs } from "../../support/aws.ts";
import { env, kubeConfig, newKube, uniqueName } from "../../support/env.ts";
import { conditionOf, newReconciler, settle } from "../../support/reconcile.ts";
import { kubeWithToken, tokenSecretOf } from "../../support/tokens.ts";

const admin = newKube();
const objects = KubernetesObjectApi.makeApiClient(kubeConfig());
const sqs = motoSqs();
const NQueue = namespacedVariantOf(Queue);
const NSubnet = namespacedVariantOf(Subnet);
const NVPC = namespacedVariantOf(VPC);
const cpcType = clusterProviderConfigType("aws");
const pcType = namespacedProviderConfigType("aws");
const teamA = uniqueName("team-a");
const teamB = uniqueName("team-b");
const cpc = uniqueName("cpc");
const cpcOther = uniqueName("cpc-b-only");
let asTeamA: Kube;
const cleanup: Array<() => Promise<unknown>> = [];

const mGroups = [
  ...new Set(managedKinds.filter((k) => k.definition.namespaced).map((k) => k.definition.group)),
];

/** What a platform grants a team: the namespaced kinds, their ProviderConfigs and Secrets, in its namespace. */
async function teamIdentity(namespace: string): Promise<Kube> {
  const sa = "team";
  const rbac: KubernetesObject[] = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: sa, namespace } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "team", namespace },
      rules: [
        { apiGroups: [...mGroups, "aws.m.driftless.dev"], resources: ["*"], verbs: ["*"] },
        { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "create", "update", "delete"] },
      ],
    } as KubernetesObject,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "team", namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "team" },
      subjects: [{ kind: "ServiceAccount", name: sa, namespace }],
    } as KubernetesObject,
  ];
  for (const o of rbac) await objects.create(o);
  return kubeWithToken(await tokenSecretOf(admin, namespace, sa), `${namespace}-team`);
}

const statusOfCall = async (call: () => Promise<unknown>) => {
  try {
    await call();
    return 200;
  } catch (err) {
    return statusOf(err) ?? (err as { code?: number }).code ?? 0;
  }
};

async function createdAs<T extends { metadata: { name: string; namespace?: string } }>(
  kube: Kube,
  type: Parameters<Kube["create"]>[0],
  obj: T,
) {
  const made = await kube.create(type, obj as unknown as ManagedResource & { [k: string]: unknown });
  cleanup.push(() =>
    admin
      .patch(type, obj.metadata.name, { metadata: { finalizers: [] } }, { namespace: obj.metadata.namespace })
      .catch(() => undefined),
  );
  cleanup.push(() => admin.delete(type, obj.metadata.name, obj.metadata.namespace));
  return made;
}

/** A moto credentials Secret and a namespaced ProviderConfig using it, in `namespace`, made by `kube`. */
async function teamProviderConfig(
  kube: Kube,
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
) {
  await kube.deleteSecret(namespace, `${name}-creds`);
  await kube.createSecret({
    metadata: { name: `${name}-creds`, namespace },
    stringData: { credentials: MOTO_CREDENTIALS },
  });
  await createdAs(kube, pcType, {
    apiVersion: `${pcType.group}/${pcType.version}`,
    kind: "ProviderConfig",
    metadata: { name, namespace },
    spec: {
      credentials: { source: "Secret", secretRef: { name: `${name}-creds`, key: "credentials" } },
      region: "us-east-1",
      endpoint: { url: env("AWS_ENDPOINT_URL") },
      ...spec,
    },
  });
}

const queue = (namespace: string, name: string, spec: Record<string, unknown>) => ({
  apiVersion: NQueue.apiVersion,
  kind: "Queue",
  metadata: { name, namespace },
  spec: { forProvider: {}, ...spec },
});

const reconciler = newReconciler(admin);
const reconcile = (t: { apiVersion: string; kind: string }, namespace: string, name: string) =>
  settle(reconciler, { apiVersion: t.apiVersion, kind: t.kind, name, namespace });
const synced = async (t: ResourceType, namespace: string, name: string) =>
  conditionOf(await admin.get<ManagedResource & { [k: string]: unknown }>(t, name, namespace), "Synced");
const queueInMoto = async (name: string) =>
  sqs.send(new GetQueueUrlCommand({ QueueName: name })).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  await ensureCrds();
  for (const ns of [teamA, teamB, "driftless-system"]) await ensureNamespace(admin, ns);
  // The platform's ClusterProviderConfigs: one for team A's namespace, one kept from it.
  await admin.deleteSecret("driftless-system", `${cpc}-creds`);
  await admin.createSecret({
    metadata: { name: `${cpc}-creds`, namespace: "driftless-system" },
    stringData: { credentials: MOTO_CREDENTIALS },
  });
  for (const [name, allowed] of [
    [cpc, [teamA]],
    [cpcOther, [teamB]],
  ] as const) {
    await createdAs(admin, cpcType, {
      apiVersion: `${cpcType.group}/${cpcType.version}`,
      kind: "ClusterProviderConfig",
      metadata: { name },
      spec: {
        credentials: {
          source: "Secret",
          secretRef: { namespace: "driftless-system", name: `${cpc}-creds`, key: "credentials" },
        },
        region: "us-east-1",
        endpoint: { url: env("AWS_ENDPOINT_URL") },
        allowedNamespaces: [...allowed],
      },
    });
  }
  asTeamA = await teamIdentity(teamA);
}, 60_000);

afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => undefined);
  for (const ns of [teamA, teamB])
    await objects
      .delete({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } })
      .catch(() => undefined);
});

describe("a team in its namespace", () => {
  it("cannot write outside its namespace, nor touch cluster-scoped ProviderConfigs (RBAC)", async () => {
    expect(await statusOfCall(() => asTeamA.create(NQueue, queue(teamB, uniqueName("q"), {}) as never))).toBe(
      403,
    );
    expect(
      await statusOfCall(() =>
        asTeamA.createSecret({
          metadata: { name: uniqueName("s"), namespace: teamB },
          stringData: { a: "b" },
        }),
      ),
    ).toBe(403);
    expect(await statusOfCall(() => asTeamA.get(cpcType, cpc))).toBe(403);
    expect(await statusOfCall(() => asTeamA.get(pcType, "any", teamB))).toBe(403);
  });

  it("gets its queue through the ClusterProviderConfig the platform allows it, with the connection Secret in its own namespace", async () => {
    const name = uniqueName("q-a");
    // A namespace in writeConnectionSecretToRef is not in the schema: the API server drops it.
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, {
        providerConfigRef: { kind: "ClusterProviderConfig", name: cpc },
        writeConnectionSecretToRef: { name: `${name}-conn`, namespace: teamB },
      }),
    );
    const stored = await admin.get<ManagedResource & { [k: string]: unknown }>(NQueue, name, teamA);
    expect(stored?.spec.writeConnectionSecretToRef).toEqual({ name: `${name}-conn` });
    expect(stored?.spec).not.toHaveProperty("deletionPolicy");
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.status).toBe("True");
    expect(await queueInMoto(name)).toBe(true);
    expect((await asTeamA.getSecret(teamA, `${name}-conn`))?.data?.url).toBeDefined();
    expect(await admin.getSecret(teamB, `${name}-conn`)).toBeUndefined();
    // Deleting it deletes the queue (Delete is in the default managementPolicies).
    await admin.delete(NQueue, name, teamA);
    await reconcile(NQueue, teamA, name);
    expect(await admin.get(NQueue, name, teamA)).toBeUndefined();
    expect(await queueInMoto(name)).toBe(false);
  });

  it("cannot use a ClusterProviderConfig the platform keeps for another namespace", async () => {
    const name = uniqueName("q-cpc");
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, { providerConfigRef: { kind: "ClusterProviderConfig", name: cpcOther } }),
    );
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.message).toContain(
      `ClusterProviderConfig "${cpcOther}" may not be used from namespace "${teamA}"`,
    );
    expect(await queueInMoto(name)).toBe(false);
  });

  it("cannot make driftless use another namespace's ProviderConfig", async () => {
    const theirs = uniqueName("pc-b");
    await teamProviderConfig(admin, teamB, theirs);
    const name = uniqueName("q-pcb");
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, { providerConfigRef: { kind: "ProviderConfig", name: theirs } }),
    );
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.message).toContain(
      `ProviderConfig "${theirs}" (aws.m.driftless.dev) in namespace "${teamA}" not found`,
    );
    expect(await queueInMoto(name)).toBe(false);
  });

  it("uses its own ProviderConfig, whose credentials Secret is read from its own namespace", async () => {
    const mine = uniqueName("pc-a");
    await teamProviderConfig(asTeamA, teamA, mine);
    const name = uniqueName("q-pca");
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, { providerConfigRef: { kind: "ProviderConfig", name: mine } }),
    );
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.status).toBe("True");
    expect(await queueInMoto(name)).toBe(true);
    const pcs = new ProviderConfigReconciler(admin, new KindRegistry(managedKinds), providerConfigKinds);
    const res = await pcs.reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: mine,
      namespace: teamA,
    });
    expect(res).toMatchObject({ outcome: "ready", users: 1 });
  });

  it("cannot reference another namespace's resources: a reference resolves in its own namespace only", async () => {
    const vpc = uniqueName("vpc");
    // Team B's VPC, Ready with an id: invisible to a reference from team A.
    await createdAs(admin, NVPC, {
      apiVersion: NVPC.apiVersion,
      kind: "VPC",
      metadata: {
        name: vpc,
        namespace: teamB,
        annotations: { "crossplane.io/external-name": "vpc-0123456789abcdef0" },
      },
      spec: { forProvider: { cidrBlock: "10.9.0.0/16" } },
    });
    await admin.patchStatus(
      NVPC,
      vpc,
      {
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Available",
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
      { namespace: teamB },
    );
    const subnet = uniqueName("subnet");
    await createdAs(asTeamA, NSubnet, {
      apiVersion: NSubnet.apiVersion,
      kind: "Subnet",
      metadata: { name: subnet, namespace: teamA },
      spec: {
        forProvider: { cidrBlock: "10.9.1.0/24", vpcIdRef: { name: vpc } },
        providerConfigRef: { kind: "ClusterProviderConfig", name: cpc },
      },
    });
    await reconcile(NSubnet, teamA, subnet);
    const s = await synced(NSubnet, teamA, subnet);
    expect(s?.status).toBe("False");
    expect(s?.message).toContain(`referenced VPC "${vpc}" does not exist`);
    const stored = await admin.get<ManagedResource & { [k: string]: unknown }>(NSubnet, subnet, teamA);
    expect(stored?.spec.forProvider).not.toHaveProperty("vpcId");
  });
});

describe("a namespaced ProviderConfig that would borrow the platform's cloud account", () => {
  it("is refused when it uses the functions' own identity (InjectedIdentity)", async () => {
    const mine = uniqueName("pc-ambient");
    await createdAs(asTeamA, pcType, {
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      metadata: { name: mine, namespace: teamA },
      spec: {
        credentials: { source: "InjectedIdentity" },
        region: "us-east-1",
        endpoint: { url: env("AWS_ENDPOINT_URL") },
      },
    });
    const name = uniqueName("q-ambient");
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, { providerConfigRef: { kind: "ProviderConfig", name: mine } }),
    );
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.message).toContain(
      "uses InjectedIdentity, the functions' own cloud identity",
    );
    expect(await queueInMoto(name)).toBe(false);
    const pcs = new ProviderConfigReconciler(admin, new KindRegistry(managedKinds), providerConfigKinds);
    await pcs.reconcile({
      apiVersion: `${pcType.group}/${pcType.version}`,
      kind: "ProviderConfig",
      name: mine,
      namespace: teamA,
    });
    const ready = (
      await admin.get<{
        metadata: { name: string };
        status?: { conditions?: Array<{ type: string; reason: string }> };
      }>(pcType, mine, teamA)
    )?.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.reason).toBe("NotAllowed");
  });

  it("is refused when its endpoint points at the instance metadata service", async () => {
    const mine = uniqueName("pc-imds");
    await teamProviderConfig(asTeamA, teamA, mine, { endpoint: { url: "http://169.254.169.254" } });
    const name = uniqueName("q-imds");
    await createdAs(
      asTeamA,
      NQueue,
      queue(teamA, name, { providerConfigRef: { kind: "ProviderConfig", name: mine } }),
    );
    await reconcile(NQueue, teamA, name);
    expect((await synced(NQueue, teamA, name))?.message).toContain(
      "spec.endpoint.url points at a link-local or cloud-metadata address (169.254.169.254)",
    );
    expect(await queueInMoto(name)).toBe(false);
  });
});
