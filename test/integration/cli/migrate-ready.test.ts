// A Crossplane user's objects, migrated onto generated kinds, take over what Crossplane made: each cloud's
// resource exists already (made through the cloud's own API, as the Upjet provider made it), the user's
// Upjet object (an Upjet example, with the external name the provider recorded and the user's
// ProviderConfig) goes through `migrate`, is applied, and its reconcile in Observe — migrate's default, so a
// migration changes nothing — finds that resource: Ready and Synced, and the cloud sees no write. Then the
// user's next step, full management: still that one resource, only the spec's differences written. AWS
// (ECR Repository through the Cloud Control fake into moto), Azure (a public IP address and its resource
// group, through the generic ARM fake) and Google Cloud (a Certificate Manager DNS authorization, through
// the generic Google fake), each in Crossplane's v1 (cluster) and v2 (namespaced) shape.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { CloudControlClient, CreateResourceCommand } from "@aws-sdk/client-cloudcontrol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { generateAzure } from "../../../infra/gen-azure.ts";
import type { FakeServer } from "../../../infra/local/fakes/arm-fake.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import type { AzureKindSpec } from "../../../shared/api/azure-gen/spec.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import {
  type ManagedKindDef,
  type ManagedResource,
  namespacedVariantOf,
} from "../../../shared/api/managed.ts";
import { providerConfigs, v2ProviderConfigs } from "../../../shared/api/provider-config.ts";
import type { KubeObject } from "../../../shared/kube/client.ts";
import { type DriftlessObject, migrate } from "../../../shared/ops/migrate.ts";
import { generatedKinds } from "../../../shared/ops/migrate-generated.ts";
import { loadUpjetFacts, UPJET_FACTS_FILE } from "../../../shared/ops/migrate-upjet-facts.ts";
import { awsccProviders } from "../../../shared/providers/awscc/kinds.ts";
import { azureGenProviders } from "../../../shared/providers/azure/arm-generic/kinds.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../../shared/providers/gcp/home.ts";
import { withHome } from "../../../shared/providers/home.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { EXAMPLES_FILE, type UpjetExamples } from "../../fixtures/crossplane/upjet-examples/refresh.ts";
import { createAwsProviderConfig, ensureCrds, ensureNamespace } from "../../support/aws.ts";
import { awsccSpec, requestDone, startFake } from "../../support/awscc.ts";
import {
  armClient,
  armRequestsDuring,
  createAzureProviderConfig,
  startGenericArmFake,
} from "../../support/azure.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { env, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, gcpProject } from "../../support/gcp.ts";
import { conditionOf } from "../../support/reconcile.ts";
import { Reconciler } from "../../support/routed.ts";

type Json = Record<string, unknown>;
type Cloud = "aws" | "azure" | "gcp";

const kube = newKube();
const NS = uniqueName("migrated");
const PC: Record<Cloud, string> = {
  aws: uniqueName("pc-mig-aws"),
  azure: uniqueName("pc-mig-az"),
  gcp: uniqueName("pc-mig-gcp"),
};
const EXAMPLE: Record<Cloud, string | Record<"cluster" | "namespaced", string>> = {
  aws: { cluster: "ecr/v1beta2/repository.yaml", namespaced: "ecr/v1beta1/repository.yaml" },
  azure: "network/v1beta1/publicip.yaml",
  gcp: "certificatemanager/v1beta1/dnsauthorization.yaml",
};
const ECR = "AWS::ECR::Repository";
const PIP = "Microsoft.Network/publicIPAddresses";
const DNS_AUTH = "certificatemanager.googleapis.com/DnsAuthorization";
const PIP_API = "2024-05-01";

const examples = JSON.parse(gunzipSync(readFileSync(EXAMPLES_FILE)).toString("utf8")) as UpjetExamples;
let cc: Awaited<ReturnType<typeof startFake>>;
let arm: FakeServer;
let google: GoogleGenericFake;
let r: Reconciler;
const defs: ManagedKindDef[] = [];

