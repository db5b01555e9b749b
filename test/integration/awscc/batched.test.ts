// Batched drift checks of generated AWS kinds (issue 29 item 7) on the real API server and the Cloud
// Control fake: a type whose registry schema publishes a list handler that needs no ResourceModel is
// checked with ListResources pages (the verdict is the engine's own plan, through checkMany); a resource
// the list does not show whole is read with GetResource, and a type whose list leaves out what the plan
// compares is read per resource from then on; a child type is listed once per parent its objects name.
import {
  CreateResourceCommand,
  DeleteResourceCommand,
  UpdateResourceCommand,
} from "@aws-sdk/client-cloudcontrol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AwsccKindSpec } from "../../../shared/api/awscc/spec.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { batchedReadOf, cloudControlProvider } from "../../../shared/providers/awscc/cloudcontrol.ts";
import { awsccSpec, awsccTestbed, requestDone } from "../../support/awscc.ts";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const LOGS = "AWS::Logs::LogGroup";
const TOPIC = "AWS::SNS::Topic";
/** Child types: their list handler needs the parent RestApi's id in the ResourceModel. */
const RESOURCE = "AWS::ApiGateway::Resource";
const VALIDATOR = "AWS::ApiGateway::RequestValidator";
const REST_API = "AWS::ApiGateway::RestApi";
/** In-sync resources checked at once, and resources of the type that are not ours (they come first). */
const N = 40;
const OTHERS = 110;
/** Creating 150 resources and 40 objects is minutes on a loaded machine. */
const SLOW = 600_000;

const kube = newKube();
const PC = uniqueName("pc-awscc-batch");
let bed: Awaited<ReturnType<typeof awsccTestbed>>;

beforeAll(async () => {
  bed = await awsccTestbed(kube, PC, [LOGS, TOPIC, RESOURCE, VALIDATOR]);
}, 120_000);

afterAll(async () => {
  await bed?.close();
});

const defOf = (t: string) => bed.defs.get(t) as ManagedKindDef;
const specOf = (t: string) => bed.specs.get(t) as AwsccKindSpec;

