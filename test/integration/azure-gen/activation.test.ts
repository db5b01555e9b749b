// Activation of generated Azure kinds at run time, as objects in the cluster, exactly as for the generated
// AWS kinds (test/integration/awscc/activation.test.ts): `driftless run` started with no generated kind
// activated, a generated Azure kind's CRD installed by hand. An object of it is told, by a Warning event,
// that its kind is not activated and how (`azure:<rp>.<kind>`); a ManagedResourceActivationPolicy naming the
// kind makes the same process serve it — the object is Ready within a sweep, no restart — and the policy's
// status says what it activates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateAzure } from "../../../infra/gen-azure.ts";
import { loadAzureCatalog, loadAzureSpec } from "../../../shared/api/azure-gen/catalog.ts";
import { azureGenKindOf } from "../../../shared/api/azure-gen/kind.ts";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { ActivationPolicy, type ActivationPolicyObject } from "../../../shared/api/pkg/activation-policy.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { ensureCrds } from "../../support/aws.ts";
import { armClient, createAzureProviderConfig } from "../../support/azure.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { env, eventually, newKube, uniqueName } from "../../support/env.ts";
import { getMr } from "../../support/reconcile.ts";
import {
  CliProcess,
  expectActivatedWithoutRestart,
  label,
  notActivatedWarning,
  readyOnceServed,
  TEST_LABEL,
} from "../cli/helpers.ts";

const kube = newKube();
const TYPE = "Microsoft.Network/applicationSecurityGroups";
const ALIAS = "azure:network.applicationsecuritygroup";
const CRD = "applicationsecuritygroups.network.azure.gen.driftless.dev";
const LABEL = uniqueName("azgen-activation");
const PC = uniqueName("pc-azgen-activation");
const RG = uniqueName("rg-azgen-activation");
const POLICY = uniqueName("activate-asgs");
let def: ManagedKindDef;
let run: CliProcess;

const groups = armClient(env("AZURE_ARM_ENDPOINT"));
/** Whether ARM has the security group (a GET by id, as a user's own tooling would make it). */
async function inCloud(name: string): Promise<boolean> {
  const res = await fetch(
    `${env("AZURE_ARM_ENDPOINT")}/subscriptions/${env("AZURE_SUBSCRIPTION_ID")}/resourceGroups/${RG}/providers/${TYPE}/${name}?api-version=${loadAzureSpec(entry()).apiVersion}`,
    { headers: { authorization: "Bearer user-tooling" } },
  );
  await res.body?.cancel();
  if (res.status !== 200 && res.status !== 404) throw new Error(`GET ${name}: ${res.status}`);
  return res.status === 200;
}
const entry = () => {
  const e = loadAzureCatalog().kinds.find((k) => k.type === TYPE);
  if (!e) throw new Error(`${TYPE} is not generated`);
  return e;
};

beforeAll(async () => {
  generateAzure();
  def = azureGenKindOf(loadAzureSpec(entry()));
  await ensureCrds();
  await installCrds(kube, [def]);
  await createAzureProviderConfig(kube, PC, { noStorage: true });
  await label(kube, providerConfigs.azure.type, PC, LABEL);
  await groups.resourceGroups.createOrUpdate(RG, { location: "westeurope" });
  run = new CliProcess(
    ["run", "--no-crds", "--no-metrics", "--workers", "2", "-l", `${TEST_LABEL}=${LABEL}`],
    { LOG_LEVEL: "info", DRIFTLESS_SWEEP_INTERVAL: "2s", DRIFTLESS_ACTIVATE: "" },
  );
  await run.waitForLog((l) => l.msg === "driftless run started", "run started");
}, 120_000);

afterAll(async () => {
  await kube.delete(ActivationPolicy, POLICY).catch(() => undefined);
  if (run && run.child.exitCode === null) await run.stop();
  if (def) await removeCrds(kube, [def]);
});

describe("activation policies read by driftless run: generated Azure kinds", { timeout: 180_000 }, () => {
  it("warns an object of an inactive kind, then serves the kind a policy activates, without a restart", async () => {
    // Prepare: an object of an installed but not activated generated Azure kind.
    const name = uniqueName("asg");
    await kube.create(
      def,
      managedObject(def, name, PC, {
        connectionSecret: false,
        labels: { [TEST_LABEL]: LABEL },
        forProvider: { resourceGroupName: RG, location: "westeurope" },
      }),
    );

    // Assess: told so, with the way to activate it; nothing reconciled it.
    const warning = await notActivatedWarning(kube, name);
    expect(warning.type).toBe("Warning");
    expect(warning.message).toContain(CRD);
    expect(warning.message).toContain(`spec.activate: ["${ALIAS}"]`);
    expect((await getMr(kube, def, name))?.status?.conditions ?? []).toEqual([]);
    expect(await inCloud(name)).toBe(false);

    // Act: activate it with a policy, as a platform team would (kubectl apply).
    await kube.create<ActivationPolicyObject>(ActivationPolicy, {
      apiVersion: ActivationPolicy.apiVersion,
      kind: ActivationPolicy.kind,
      metadata: { name: POLICY },
      spec: { activate: [ALIAS, "azure:nosuchrp.*"] },
    });

    // Assess: the same process serves it (never restarted), the object is Ready and the group exists in
    // ARM; the policy's status shows what it activates and which pattern selects nothing.
    const ready = await readyOnceServed(kube, def, name);
    expectAvailable(ready);
    expect(await inCloud(name)).toBe(true);
    const shapes = [CRD, CRD.replace(".azure.gen.", ".azure.gen.m.")];
    const policy = await expectActivatedWithoutRestart(run, kube, POLICY, shapes);
    expect(policy.status?.unmatched).toEqual(["azure:nosuchrp.*"]);

    // Cleanup through the same process: deleted while still activated.
    await kube.delete(def, name);
    await eventually(async () => (await getMr(kube, def, name)) === undefined, {
      timeoutMs: 60_000,
      what: `${name} deleted`,
    });
    expect(await inCloud(name)).toBe(false);
  });
});
