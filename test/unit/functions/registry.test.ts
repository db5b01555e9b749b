// A kind is its schema, its provider file and one line in its cloud's registry: everything else (the
// function kind lists, the forwarder's kinds, CRDs, RBAC, docs, the README table, serverless.yml's IAM)
// derives from the registries, and every generated file is checked in up to date.

import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { awsKinds as functionsAwsKinds } from "../../../functions/aws/kinds.ts";
import { gcpKinds as functionsGcpKinds } from "../../../functions/gcp/kinds.ts";
import { servedTypes } from "../../../functions/served-types.ts";
import {
  FORWARDER_KINDS,
  generatedFiles,
  iamSection,
  type KindRegistries,
  kindsTable,
  mergedStatements,
  README,
  SERVERLESS,
  staleGeneratedFiles,
} from "../../../infra/gen-kinds.ts";
import { rbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { managedCrd } from "../../../shared/api/crd.ts";
import { defineProvider } from "../../../shared/api/external.ts";
import { defineManagedKind } from "../../../shared/api/managed.ts";
import { kindPages, pageName } from "../../../shared/ops/kind-docs.ts";
import { awsKinds, awsProviderConfigKinds } from "../../../shared/providers/aws/kinds.ts";
import { azureKinds } from "../../../shared/providers/azure/kinds.ts";
import { gcpKinds } from "../../../shared/providers/gcp/kinds.ts";
import { managedKinds, providerConfigKinds } from "../../../shared/providers/index.ts";
import { typesOf } from "../../../shared/worker/worker.ts";

// Prepare: a new AWS kind, exactly as a contributor would write it — a schema and a provider.
const Widget = defineManagedKind({
  group: "widgets.aws",
  kind: "Widget",
  cloud: "aws",
  description: "A widget.",
  forProvider: z.object({ region: z.string(), size: z.number().int().optional() }),
  atProvider: z.object({ arn: z.string().optional() }),
  connectionKeys: ["widgetUrl"],
});
const widgetProvider = defineProvider({
  definition: Widget,
  iam: [
    {
      sid: "ManagedWidgets",
      actions: ["widgets:CreateWidget", "widgets:DeleteWidget"],
      resources: ["arn:{partition}:widgets:*:{account}:widget/{namePrefix}*"],
    },
  ],
  connect: async () => ({
    observe: async (mr) => ({ resourceExists: false, observed: { size: mr.spec.forProvider.size } }),
    create: async () => ({}),
    update: async () => ({}),
    delete: async () => {},
  }),
});
// …and its one registry line, in a copy of the registries.
const withWidget: KindRegistries = { kinds: [...managedKinds, widgetProvider], providerConfigKinds };

interface Statement {
  Sid?: string;
  Action: string | string[];
  Resource: unknown;
}
function reconcileStatements(serverlessYml: string): Statement[] {
  const doc = parse(serverlessYml, { logLevel: "silent" }) as {
    resources: {
      Resources: Record<
        string,
        { Properties: { Policies: Array<{ PolicyDocument: { Statement: unknown[] } }> } }
      >;
    };
  };
  return (doc.resources.Resources.ReconcileRole?.Properties.Policies ?? []).flatMap(
    (p) => p.PolicyDocument.Statement as Statement[],
  );
}

describe("the kind registries", () => {
  it("are the function kind lists: the functions import their cloud's registry, index.ts joins them", () => {
    expect(functionsAwsKinds).toBe(awsKinds);
    expect(functionsGcpKinds).toBe(gcpKinds);
    expect(managedKinds).toEqual([...awsKinds, ...azureKinds, ...gcpKinds]);
    for (const [cloud, kinds] of [
      ["aws", awsKinds],
      ["azure", azureKinds],
      ["gcp", gcpKinds],
    ] as const)
      for (const k of kinds) expect(k.definition.cloud, k.definition.kind).toBe(cloud);
  });

  it("type each provider's client by its kind's schema, with no cast at the registry", () => {
    const client = { create: async () => ({}), update: async () => ({}), delete: async () => {} };
    const mismatched = () =>
      defineProvider({
        definition: Widget,
        // @ts-expect-error Widget's forProvider has no colour: tsc refuses a client of another shape
        connect: async () => ({
          ...client,
          observe: async () => ({ resourceExists: true, observed: { colour: "red" } }),
        }),
      });
    expect(mismatched().definition).toBe(Widget);
  });

  it("give every AWS kind the IAM statements its calls need under InjectedIdentity", () => {
    for (const k of awsKinds) expect(k.iam?.length, k.definition.kind).toBeGreaterThan(0);
  });

  it("have every generated file up to date (run npm run gen:kinds)", () => {
    expect(staleGeneratedFiles()).toEqual([]);
  });
});

describe("a new kind is its schema, its provider and one registry line", () => {
  const files = generatedFiles(withWidget);

  it("is watched by the forwarder and served by its cloud's functions", () => {
    const source = files.get(FORWARDER_KINDS) ?? "";
    expect(source).toContain('group: "widgets.aws.driftless.dev"');
    expect(source).toContain('kind: "Widget"');
    expect(source).toMatch(/kind: "Widget",\n\s+plural: "widgets",\n\s+namespaced: false,\n\s+cloud: "aws"/);
    expect(typesOf([...awsKinds, widgetProvider], awsProviderConfigKinds)).toContainEqual(
      expect.objectContaining({ kind: "Widget", group: "widgets.aws.driftless.dev" }),
    );
  });

  it("gets a row in the README's kinds table", () => {
    expect(kindsTable(withWidget)).toContain(
      "| AWS | `Widget` | `widgets.aws.driftless.dev/v1alpha1`<br>namespaced: `widgets.aws.m.driftless.dev/v1alpha1` | `widgetUrl` |",
    );
    expect(files.get(README)).toContain("| AWS | `Widget` |");
  });

  it("gets its IAM statement in serverless.yml's reconcile role, scoped by the stage's name prefix", () => {
    const widgets = reconcileStatements(files.get(SERVERLESS) ?? "").find((s) => s.Sid === "ManagedWidgets");
    expect(widgets?.Action).toEqual(["widgets:CreateWidget", "widgets:DeleteWidget"]);
    expect(widgets?.Resource).toEqual([
      {
        "Fn::Join": [
          "",
          [
            "arn:",
            { Ref: "AWS::Partition" },
            ":widgets:*:",
            { Ref: "AWS::AccountId" },
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a Serverless variable
            ":widget/${self:custom.stage.managedNamePrefix}*",
          ],
        ],
      },
    ]);
    // The statements already there are unchanged.
    expect(iamSection(withWidget)).toContain(iamSection());
  });

  it("gets a CRD, RBAC and a docs page", () => {
    expect(managedCrd(Widget).metadata.name).toBe("widgets.widgets.aws.driftless.dev");
    const defs = withWidget.kinds.map((k) => k.definition);
    const rbac = JSON.stringify(
      rbacObjects(
        defs,
        providerConfigKinds.map((k) => k.type),
      ),
    );
    expect(rbac).toContain("widgets.aws.driftless.dev");
    const pages = kindPages(defs, []);
    expect(pages.get(pageName(Widget))).toContain("# Widget");
    expect(pages.get("README.md")).toContain(`(${pageName(Widget)})`);
  });
});

describe("IAM statements merged by sid", () => {
  it("union actions, resources and condition values, and refuse different conditions", () => {
    const kind = (iam: KindRegistries["kinds"][number]["iam"]) => ({ ...widgetProvider, iam });
    const merged = mergedStatements({
      providerConfigKinds: [],
      kinds: [
        kind([
          { sid: "S", actions: ["a:One"], resources: ["r1"], condition: { StringEquals: { k: ["x"] } } },
        ]),
        kind([
          { sid: "S", actions: ["a:Two"], resources: ["r2"], condition: { StringEquals: { k: ["y"] } } },
        ]),
      ],
    });
    expect(merged).toEqual([
      {
        sid: "S",
        actions: ["a:One", "a:Two"],
        resources: ["r1", "r2"],
        condition: { StringEquals: { k: ["x", "y"] } },
      },
    ]);
    expect(() =>
      mergedStatements({
        providerConfigKinds: [],
        kinds: [
          kind([{ sid: "S", actions: ["a:One"], resources: ["r"], condition: { Null: { k: "false" } } }]),
          kind([{ sid: "S", actions: ["a:Two"], resources: ["r"] }]),
        ],
      }),
    ).toThrow(/different condition operators/);
  });

  it("forward the same kinds the registries list", () => {
    expect(servedTypes(["aws", "gcp", "azure"]).map((t) => `${t.kind}.${t.group}`)).toEqual(
      expect.arrayContaining(managedKinds.map((k) => `${k.definition.kind}.${k.definition.group}`)),
    );
  });
});
