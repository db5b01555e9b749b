// The generated AWS kinds in tests: generated once (skipped when current), specs by type name, an
// in-process Cloud Control fake with its controls, and a registry whose Cloud Control providers poll fast.
import {
  CloudControlClient,
  GetResourceRequestStatusCommand,
  type ProgressEvent,
} from "@aws-sdk/client-cloudcontrol";
import { generateAwscc } from "../../infra/gen-awscc.ts";
import { startCloudControlFake } from "../../infra/local/fakes/cloudcontrol-fake.ts";
import { loadAwsccCatalog, loadAwsccSpec } from "../../shared/api/awscc/catalog.ts";
import { awsccKindOf } from "../../shared/api/awscc/kind.ts";
import type { AwsccKindSpec } from "../../shared/api/awscc/spec.ts";
import { withNamespacedVariants } from "../../shared/api/external.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { awsccProviders } from "../../shared/providers/awscc/kinds.ts";
import { managedKinds } from "../../shared/providers/index.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { createAwsProviderConfig, ensureCrds } from "./aws.ts";
import { installCrds, removeCrds } from "./crd-holds.ts";
import { Reconciler } from "./routed.ts";

/** Generates the kinds if this checkout has not (or has stale ones); ~1 s, else nothing. */
export function ensureAwsccGenerated() {
  return generateAwscc();
}

export function awsccSpec(typeName: string): AwsccKindSpec {
  ensureAwsccGenerated();
  const entry = loadAwsccCatalog().kinds.find((k) => k.typeName === typeName);
  if (!entry) throw new Error(`no generated kind for ${typeName}`);
  return loadAwsccSpec(entry);
}

/** A Cloud Control fake of this test file's own (its controls affect no other file); `moto`: backed by moto. */
export async function startFake(opts: { moto?: string } = {}) {
  ensureAwsccGenerated();
  const fake = await startCloudControlFake({ port: 0, ...opts });
  const control = async (path: string, body: unknown = {}) => {
    const res = await fetch(`${fake.url}/__fake/${path}`, { method: "POST", body: JSON.stringify(body) });
    return res.json() as Promise<unknown>;
  };
  return {
    ...fake,
    control,
    resources: async (type: string) =>
      (await (await fetch(`${fake.url}/__fake/resources?type=${encodeURIComponent(type)}`)).json()) as Array<{
        identifier: string;
        model: Record<string, unknown>;
      }>,
    requests: async () =>
      (await (await fetch(`${fake.url}/__fake/requests`)).json()) as Record<string, number>,
    client: () =>
      new CloudControlClient({
        region: "us-east-1",
        endpoint: fake.url,
        credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
        maxAttempts: 1,
      }),
  };
}

/** Waits for a Cloud Control request of the test's own to end, as the SDK's user would; its last event. */
export async function requestDone(
  cc: CloudControlClient,
  ev: ProgressEvent | undefined,
): Promise<ProgressEvent> {
  while (ev?.OperationStatus === "IN_PROGRESS")
    ev = (await cc.send(new GetResourceRequestStatusCommand({ RequestToken: ev.RequestToken })))
      .ProgressEvent;
  return ev ?? {};
}

/** Every hand-written kind plus the given generated ones (both shapes), polling Cloud Control every 5 ms. */
export function awsccRegistry(specs: readonly AwsccKindSpec[]) {
  return new KindRegistry([
    ...managedKinds,
    ...withNamespacedVariants(awsccProviders(specs, { pollDelaysMs: [5, 5, 5, 5] })),
  ]);
}

/**
 * A test file's own Cloud Control fake, the given generated kinds' CRDs (held: see crd-holds.ts), a
 * ProviderConfig pointing at the fake and a reconciler; `close` lets go of the CRDs (the last holder
 * removes them, so the shared API server serves no more than before).
 */
export async function awsccTestbed(
  kube: Kube,
  pc: string,
  types: readonly string[],
  opts: { moto?: string } = {},
) {
  const fake = await startFake(opts);
  const specs = new Map(types.map((t) => [t, awsccSpec(t)] as const));
  const defs = new Map([...specs].map(([t, s]) => [t, awsccKindOf(s)] as const));
  await ensureCrds();
  await installCrds(kube, [...defs.values()]);
  await createAwsProviderConfig(kube, pc, { endpoint: fake.url });
  const reconciler = new Reconciler(kube, awsccRegistry([...specs.values()]), { creationGracePeriodMs: 0 });
  return {
    fake,
    specs,
    defs,
    reconciler,
    close: async () => {
      await removeCrds(kube, [...defs.values()]);
      await fake.close();
    },
  };
}