/** The Upjet example of `cloud` in one shape, as the user's cluster holds it once Crossplane made it. */
function upjetObjects(cloud: Cloud, shape: "cluster" | "namespaced", label: string, externalName: string) {
  const example = EXAMPLE[cloud];
  const file = `${cloud}/examples-generated/${shape}/${typeof example === "string" ? example : example[shape]}`;
  const text = examples.files[file];
  if (!text) throw new Error(`no Upjet example ${file}`);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject & { spec: Json })
    .filter((d) => !!d)
    .map((d) => {
      const labels = d.metadata.labels ?? {};
      const forProvider = JSON.parse(
        // The example's selectors match its own label: made unique, so they match only this test's objects.
        JSON.stringify(d.spec.forProvider ?? {}).replaceAll(
          `"${labels["testing.upbound.io/example-name"]}"`,
          `"${label}"`,
        ),
      ) as Json;
      return {
        ...d,
        metadata: {
          ...d.metadata,
          name: `${label}-${String(d.kind).toLowerCase()}`,
          ...(shape === "namespaced" ? { namespace: NS } : {}),
          labels: { ...labels, "testing.upbound.io/example-name": label },
          annotations: { ...d.metadata.annotations, "crossplane.io/external-name": externalName },
        },
        spec: {
          ...d.spec,
          forProvider,
          providerConfigRef:
            shape === "namespaced" ? { kind: "ClusterProviderConfig", name: PC[cloud] } : { name: PC[cloud] },
        },
      };
    });
}

/** The migrated objects of one Upjet example, each with its driftless type. */
function migrated(objects: KubeObject[]) {
  const out = migrate(objects, {
    defaultNamespace: NS,
    generated: generatedKinds(loadUpjetFacts(UPJET_FACTS_FILE)),
  });
  const errors = out.issues.filter((i) => i.severity === "error");
  expect(errors, JSON.stringify(errors)).toEqual([]);
  const typeOf = (o: DriftlessObject) => {
    const t = [...managedKinds.map((p) => p.definition), ...defs]
      .flatMap((d) => [d, namespacedVariantOf(d)])
      .find((d) => d.apiVersion === o.apiVersion && d.kind === o.kind);
    if (!t) throw new Error(`no kind ${o.apiVersion} ${o.kind}`);
    return t;
  };
  return out.objects.map((m) => ({ object: m.object, type: typeOf(m.object) }));
}

/** Applies migrated objects, reconciles them (referents first) and returns them as stored. */
async function applyAndReconcile(objects: ReturnType<typeof migrated>) {
  for (const { object, type } of objects) await kube.create(type, object as unknown as KubeObject);
  return reconcileAll(objects);
}

/** The user's next step once they look right: full management, then reconciled as before. */
async function manageFully(objects: ReturnType<typeof migrated>) {
  for (const { object, type } of objects)
    await kube.patch(
      type,
      object.metadata.name,
      { spec: { managementPolicies: ["*"] } },
      object.metadata.namespace ? { namespace: object.metadata.namespace } : undefined,
    );
  return reconcileAll(objects);
}

async function reconcileAll(objects: ReturnType<typeof migrated>) {
  const order = [...objects].sort(
    (a, b) => Number(a.type.kind !== "ResourceGroup") - Number(b.type.kind !== "ResourceGroup"),
  );
  for (let round = 0; round < 3; round++)
    for (const { object } of order)
      await r.reconcile({
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
      });
  return Promise.all(
    objects.map(({ object, type }) =>
      kube.get<ManagedResource<Json> & KubeObject>(type, object.metadata.name, object.metadata.namespace),
    ),
  );
}

async function clusterProviderConfig(cloud: Cloud) {
  const pc = await kube.get<KubeObject & { spec: Json }>(providerConfigs[cloud].type, PC[cloud]);
  const t = v2ProviderConfigs[cloud].cluster.type;
  await kube.delete(t, PC[cloud]);
  await kube.create(t, {
    apiVersion: `${t.group}/${t.version}`,
    kind: "ClusterProviderConfig",
    metadata: { name: PC[cloud] },
    spec: { ...pc?.spec, allowedNamespaces: [NS] },
  } as KubeObject);
}

