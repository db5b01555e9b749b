// `driftless explain`: a kind's reference page from the schemas, for hand-written kinds in either shape and
// for the generated AWS kinds, which have no checked-in page.
import { describe, expect, it } from "vitest";
import { explainKind } from "../../../functions/cli/commands/explain.ts";
import { UsageError } from "../../../shared/ops/errors.ts";

describe("driftless explain", () => {
  it("shows a hand-written kind's page with both shapes, whichever shape is named", async () => {
    const page = await explainKind("queue");
    expect(page).toMatch(
      /^# Queue — `sqs\.aws\.driftless\.dev\/v1alpha1`, `sqs\.aws\.m\.driftless\.dev\/v1alpha1`/,
    );
    expect(page).toContain("| `visibilityTimeoutSeconds` |");
    expect(page).not.toContain("do not edit");
    expect(await explainKind("queue.sqs.aws.m")).toBe(page);
  });

  it("shows a generated AWS kind by its alias or its CRD name", async () => {
    const page = await explainKind("dynamodb.table");
    expect(page).toMatch(/^# Table — `dynamodb\.awscc\.driftless\.dev\/v1alpha1`/);
    expect(page).toContain("## `spec.forProvider`");
    expect(page).toContain("**immutable**");
    expect(await explainKind("tables.dynamodb.awscc.driftless.dev")).toBe(page);
  });

  it("shows a generated Azure kind with the Azure role actions its reconciles call", async () => {
    const page = await explainKind("azure:storage.storageaccount");
    expect(page).toMatch(/^# StorageAccount — `storage\.azure\.gen\.driftless\.dev\/v1alpha1`/);
    expect(page).toContain("## Azure role actions");
    expect(page).toContain("- `Microsoft.Storage/storageAccounts/listKeys/action`");
    expect(await explainKind("storageaccounts.storage.azure.gen.driftless.dev")).toBe(page);
  });

  it("refuses a pattern and an unknown kind with a usage error that says what it takes", async () => {
    await expect(explainKind("dynamodb.*")).rejects.toBeInstanceOf(UsageError);
    await expect(explainKind("nothing.x")).rejects.toThrow(/generated AWS kind as <service>\.<kind>/);
  });
});
