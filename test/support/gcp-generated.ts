// The generated Google kinds in tests: a file's testbed, like azureGenTestbed for the Azure ones — the kinds
// generated once (skipped when current), their specs and defs by type, a generic Google fake of the file's
// own, their CRDs held on the shared API server, a ProviderConfig and a reconciler.
import { afterAll, beforeAll, expect } from "vitest";
import { generateGcp } from "../../infra/gen-gcp.ts";
import { type GoogleGenericFake, startGoogleGenericFake } from "../../infra/local/fakes/gcp-generic-fake.ts";
import { withNamespacedVariants } from "../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../shared/api/googleapis/catalog.ts";
import { googleKindOf } from "../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { googleProvider } from "../../shared/providers/gcp/generic/client.ts";
import { googleProviders } from "../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../shared/providers/gcp/home.ts";
import { withHome } from "../../shared/providers/home.ts";
import type { ReconcilerOptions } from "../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../shared/reconciler/registry.ts";
import { ensureCrds } from "./aws.ts";
import { installCrds, removeCrds } from "./crd-holds.ts";
import { createGcpProviderConfig } from "./gcp.ts";
import { generatedKinds } from "./generated-testbed.ts";
import { conditionOf, getMr, keyOf } from "./reconcile.ts";
import { Reconciler } from "./routed.ts";

/**
 * Serves generated Google kinds against a running generic fake: holds their CRDs (crd-holds.ts), creates the
 * ProviderConfig `pc` on the fake and returns a reconciler of `specs` (both shapes).
 */
export async function serveGoogleKinds(
  kube: Kube,
  o: {
    specs: readonly GoogleKindSpec[];
    defs: readonly ManagedKindDef[];
    pc: string;
    fakeUrl: string;
    /** Whose access the reconciler has (default: `kube`'s). */
    as?: Kube;
    /** Where the reconciler logs (a test that checks what reaches the logs captures them). */
    logger?: ReconcilerOptions["logger"];
    reconciler?: ReconcilerOptions;
  },
): Promise<Reconciler> {
  await ensureCrds();
  await installCrds(kube, [...o.defs]);
  await createGcpProviderConfig(kube, o.pc, {
    credentials: "InjectedIdentity",
    endpoint: { apis: `${o.fakeUrl}/{api}` },
  });
  const providers = googleProviders([...o.specs], { pollDelaysMs: [] }).map((p) => withHome(p, gcpHome));
  return new Reconciler(o.as ?? kube, new KindRegistry(withNamespacedVariants(providers)), {
    creationGracePeriodMs: 0,
    ...(o.logger ? { logger: o.logger } : {}),
    ...o.reconciler,
  });
}

/**
 * The generated kinds of these types (`iam.googleapis.com/ServiceAccount`), generated first if need be: the
 * type's one kind (`iam.googleapis.com/Key` is ServiceAccountKey), or where a type has several (Compute's
 * Address and GlobalAddress) the one named as the type's last segment.
 */
export function googleGenSpecs(types: readonly string[]): Map<string, GoogleKindSpec> {
  generateGcp();
  const catalog = loadGoogleCatalog();
  return new Map(
    types.map((t) => {
      const all = catalog.kinds.filter((k) => k.typeName === t);
      const entry = all.length === 1 ? all[0] : all.find((k) => k.kind === t.split("/")[1]);
      if (!entry)
        throw new Error(
          `no generated Google kind for ${t}${all.length > 1 ? ` (it has ${all.map((k) => k.kind).join(", ")}; none is named ${t.split("/")[1]})` : ""}`,
        );
      return [t, loadGoogleSpec(entry)] as const;
    }),
  );
}

/**
 * A test file's generated Google kinds: specs and defs at once; `start` (in beforeAll) brings up the file's
 * own generic Google fake, holds the kinds' CRDs (crd-holds.ts), creates the ProviderConfig `pc` on the fake
 * and a reconciler of the kinds it serves (all of them unless `serve` says; both shapes); `close` (in
 * afterAll) lets go of them.
 */