beforeAll(async () => {
  generateAzure();
  const azureCatalog = loadAzureCatalog();
  const pipSpec: AzureKindSpec = loadAzureSpec(azureCatalog.kinds.find((k) => k.type === PIP) as never);
  const googleCatalog = loadGoogleCatalog();
  const dnsSpec: GoogleKindSpec = loadGoogleSpec(
    googleCatalog.kinds.find((k) => k.typeName === DNS_AUTH) as never,
  );
  const ecrSpec = awsccSpec(ECR);
  const generated = [
    ...awsccProviders([ecrSpec], { pollDelaysMs: [5, 5, 5, 5] }),
    ...azureGenProviders([pipSpec]),
    ...googleProviders([dnsSpec], { pollDelaysMs: [] }).map((p) => withHome(p, gcpHome)),
  ];
  defs.push(...generated.map((p) => p.definition));

  cc = await startFake({ moto: env("AWS_ENDPOINT_URL") });
  arm = await startGenericArmFake();
  google = await startGoogleGenericFake({ opPolls: 0 });
  await ensureCrds();
  await installCrds(
    kube,
    defs.flatMap((d) => [d, namespacedVariantOf(d)]),
  );
  await ensureNamespace(kube, NS);
  await createAwsProviderConfig(kube, PC.aws, { endpoint: cc.url });
  await createAzureProviderConfig(kube, PC.azure, { armEndpoint: arm.url, noStorage: true });
  await createGcpProviderConfig(kube, PC.gcp, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${google.url}/{api}` },
  });
  for (const cloud of ["aws", "azure", "gcp"] as const) await clusterProviderConfig(cloud);
  r = new Reconciler(kube, new KindRegistry([...managedKinds, ...withNamespacedVariants(generated)]), {
    creationGracePeriodMs: 0,
  });
}, 180_000);

afterAll(async () => {
  await removeCrds(
    kube,
    defs.flatMap((d) => [d, namespacedVariantOf(d)]),
  );
  await cc?.close();
  await arm?.close();
  await google?.close();
});

const expectReadyInObserve = (
  mr: ManagedResource<Json> | undefined,
  externalName: string,
  policies = ["Observe"],
) => {
  expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
  expect(conditionOf(mr, "Synced"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
  expect(mr?.spec.managementPolicies).toEqual(policies);
  expect(mr?.metadata.annotations?.["crossplane.io/external-name"]).toBe(externalName);
};

describe("objects migrated onto generated kinds take over what Crossplane made", () => {
  for (const shape of ["cluster", "namespaced"] as const) {
    it(`AWS ECR Repository (${shape}): found in moto by its name, nothing written`, {
      timeout: 90_000,
    }, async () => {
      // Arrange: the repository the Upjet provider made, in the example's region.
      const name = uniqueName("mig-ecr");
      const region = "us-west-1";
      const client = new CloudControlClient({
        region,
        endpoint: cc.url,
        credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
      });
      const made = await client.send(
        new CreateResourceCommand({
          TypeName: ECR,
          DesiredState: JSON.stringify({ RepositoryName: name, ImageTagMutability: "MUTABLE" }),
        }),
      );
      expect((await requestDone(client, made.ProgressEvent)).OperationStatus).toBe("SUCCESS");
      const objects = migrated(upjetObjects("aws", shape, name, name));
      const before = await cc.requests();

      // Act
      const [repo] = await applyAndReconcile(objects);

      // Assess
      expectReadyInObserve(repo, name);
      const after = await cc.requests();
      for (const op of ["CreateResource", "UpdateResource", "DeleteResource"])
        expect(after[op] ?? 0, op).toBe(before[op] ?? 0);
      expect((await cc.resources(ECR)).filter((x) => x.identifier === name)).toHaveLength(1);

      // Taken over: the example's scanOnPush (not set by whoever made it) is written, nothing is made.
      const [managed] = await manageFully(objects);
      expectReadyInObserve(managed, name, ["*"]);
      const [model] = (await cc.resources(ECR)).filter((x) => x.identifier === name);
      expect(model?.model.ImageScanningConfiguration).toEqual({ ScanOnPush: true });
      expect((await cc.requests()).CreateResource ?? 0).toBe(before.CreateResource ?? 0);
    });

    it(`Azure public IP address and its resource group (${shape}): found by name, nothing written`, {
      timeout: 90_000,
    }, async () => {
      // Arrange: the resource group and the address the Upjet provider made.
      const rg = uniqueName("mig-rg");
      await armClient(arm.url).resourceGroups.createOrUpdate(rg, { location: "westeurope" });
      const pip = uniqueName("mig-pip");
      const id = `/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${rg}/providers/${PIP}/${pip}`;
      const put = await fetch(`${arm.url}${id}?api-version=${PIP_API}`, {
        method: "PUT",
        headers: { authorization: "Bearer user-tooling", "content-type": "application/json" },
        body: JSON.stringify({ location: "westeurope", tags: { environment: "Production" } }),
      });
      expect(put.status, await put.text()).toBeLessThan(300);
      // The resource group's Upjet object carries its own name; the address's, the address's.
      const objects = migrated(
        upjetObjects("azure", shape, pip, pip).map((o) =>
          o.kind === "ResourceGroup"
            ? { ...o, metadata: { ...o.metadata, annotations: { "crossplane.io/external-name": rg } } }
            : o,
        ),
      );

      // Act
      let stored: Awaited<ReturnType<typeof applyAndReconcile>> = [];
      const requests = await armRequestsDuring(arm.url, async () => {
        stored = await applyAndReconcile(objects);
      });

      // Assess
      const byKind = new Map(stored.map((mr) => [mr?.kind, mr]));
      expectReadyInObserve(byKind.get("ResourceGroup"), rg);
      expectReadyInObserve(byKind.get("PublicIPAddress"), pip);
      // The selector found the migrated resource group: the address's group is the one Crossplane made.
      expect(byKind.get("PublicIPAddress")?.spec.forProvider.resourceGroupName).toBe(rg);
      const writes = Object.entries(requests).filter(([k]) => /^(PUT|PATCH|DELETE|POST) (?!token)/.test(k));
      expect(writes, JSON.stringify(requests)).toEqual([]);

      // Taken over: in sync already (same tags, same place), so full management writes nothing either.
      const managedRequests = await armRequestsDuring(arm.url, async () => {
        stored = await manageFully(objects);
      });
      for (const mr of stored) expectReadyInObserve(mr, mr?.kind === "ResourceGroup" ? rg : pip, ["*"]);
      expect(Object.keys(managedRequests).filter((k) => /^PUT /.test(k) && !/tags/.test(k))).toEqual([]);
    });

    it(`Google Certificate Manager DNS authorization (${shape}): found by its id, nothing written`, {
      timeout: 90_000,
    }, async () => {
      // Arrange: the authorization the Upjet provider made (its external name is the resource's id).
      const id = uniqueName("mig-dns");
      const parent = `projects/${gcpProject()}/locations/global`;
      const made = await fetch(
        `${google.url}/certificatemanager/v1/${parent}/dnsAuthorizations?dnsAuthorizationId=${id}`,
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ description: "The default dns", domain: "subdomain.hashicorptest.com" }),
        },
      );
      expect(made.status, await made.text()).toBe(200);
      expect(google.resource(`${parent}/dnsAuthorizations/${id}`)).toBeDefined();
      const objects = migrated(upjetObjects("gcp", shape, id, id));
      const writesBefore = google.writeAgents.length;
      const creates = () =>
        Object.entries(google.stats())
          .filter(([k]) => /^POST .*dnsAuthorizations$/.test(k))
          .reduce((n, [, v]) => n + v, 0);
      const createsBefore = creates();

      // Act
      const [auth] = await applyAndReconcile(objects);

      // Assess
      expectReadyInObserve(auth, id);
      expect(google.writeAgents.length - writesBefore, JSON.stringify(google.stats())).toBe(0);

      // Taken over: only Crossplane's default labels are added (a patch), the authorization is not made again.
      const [managed] = await manageFully(objects);
      expectReadyInObserve(managed, id, ["*"]);
      expect(creates()).toBe(createsBefore);
    });
  }
});
