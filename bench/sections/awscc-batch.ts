// 15. Batched drift checks of generated AWS kinds (issue 29 item 7), side by side in one run: N in-sync
// CloudWatch Logs log groups (AWS::Logs::LogGroup: its registry schema publishes a list handler that needs
// no ResourceModel) checked once by the engine's checkMany with the kind's batched read (ListResources
// pages) and once per resource (the same provider without observeMany: one GetResource each), against an
// in-process Cloud Control fake that counts every call it answers. The objects are read from the real API
// server once per path and the verdicts are the engine's own plan; wall time is the check alone.
import { CloudControlClient, CreateResourceCommand } from "@aws-sdk/client-cloudcontrol";
import { startCloudControlFake } from "../../infra/local/fakes/cloudcontrol-fake.ts";
import { awsccKindOf } from "../../shared/api/awscc/kind.ts";
import { managedCrd } from "../../shared/api/crd.ts";
import type { ManagedKindProvider } from "../../shared/api/external.ts";
import type { ManagedResource } from "../../shared/api/managed.ts";
import { Annotations } from "../../shared/api/meta.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { applyCrds } from "../../shared/kube/crds.ts";
import { cloudControlProvider } from "../../shared/providers/awscc/cloudcontrol.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { createAwsProviderConfig } from "../../test/support/aws.ts";
import { awsccSpec } from "../../test/support/awscc.ts";
import { inParallel } from "../../test/support/env.ts";
import { Reconciler } from "../../test/support/routed.ts";
import type { BenchContext } from "../lib/context.ts";
import { BENCH_LABEL, WRITE_CONCURRENCY } from "../lib/fixtures.ts";
import type { Row } from "../lib/report.ts";

const TYPE = "AWS::Logs::LogGroup";
const SECTION = "15 awscc batch";

export interface AwsccBatchPath {
  path: "per-resource" | "batched";
  resources: number;
  inSync: number;
  calls: Record<string, number>;
  wallMs: number;
}

export async function measureAwsccBatch(ctx: BenchContext, n = ctx.sizes.insync) {
  const spec = awsccSpec(TYPE);
  const def = awsccKindOf(spec);
  await applyCrds(ctx.kc, [managedCrd(def)]);
  const fake = await startCloudControlFake({ port: 0 });
  const control = (path: string, body: unknown = {}) =>
    fetch(`${fake.url}/__fake/${path}`, { method: "POST", body: JSON.stringify(body) });
  const requests = async () =>
    (await (await fetch(`${fake.url}/__fake/requests`)).json()) as Record<string, number>;
  await control("config", { pollsToComplete: 0 });
  const pc = `${ctx.run}-cc`;
  await createAwsProviderConfig(ctx.kube, pc, { endpoint: fake.url });
  const registry = (strip: boolean) => {
    const p = cloudControlProvider(spec, { pollDelaysMs: [5, 5, 5] });
    const provider: ManagedKindProvider = strip ? { ...p, observeMany: undefined } : p;
    return new KindRegistry([...managedKinds, provider]);
  };
  const names = Array.from({ length: n }, (_, i) => `${ctx.run}-lg${String(i).padStart(5, "0")}`);
  const selector = `${BENCH_LABEL}=${ctx.run}`;
  const cc = new CloudControlClient({
    region: "us-east-1",
    endpoint: fake.url,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing-secret-value" },
  });
  const results: AwsccBatchPath[] = [];
  try {
    // The log groups exist; their objects adopt them (Observe + create policies) and settle in sync.
    await inParallel(names, WRITE_CONCURRENCY, async (name) => {
      await cc.send(
        new CreateResourceCommand({
          TypeName: TYPE,
          DesiredState: JSON.stringify({ LogGroupName: name, RetentionInDays: 7 }),
        }),
      );
      await ctx.kube.create(def, {
        apiVersion: def.apiVersion,
        kind: def.kind,
        metadata: {
          name,
          labels: { [BENCH_LABEL]: ctx.run },
          annotations: { [Annotations.externalName]: name },
        },
        spec: { forProvider: { retentionInDays: 7 }, providerConfigRef: { name: pc } },
      });
    });
    const setup = new Reconciler(ctx.kube, registry(false), { rateLimit: false });
    for (let pass = 0; pass < 3; pass++)
      await inParallel(names, 16, (name) =>
        setup.reconcile({ apiVersion: def.apiVersion, kind: def.kind, name }),
      );
    ctx.log(`awscc batch: ${n} in-sync log groups adopted`);
    for (const path of ["per-resource", "batched"] as const) {
      const r = new Reconciler(ctx.kube, registry(path === "per-resource"), { rateLimit: false });
      const items = (await ctx.kube.list(def, { labelSelector: selector }))
        .items as unknown as ManagedResource[];
      // Warm (ProviderConfig, credentials, clients): not counted.
      await r.checkMany(items.slice(0, 1), { connectionSecret: () => undefined });
      const before = await requests();
      const t = performance.now();
      const verdicts = await r.checkMany(items, { connectionSecret: () => undefined });
      const wallMs = performance.now() - t;
      const after = await requests();
      const calls: Record<string, number> = {};
      for (const [op, c] of Object.entries(after))
        if (c - (before[op] ?? 0) > 0) calls[op] = c - (before[op] ?? 0);
      results.push({
        path,
        resources: items.length,
        inSync: verdicts.filter((v) => v.inSync).length,
        calls,
        wallMs,
      });
      ctx.log(
        `awscc batch: ${path}: ${items.length} checked, cloud ${JSON.stringify(calls)}, ${wallMs.toFixed(0)} ms`,
      );
    }
  } finally {
    await inParallel(names, WRITE_CONCURRENCY, async (name) => {
      await ctx.kube.patch(def, name, { metadata: { finalizers: null } }).catch(() => undefined);
      await ctx.kube.delete(def, name).catch(() => undefined);
    });
    await ctx.kube.delete(providerConfigs.aws.type, pc).catch(() => undefined);
    await fake.close();
  }
  return { rows: rowsOf(results), result: { type: TYPE, paths: results } };
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

function rowsOf(results: readonly AwsccBatchPath[]): Row[] {
  const per = results.find((r) => r.path === "per-resource");
  const batched = results.find((r) => r.path === "batched");
  if (!per || !batched) return [];
  const each = (r: AwsccBatchPath, x: number) => x / Math.max(1, r.resources);
  const label = `generated LogGroup ×${batched.resources.toLocaleString("en-US")}, per-resource → batched`;
  const ops = (r: AwsccBatchPath) =>
    Object.entries(r.calls)
      .map(([op, c]) => `${c} ${op}`)
      .join(", ");
  return [
    {
      section: SECTION,
      metric: `${label}: Cloud Control calls per in-sync resource`,
      value: `${each(per, sum(per.calls)).toFixed(3)} → ${each(batched, sum(batched.calls)).toFixed(3)} (${ops(per)} → ${ops(batched)})`,
      target: "≤ 0.05 batched",
      pass:
        each(batched, sum(batched.calls)) <= 0.05 &&
        batched.inSync === batched.resources &&
        per.inSync === per.resources,
      range: `in sync: ${per.inSync} → ${batched.inSync} of ${batched.resources}`,
    },
    {
      section: SECTION,
      metric: `${label}: check wall ms per resource (in-process fake, no latency)`,
      value: `${each(per, per.wallMs).toFixed(2)} → ${each(batched, batched.wallMs).toFixed(2)}`,
      target: "—",
      pass: undefined,
      range: "—",
    },
  ];
}
