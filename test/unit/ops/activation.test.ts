// Activation: which managed kinds' CRDs are installed, and deactivation that never removes a CRD whose
// objects still exist (an in-memory API server; the real one is shared by the integration suites).
import { describe, expect, it } from "vitest";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import { globMatcher } from "../../../shared/api/glob.ts";
import { allCrds } from "../../../shared/crds.ts";
import {
  CRD_TYPE,
  type CrdLike,
  planActivation,
  pruneInactive,
  typeOfCrd,
} from "../../../shared/ops/activation.ts";
import { managedKinds } from "../../../shared/providers/index.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";

const crds = allCrds() as unknown as CrdLike[];
const managed = new Set(managedKinds.map((k) => `${k.definition.plural}.${k.definition.group}`));
const isManaged = (c: CrdLike) => managed.has(c.metadata.name);
const names = (list: CrdLike[]) => list.map((c) => c.metadata.name).sort();

describe("activation", () => {
  it("globs: * matches any run of characters, dots included; case-insensitive; nothing else is special", () => {
    expect(globMatcher("*.aws.driftless.dev")("queues.sqs.aws.driftless.dev")).toBe(true);
    expect(globMatcher("queues.sqs.*")("queues.sqs.aws.driftless.dev")).toBe(true);
    expect(globMatcher("queues.sqs.*")("topics.pubsub.gcp.driftless.dev")).toBe(false);
    expect(globMatcher("QUEUES.sqs.aws.driftless.dev")("queues.sqs.aws.driftless.dev")).toBe(true);
    expect(globMatcher("queues")("queues.sqs.aws.driftless.dev")).toBe(false);
    expect(() => globMatcher("queues.sqs.(aws)")).toThrow(/may only hold/);
  });

  it("no list installs everything, as before", () => {
    const plan = planActivation(crds, undefined, isManaged);
    expect(plan.install).toHaveLength(crds.length);
    expect(plan.inactive).toEqual([]);
  });

  it("a list installs the matching managed kinds and every CRD that is not a managed kind", () => {
    const plan = planActivation(
      crds,
      ["*.gcp.driftless.dev", "queues.sqs.aws.driftless.dev", "nosuch.*"],
      isManaged,
    );
    const installedManaged = names(plan.install.filter(isManaged));
    expect(installedManaged).toEqual(
      [...managed]
        .filter((n) => n.endsWith(".gcp.driftless.dev") || n === "queues.sqs.aws.driftless.dev")
        .sort(),
    );
    // ProviderConfigs, claims, classes and export templates: always.
    expect(names(plan.install.filter((c) => !isManaged(c)))).toEqual(
      names(crds.filter((c) => !isManaged(c))),
    );
    expect(names(plan.inactive)).toContain("vpcs.ec2.aws.driftless.dev");
    expect(plan.install.length + plan.inactive.length).toBe(crds.length);
    expect(plan.unmatched).toEqual(["nosuch.*"]);
  });

  it("deactivating deletes an inactive kind's CRD only when no object of it exists", async () => {
    const api = new MemoryApiServer();
    const kube = api.kube();
    const queueCrd = crds.find((c) => c.metadata.name === "queues.sqs.aws.driftless.dev") as CrdLike;
    const vpcCrd = crds.find((c) => c.metadata.name === "vpcs.ec2.aws.driftless.dev") as CrdLike;
    const subnetCrd = crds.find((c) => c.metadata.name === "subnets.ec2.aws.driftless.dev") as CrdLike;
    for (const c of [queueCrd, vpcCrd]) api.seed(CRD_TYPE, structuredClone(c) as never);
    expect(typeOfCrd(queueCrd)).toMatchObject({
      group: Queue.group,
      plural: Queue.plural,
      namespaced: false,
    });
    api.seed(typeOfCrd(queueCrd), { metadata: { name: "orders" }, spec: {} } as never);

    const result = await pruneInactive(kube, [queueCrd, vpcCrd, subnetCrd]);

    expect(result).toEqual([
      { name: "queues.sqs.aws.driftless.dev", result: "kept", objects: 1 },
      { name: "vpcs.ec2.aws.driftless.dev", result: "deleted" },
      { name: "subnets.ec2.aws.driftless.dev", result: "absent" },
    ]);
    expect(await kube.get(CRD_TYPE, "queues.sqs.aws.driftless.dev")).toBeDefined();
    expect(await kube.get(CRD_TYPE, "vpcs.ec2.aws.driftless.dev")).toBeUndefined();
  });
});