async function made(t: string, prefix: string, n: number, forProvider: Json): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, "0")}`);
  for (const name of names)
    await kube.create(defOf(t), managedObject(defOf(t), name, PC, { forProvider, connectionSecret: false }));
  for (const name of names) await settle(bed.reconciler, keyOf(defOf(t), name));
  return names;
}

const check = async (t: string, names: string[]) =>
  bed.reconciler.checkMany(
    (await Promise.all(names.map((n) => getMr(kube, defOf(t), n)))) as ManagedResource[],
    { connectionSecret: () => undefined },
  );

/** Cloud Control calls the fake answered while `f` ran, by operation. */
async function counted<T>(f: () => Promise<T>): Promise<{ out: T; calls: Record<string, number> }> {
  const before = await bed.fake.requests();
  const out = await f();
  const after = await bed.fake.requests();
  const calls: Record<string, number> = {};
  for (const [op, c] of Object.entries(after))
    if (c - (before[op] ?? 0) > 0) calls[op] = c - (before[op] ?? 0);
  return { out, calls };
}

async function finish(ev: Parameters<typeof requestDone>[1]) {
  expect((await requestDone(bed.fake.client(), ev)).OperationStatus).toBe("SUCCESS");
}

describe("batched drift checks of generated kinds through ListResources", () => {
  it("says per type how a batched check reads it, from the spec data", () => {
    expect(batchedReadOf(specOf(LOGS))).toBe("ListResources");
    const child = awsccSpec(RESOURCE);
    expect(child.listNeeds).toEqual(["restApiId"]);
    expect(batchedReadOf(child)).toBe("ListResources");
    expect(cloudControlProvider(child).observeMany?.calls).toMatch(/^ListResources per restApiId/);
    // A list handler that needs what no spec field sets (a read-only ARN) stays one GetResource each.
    const unsettable = awsccSpec("AWS::APS::RuleGroupsNamespace");
    expect(batchedReadOf(unsettable)).toMatch(/needs a ResourceModel with arn, which no spec field/);
    expect(cloudControlProvider(unsettable).observeMany).toBeUndefined();
    expect(cloudControlProvider(specOf(LOGS)).observeMany?.maxItems).toBeGreaterThanOrEqual(N);
  });

  it(
    `checks ${N} in-sync log groups with 2 ListResources pages among ${OTHERS} others, and sends drifted or gone ones to a full reconcile`,
    async () => {
      // Log groups of someone else's, listed before ours (identifiers sort first): paging is needed.
      const cc = bed.fake.client();
      for (let i = 0; i < OTHERS; i++) {
        const out = await cc.send(
          new CreateResourceCommand({
            TypeName: LOGS,
            DesiredState: JSON.stringify({ LogGroupName: `a-other-${uniqueName("lg")}` }),
          }),
        );
        await finish(out.ProgressEvent);
      }
      const names = await made(LOGS, uniqueName("lg"), N, { retentionInDays: 7 });

      const first = await counted(() => check(LOGS, names));
      expect(first.out.map((v) => v.inSync)).toEqual(names.map(() => true));
      expect(first.calls).toEqual({ ListResources: 2 });
      expect((first.calls.ListResources ?? 0) / N).toBeLessThanOrEqual(0.05);

      // Drift made in the cloud, and one deleted there: each is told by the plan, the gone one from a GET.
      const changed = names[3] as string;
      const gone = names[7] as string;
      await finish(
        (
          await cc.send(
            new UpdateResourceCommand({
              TypeName: LOGS,
              Identifier: changed,
              PatchDocument: JSON.stringify([{ op: "replace", path: "/RetentionInDays", value: 14 }]),
            }),
          )
        ).ProgressEvent,
      );
      await finish(
        (await cc.send(new DeleteResourceCommand({ TypeName: LOGS, Identifier: gone }))).ProgressEvent,
      );
      const second = await counted(() => check(LOGS, names));
      expect(second.out.map((v) => v.inSync)).toEqual(names.map((n) => n !== changed && n !== gone));
      // The one the list does not show is observed alone, as a per-resource check would: GetResource, its
      // create request's status (it may have been still running), GetResource again.
      expect(second.calls).toEqual({ ListResources: 2, GetResource: 2, GetResourceRequestStatus: 1 });
      // The drifted one is put back by its own reconcile, and is in sync in the next batch.
      await settle(bed.reconciler, keyOf(defOf(LOGS), changed));
      const third = await counted(() =>
        check(
          LOGS,
          names.filter((n) => n !== gone),
        ),
      );
      expect(third.out.every((v) => v.inSync)).toBe(true);
      expect(third.calls).toEqual({ ListResources: 2 });
    },
    SLOW,
  );

  it(
    "reads a type per resource once its list was seen to leave out what the plan compares",
    async () => {
      // This type's list handler (as configured in the fake) returns only the primary identifier.
      await bed.fake.control("config", { listIdentifiersOnly: [TOPIC] });
      expect(batchedReadOf(specOf(TOPIC))).toBe("ListResources");
      const names = await made(TOPIC, uniqueName("topic"), 5, { displayName: "one" });
      for (const n of names)
        expect(
          (await getMr(kube, defOf(TOPIC), n))?.metadata.annotations?.[Annotations.externalName],
        ).toMatch(/^arn:/);

      const first = await counted(() => check(TOPIC, names));
      expect(first.out.every((v) => v.inSync)).toBe(true);
      expect(first.calls).toEqual({ ListResources: 1, GetResource: 5 });
      expect(batchedReadOf(specOf(TOPIC))).toMatch(/ListResources left out .*displayName/);

      const second = await counted(() => check(TOPIC, names));
      expect(second.out.every((v) => v.inSync)).toBe(true);
      expect(second.calls).toEqual({ GetResource: 5 });
    },
    SLOW,
  );
});

describe("batched drift checks of child types, listed per parent", () => {
  const cc = () => bed.fake.client();
  async function restApi(): Promise<string> {
    const out = await cc().send(
      new CreateResourceCommand({
        TypeName: REST_API,
        DesiredState: JSON.stringify({ Name: uniqueName("api") }),
      }),
    );
    return (await requestDone(cc(), out.ProgressEvent)).Identifier as string;
  }

  it(
    "checks the Resources of two RestApis with one ListResources each, and sends a deleted one to a full reconcile",
    async () => {
      const [a, b] = [await restApi(), await restApi()];
      // Another RestApi's resources, not ours: never listed.
      const other = await restApi();
      for (const part of ["x", "y", "z"])
        await finish(
          (
            await cc().send(
              new CreateResourceCommand({
                TypeName: RESOURCE,
                DesiredState: JSON.stringify({ RestApiId: other, ParentId: "root", PathPart: part }),
              }),
            )
          ).ProgressEvent,
        );
      const prefix = uniqueName("res");
      const underA = await made(RESOURCE, `${prefix}-a`, 12, {
        restApiId: a,
        parentId: "root",
        pathPart: "p",
      });
      const underB = await made(RESOURCE, `${prefix}-b`, 3, {
        restApiId: b,
        parentId: "root",
        pathPart: "q",
      });

      const one = await counted(() => check(RESOURCE, underA));
      expect(one.out.map((v) => v.inSync)).toEqual(underA.map(() => true));
      expect(one.calls).toEqual({ ListResources: 1 });

      const names = [...underA, ...underB];
      const both = await counted(() => check(RESOURCE, names));
      expect(both.out.map((v) => v.inSync)).toEqual(names.map(() => true));
      expect(both.calls).toEqual({ ListResources: 2 });

      // Deleted in the cloud: its parent's list does not show it, so it is read alone and found gone.
      const gone = underA[5] as string;
      const id = (await getMr(kube, defOf(RESOURCE), gone))?.metadata.annotations?.[Annotations.externalName];
      expect(id).toMatch(new RegExp(`^${a}\\|`));
      await finish(
        (await cc().send(new DeleteResourceCommand({ TypeName: RESOURCE, Identifier: id }))).ProgressEvent,
      );
      const after = await counted(() => check(RESOURCE, names));
      expect(after.out.map((v) => v.inSync)).toEqual(names.map((n) => n !== gone));
      expect(after.calls).toEqual({ ListResources: 2, GetResource: 2, GetResourceRequestStatus: 1 });
      await settle(bed.reconciler, keyOf(defOf(RESOURCE), gone));
    },
    SLOW,
  );

  it(
    "finds drift made in the cloud from the parent's list",
    async () => {
      const api = await restApi();
      const names = await made(VALIDATOR, uniqueName("val"), 5, {
        restApiId: api,
        validateRequestBody: true,
        validateRequestParameters: false,
      });
      const first = await counted(() => check(VALIDATOR, names));
      expect(first.out.every((v) => v.inSync)).toBe(true);
      expect(first.calls).toEqual({ ListResources: 1 });

      const changed = names[2] as string;
      const id = (await getMr(kube, defOf(VALIDATOR), changed))?.metadata.annotations?.[
        Annotations.externalName
      ];
      await finish(
        (
          await cc().send(
            new UpdateResourceCommand({
              TypeName: VALIDATOR,
              Identifier: id,
              PatchDocument: JSON.stringify([{ op: "replace", path: "/ValidateRequestBody", value: false }]),
            }),
          )
        ).ProgressEvent,
      );
      const second = await counted(() => check(VALIDATOR, names));
      expect(second.out.map((v) => v.inSync)).toEqual(names.map((n) => n !== changed));
      // The list showed the drift whole: no GetResource needed to see it.
      expect(second.calls).toEqual({ ListResources: 1 });
      await settle(bed.reconciler, keyOf(defOf(VALIDATOR), changed));
      const third = await counted(() => check(VALIDATOR, names));
      expect(third.out.every((v) => v.inSync)).toBe(true);
      expect(third.calls).toEqual({ ListResources: 1 });
      expect(batchedReadOf(specOf(VALIDATOR))).toBe("ListResources");
    },
    SLOW,
  );
});
