// Activation at run time for the generated Google kinds, as for AWS's (test/integration/awscc/activation.test.ts):
// `driftless run` started with no generated kind activated, a generated Google kind's CRD installed by hand.
// An object of it is told, by a Warning event, that its kind is not activated and which pattern activates it;
// then a ManagedResourceActivationPolicy naming the kind makes the same process serve it — the object reaches
// Ready within a sweep, no restart, the secret exists in this file's own generic Google fake — and the
// policy's status says what it activates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../../shared/api/googleapis/kind.ts";
import { namespacedVariantOf } from "../../../shared/api/managed.ts";
import { ActivationPolicy, type ActivationPolicyObject } from "../../../shared/api/pkg/activation-policy.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { ensureCrds } from "../../support/aws.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { createGcpProviderConfig, gcpProject } from "../../support/gcp.ts";
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
const LABEL = uniqueName("gcpgen-activation");
const PC = uniqueName("pc-gcpgen-activation");
const POLICY = uniqueName("activate-secrets");
const CRDS = [
  "secrets.secretmanager.googleapis.driftless.dev",
  "secrets.secretmanager.googleapis.m.driftless.dev",
];
generateGcp();
const def = googleKindOf(
  loadGoogleSpec(
    loadGoogleCatalog().kinds.find((k) => k.typeName === "secretmanager.googleapis.com/Secret") as never,
  ),
);
let fake: GoogleGenericFake;
let run: CliProcess;

beforeAll(async () => {
  fake = await startGoogleGenericFake({ opPolls: 0 });
  await ensureCrds();
  await installCrds(kube, [def, namespacedVariantOf(def)]);
  await createGcpProviderConfig(kube, PC, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${fake.url}/{api}` },
  });
  await label(kube, providerConfigs.gcp.type, PC, LABEL);
  run = new CliProcess(
    ["run", "--no-crds", "--no-metrics", "--workers", "2", "-l", `${TEST_LABEL}=${LABEL}`],
    { LOG_LEVEL: "info", DRIFTLESS_SWEEP_INTERVAL: "2s", DRIFTLESS_ACTIVATE: "" },
  );
  await run.waitForLog((l) => l.msg === "driftless run started", "run started");
}, 120_000);

afterAll(async () => {
  await kube.delete(ActivationPolicy, POLICY).catch(() => undefined);
  if (run && run.child.exitCode === null) await run.stop();
  await removeCrds(kube, [def, namespacedVariantOf(def)]);
  await fake?.close();
});

describe("activation policies read by driftless run, for generated Google kinds", {
  timeout: 180_000,
}, () => {
  it("warns an object of an inactive kind, then serves the kind a policy activates, without a restart", async () => {
    // Arrange: an object of an installed but not activated generated kind.
    const name = uniqueName("secret");
    await kube.create(
      def,
      managedObject(def, name, PC, {
        forProvider: { replication: { automatic: {} } },
        connectionSecret: false,
        labels: { [TEST_LABEL]: LABEL },
      }),
    );

    // Assess: told so, with the pattern that activates it; nothing reconciled it.
    const warning = await notActivatedWarning(kube, name);
    expect(warning.type).toBe("Warning");
    expect(warning.message).toContain(CRDS[0]);
    expect(warning.message).toContain('spec.activate: ["secretmanager.googleapis.secret"]');
    expect((await getMr(kube, def, name))?.status?.conditions ?? []).toEqual([]);
    const where = `projects/${gcpProject()}/secrets/${name}`;
    expect(fake.resource(where)).toBeUndefined();

    // Act: activate it with a policy, as a platform team would (kubectl apply).
    await kube.create<ActivationPolicyObject>(ActivationPolicy, {
      apiVersion: ActivationPolicy.apiVersion,
      kind: ActivationPolicy.kind,
      metadata: { name: POLICY },
      spec: { activate: ["secretmanager.googleapis.secret"] },
    });

    // Assess: the same process serves it, the object is Ready and the secret exists in the fake; the
    // policy's status shows what it activates.
    expectAvailable(await readyOnceServed(kube, def, name));
    expect(fake.resource(where)).toBeDefined();
    await expectActivatedWithoutRestart(run, kube, POLICY, CRDS);

    // Cleanup through the same process: deleted while still activated.
    await kube.delete(def, name);
    await eventually(async () => (await getMr(kube, def, name)) === undefined, {
      timeoutMs: 60_000,
      what: `${name} deleted`,
    });
    expect(fake.resource(where)).toBeUndefined();
  });
});
