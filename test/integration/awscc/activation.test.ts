// Activation at run time, as objects in the cluster: `driftless run` started with no generated kind
// activated, a generated kind's CRD installed by hand (the reproduction: `crds apply --activate`
// while run runs). An object of it is told, by a Warning event, that its kind is not activated and how to
// activate it; then a ManagedResourceActivationPolicy naming the kind makes the same process serve it —
// the object reaches Ready within a sweep, no restart — and the policy's status says what it activates.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActivationPolicy, type ActivationPolicyObject } from "../../../shared/api/pkg/activation-policy.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { NOT_ACTIVATED } from "../../../shared/ops/activation-policy.ts";
import { awsccTestbed } from "../../support/awscc.ts";
import { expectAvailable, managedObject } from "../../support/conformance.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { getMr } from "../../support/reconcile.ts";
import { CliProcess, label, notActivatedWarning, readyOnceServed, TEST_LABEL } from "../cli/helpers.ts";

const kube = newKube();
const TYPE = "AWS::ResourceGroups::Group";
const LABEL = uniqueName("awscc-activation");
const PC = uniqueName("pc-awscc-activation");
const POLICY = uniqueName("activate-groups");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;
let run: CliProcess;

beforeAll(async () => {
  bed = await awsccTestbed(kube, PC, [TYPE]);
  await label(kube, providerConfigs.aws.type, PC, LABEL);
  run = new CliProcess(
    ["run", "--no-crds", "--no-metrics", "--workers", "2", "-l", `${TEST_LABEL}=${LABEL}`],
    {
      LOG_LEVEL: "info",
      DRIFTLESS_SWEEP_INTERVAL: "2s",
      DRIFTLESS_ACTIVATE: "",
    },
  );
  await run.waitForLog((l) => l.msg === "driftless run started", "run started");
}, 120_000);

afterAll(async () => {
  await kube.delete(ActivationPolicy, POLICY).catch(() => undefined);
  if (run && run.child.exitCode === null) await run.stop();
  await bed?.close();
});

describe("activation policies read by driftless run", { timeout: 180_000 }, () => {
  it("warns an object of an inactive kind, then serves the kind a policy activates, without a restart", async () => {
    // Prepare: an object of an installed but not activated generated kind; before it, one of another shard
    // (another run's label): that run's to tell, not this one's.
    const def = bed.defs.get(TYPE)!;
    const name = uniqueName("group");
    const otherShard = uniqueName("group-other-shard");
    await kube.create(
      def,
      managedObject(def, otherShard, PC, { connectionSecret: false, labels: { [TEST_LABEL]: `${LABEL}-b` } }),
    );
    await kube.create(
      def,
      managedObject(def, name, PC, { connectionSecret: false, labels: { [TEST_LABEL]: LABEL } }),
    );

    // Assess: told so, with the way to activate it; nothing reconciled it.
    const warning = await notActivatedWarning(kube, name);
    expect(warning.type).toBe("Warning");
    expect(warning.message).toContain("groups.resourcegroups.awscc.driftless.dev");
    expect(warning.message).toContain('spec.activate: ["resourcegroups.group"]');
    expect((await getMr(kube, def, name))?.status?.conditions ?? []).toEqual([]);
    expect(await bed.fake.resources(TYPE)).toEqual([]);
    // The same list of the kind would have told the other shard's object first: it was not listed.
    const told = await kube.listEvents<{ reason?: string }>("default", `involvedObject.name=${otherShard}`);
    expect(told.filter((e) => e.reason === NOT_ACTIVATED)).toEqual([]);

    // Act: activate it with a policy, as a platform team would (kubectl apply).
    await kube.create<ActivationPolicyObject>(ActivationPolicy, {
      apiVersion: ActivationPolicy.apiVersion,
      kind: ActivationPolicy.kind,
      metadata: { name: POLICY },
      spec: { activate: ["resourcegroups.group"] },
    });

    // Assess: the running process serves it (same process, never restarted), the object is Ready and the
    // Group exists in the cloud; the policy's status shows what it activates.
    const ready = await readyOnceServed(kube, def, name);
    expectAvailable(ready);
    expect((await bed.fake.resources(TYPE)).map((r) => r.identifier)).toEqual([name]);
    expect(run.child.exitCode).toBeNull();
    expect(run.logs().filter((l) => l.msg === "driftless run started").length).toBe(2);
    const changed = run
      .logs()
      .find((l) => l.msg === "activation changed: serving the generated kinds now activated");
    expect(changed?.activated).toEqual([
      "groups.resourcegroups.awscc.driftless.dev",
      "groups.resourcegroups.awscc.m.driftless.dev",
    ]);
    const policy = await eventually(
      async () => {
        const p = await kube.get<ActivationPolicyObject>(ActivationPolicy, POLICY);
        return p?.status?.activated?.length ? p : undefined;
      },
      { what: "the policy's status.activated" },
    );
    expect(policy.status?.activated).toEqual([
      "groups.resourcegroups.awscc.driftless.dev",
      "groups.resourcegroups.awscc.m.driftless.dev",
    ]);

    // Cleanup through the same process: deleted while still activated (the other shard's was never served).
    await kube.delete(def, otherShard);
    await kube.delete(def, name);
    await eventually(async () => (await getMr(kube, def, name)) === undefined, {
      timeoutMs: 60_000,
      what: `${name} deleted`,
    });
    expect(await bed.fake.resources(TYPE)).toEqual([]);
  });
});