export function googleGenTestbed(kube: Kube, pc: string, types: readonly string[]) {
  const { started, ...kinds } = generatedKinds("googleGenTestbed", googleGenSpecs(types), googleKindOf);
  const { defs } = kinds;
  let fake: GoogleGenericFake | undefined;
  let reconciler: Reconciler | undefined;
  return {
    ...kinds,
    get fake() {
      return started("fake", fake);
    },
    get reconciler() {
      return started("reconciler", reconciler);
    },
    async start(
      fakeOpts: Parameters<typeof startGoogleGenericFake>[0] = {},
      o: {
        /** The types the reconciler serves (default: all); the others only have their CRDs. */
        serve?: readonly string[];
        /** Whose access the reconciler has (default: `kube`'s). */
        as?: Kube;
        reconciler?: ReconcilerOptions;
      } = {},
    ) {
      fake = await startGoogleGenericFake(fakeOpts);
      reconciler = await serveGoogleKinds(kube, {
        specs: (o.serve ?? types).map((t) => kinds.spec(t)),
        defs: [...defs.values()],
        pc,
        fakeUrl: fake.url,
        ...(o.as ? { as: o.as } : {}),
        ...(o.reconciler ? { reconciler: o.reconciler } : {}),
      });
    },
    async close() {
      await removeCrds(kube, [...defs.values()]);
      await fake?.close();
    },
  };
}

/** Requests of `fake` whose key matches `pattern` served since `before` (its stats() then), with their counts. */
export const requestsSince = (
  fake: { stats(): Record<string, number> },
  before: Record<string, number>,
  pattern: RegExp,
): [string, number][] =>
  Object.entries(fake.stats()).filter(([key, n]) => pattern.test(key) && n > (before[key] ?? 0));

/** One raw request to a Google fake (no client's validation in between), with Google's error body if any. */
export async function rawGoogleRequest(fakeUrl: string, method: string, path: string, body: unknown) {
  const res = await fetch(`${fakeUrl}/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { status?: string; message?: string } },
  };
}

/**
 * A generated Google kind's client against a fake, for a ProviderConfig of `project` (no cluster needed),
 * answering its home as the registry's does (providers/gcp/kinds.ts).
 */
export const connectGoogle = (spec: GoogleKindSpec, fakeUrl: string, project = "p") =>
  withHome(googleProvider(spec, { pollDelaysMs: [] }), gcpHome).connect({
    providerConfig: {
      apiVersion: "gcp.driftless.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "default", uid: "u" },
      spec: {
        projectID: project,
        credentials: { source: "InjectedIdentity" },
        endpoint: { apis: `${fakeUrl}/{api}` },
      },
    },
    readSecretKey: async () => "",
  } as never);

/**
 * A test file's own generic Google fake (the kinds generated first), started before its tests and closed
 * after them; `use` receives it.
 */
export function withGoogleFake(
  opts: Parameters<typeof startGoogleGenericFake>[0],
  use: (fake: GoogleGenericFake) => void,
): void {
  let fake: GoogleGenericFake | undefined;
  beforeAll(async () => {
    generateGcp();
    fake = await startGoogleGenericFake(opts);
    use(fake);
  }, 60_000);
  afterAll(() => fake?.close());
}

/**
 * A change of what only a create takes (an input beside the resource, an id, a field with no update): patched
 * into forProvider, it is Synced=False naming `field`, and no request that writes goes to Google.
 */
export async function refusedWithNothingSent(
  kube: Kube,
  at: { fake: GoogleGenericFake; reconciler: Reconciler },
  def: ManagedKindDef,
  name: string,
  forProvider: Record<string, unknown>,
  field: string,
): Promise<void> {
  const writes = at.fake.writeAgents.length;
  await kube.patch(def, name, { spec: { forProvider } });
  await at.reconciler.reconcile(keyOf(def, name));
  await at.reconciler.reconcile(keyOf(def, name));
  const changed = await getMr(kube, def, name);
  expect(conditionOf(changed, "Synced"), JSON.stringify(changed?.status)).toMatchObject({
    status: "False",
    message: expect.stringContaining(field),
  });
  expect(at.fake.writeAgents.length).toBe(writes);
}
