// spec.initProvider (fields set on create only) goes through the same field mapping as forProvider: carried
// where the target kind has the field, named in the report under initProvider where it has not.
import { describe, expect, it } from "vitest";
import { migrate } from "../../../shared/ops/migrate.ts";
import { type Doc, find, issuesOf, upjet } from "./migrate-helpers.ts";

const withInit = (doc: Doc, initProvider: Record<string, unknown>): Doc => ({
  ...doc,
  spec: { ...(doc.spec as object), initProvider },
});

describe("migrate: spec.initProvider", () => {
  it("maps initProvider as forProvider is mapped, and reports what has no equivalent under initProvider", () => {
    const queue = upjet("sqs.aws.upbound.io/v1beta1", "Queue", "orders", { region: "eu-west-1" }, "orders");
    const r = migrate([withInit(queue, { visibilityTimeoutSeconds: 45, kmsDataKeyReusePeriodSeconds: 300 })]);
    expect(find(r, "Queue", "orders")?.spec).toMatchObject({
      forProvider: { region: "eu-west-1" },
      initProvider: { visibilityTimeoutSeconds: 45 },
    });
    expect(r.issues.filter((i) => i.severity === "dropped")).toEqual([
      {
        severity: "dropped",
        source: "Queue.sqs.aws.upbound.io/orders",
        field: "initProvider.kmsDataKeyReusePeriodSeconds",
        message: expect.stringMatching(/^initProvider\.kmsDataKeyReusePeriodSeconds left out: /),
      },
    ]);
    expect(issuesOf(r, "dropped").join("\n")).not.toMatch(/no create-only fields/);
  });

  it("uses the kind's rules: an ARM id becomes account name and resource group; invalid values are reported", () => {
    const container = upjet("storage.azure.upbound.io/v1beta1", "Container", "logs", {}, "logs");
    const r = migrate([
      withInit(container, {
        storageAccountId:
          "/subscriptions/0000/resourceGroups/data-rg/providers/Microsoft.Storage/storageAccounts/datalake01",
        containerAccessType: "private",
      }),
    ]);
    expect(find(r, "Container", "logs")?.spec.initProvider).toEqual({
      storageAccountName: "datalake01",
      resourceGroupName: "data-rg",
      publicAccess: "None",
    });
    expect(issuesOf(r, "dropped")).toEqual([]);
  });

  it("keeps initProvider in the namespaced shape, Secret references local to the namespace", () => {
    const queue = {
      ...upjet("sqs.aws.m.upbound.io/v1beta1", "Queue", "orders", { region: "eu-west-1" }, "orders"),
    };
    queue.metadata.namespace = "team-a";
    const r = migrate([withInit(queue, { delaySeconds: 5 })]);
    const q = find(r, "Queue", "orders");
    expect(q?.apiVersion).toBe("sqs.aws.m.driftless.dev/v1alpha1");
    expect(q?.spec.initProvider).toEqual({ delaySeconds: 5 });
  });

  it("carries a driftless object's initProvider into the namespaced shape", () => {
    const r = migrate(
      [
        {
          apiVersion: "sqs.aws.driftless.dev/v1alpha1",
          kind: "Queue",
          metadata: { name: "orders", annotations: { "crossplane.io/external-name": "orders" } },
          spec: { forProvider: { region: "eu-west-1" }, initProvider: { delaySeconds: 5 } },
        },
      ],
      { namespaced: { namespace: "team-a", providerConfigKind: "ClusterProviderConfig" } },
    );
    expect(find(r, "Queue", "orders")?.spec.initProvider).toEqual({ delaySeconds: 5 });
  });

  it("reports a folded companion's initProvider instead of dropping it silently", () => {
    const queue = upjet(
      "sqs.aws.upbound.io/v1beta1",
      "Queue",
      "dlq-user",
      { region: "eu-west-1" },
      "dlq-user",
    );
    const policy = withInit(
      upjet("sqs.aws.upbound.io/v1beta1", "QueueRedrivePolicy", "p", {
        queueUrlRef: { name: "dlq-user" },
        redrivePolicy: JSON.stringify({
          deadLetterTargetArn: "arn:aws:sqs:eu-west-1:1:dlq",
          maxReceiveCount: 3,
        }),
      }),
      { redrivePolicy: "{}" },
    );
    const r = migrate([queue, policy]);
    expect(r.issues).toContainEqual(
      expect.objectContaining({
        severity: "dropped",
        field: "initProvider",
        source: "QueueRedrivePolicy.sqs.aws.upbound.io/p",
      }),
    );
  });
});
