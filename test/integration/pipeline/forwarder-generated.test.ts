// The forwarder watches generated kinds activated while it runs (issue 29): their CRDs are read from the
// real API server (functions/forwarder.ts generatedTypesIn, what startForwarder does every sweep interval),
// a kind installed after the forwarder started is watched from the next read, and its objects' keys are
// forwarded like a hand-written kind's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatedTypesIn } from "../../../functions/forwarder.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { awsccKindOf } from "../../../shared/api/awscc/kind.ts";
import { crdName } from "../../../shared/pipeline/common.ts";
import { Forwarder } from "../../../shared/pipeline/forwarder.ts";
import { ensureCrds } from "../../support/aws.ts";
import { awsccSpec } from "../../support/awscc.ts";
import { installCrds, removeCrds } from "../../support/crd-holds.ts";
import { eventually, newKube, uniqueName } from "../../support/env.ts";
import { RecordingSink, TEST_LABEL } from "./helpers.ts";

const kube = newKube();
const def = awsccKindOf(awsccSpec("AWS::Cassandra::Keyspace"));
let forwarder: Forwarder | undefined;

beforeAll(async () => {
  await ensureCrds();
  await removeCrds(kube, [def]);
}, 120_000);

afterAll(async () => {
  await forwarder?.stop();
  await removeCrds(kube, [def]);
}, 120_000);

describe("forwarder and generated kinds activated at run time", () => {
  it("watches a generated kind whose CRD was installed after it started, from the next read of the CRDs", async () => {
    const label = uniqueName("fwd-gen");
    const sink = new RecordingSink();
    forwarder = new Forwarder({
      kube,
      types: [Queue],
      sink,
      labelSelector: `${TEST_LABEL}=${label}`,
      backoff: { baseMs: 50, maxMs: 500 },
    });
    await forwarder.start();
    const before = (await generatedTypesIn(kube, ["aws"])).map(crdName);
    expect(before).not.toContain(crdName(def));

    // Activated now: `driftless crds apply --activate cassandra.keyspace` installs its CRD.
    await installCrds(kube, [def]);
    const read = await generatedTypesIn(kube, ["aws"]);
    expect(read.map(crdName)).toContain(crdName(def));
    // Not for a forwarder of Azure alone.
    expect((await generatedTypesIn(kube, ["azure"])).map(crdName)).not.toContain(crdName(def));
    const added = await forwarder.watch(read);
    expect(added.map(crdName)).toContain(crdName(def));
    // A second read adds nothing: each kind is watched once.
    expect(await forwarder.watch(await generatedTypesIn(kube, ["aws"]))).toEqual([]);

    const name = uniqueName("ks");
    await kube.create(def, {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: { name, labels: { [TEST_LABEL]: label } },
      spec: { forProvider: {}, providerConfigRef: { name: "default" } },
    });
    const msg = await eventually(async () => sink.for(name)[0], {
      timeoutMs: 30_000,
      what: "the key forwarded",
    });
    expect(msg).toMatchObject({ apiVersion: def.apiVersion, kind: def.kind, name, reason: "watch" });
    expect(forwarder.stats().kinds.map((k) => `${k.kind}.${k.apiVersion}`)).toContain(
      `${def.kind}.${def.apiVersion}`,
    );
  }, 180_000);
});
