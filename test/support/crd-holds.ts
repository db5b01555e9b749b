// Generated kinds' CRDs on the shared API server, held by the test files that use them: files running at
// once in other processes may use the same kind (AWS::Logs::LogGroup is in five), so a CRD is installed by
// whoever needs it and removed (objects first) only by the last live holder. Holds and the lock that guards
// them live in one Lease (coordination.k8s.io) of the API server; a holder is a test process of this
// machine, and one no longer running holds nothing (a run stopped half-way leaves no CRD forever).

import { managedCrd } from "../../shared/api/crd.ts";
import type { ManagedKindDef } from "../../shared/api/managed.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import { isConflict, type Kube, type KubeObject } from "../../shared/kube/client.ts";
import { applyCrds } from "../../shared/kube/crds.ts";
import { CRD_TYPE } from "../../shared/ops/activation.ts";
import { LEASE, type LeaseObject, writeLease } from "../../shared/pipeline/sweep-lease.ts";
import { kubeConfig } from "./env.ts";

/** The lock and the holds: one Lease, read and written like the sweeps' (shared/pipeline/sweep-lease.ts). */
const REF = { namespace: "default", name: "driftless-test-crd-holds" };
const HOLDS = "test.driftless.dev/holds";
/** This test file's process (vitest runs each file in a process of its own); the token tells reruns apart. */
const ME = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

type Holds = Record<string, string[]>;

const alive = (holder: string) => {
  try {
    process.kill(Number(holder.split("-")[0]), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};
const crdNameOf = (d: ResourceType) => `${d.plural}.${d.group}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work` with the lock held and the live holds in hand; what it returns is written back. */
async function underLock<T>(kube: Kube, work: (holds: Holds) => Promise<T>): Promise<T> {
  let lease: LeaseObject;
  for (;;) {
    const current = await kube.get<LeaseObject>(LEASE, REF.name, REF.namespace);
    const holder = current?.spec?.holderIdentity;
    if (!holder || !alive(holder)) {
      try {
        lease = await writeLease(kube, REF, current?.metadata, { spec: { holderIdentity: ME } });
        break;
      } catch (err) {
        // Another file took the lock (or created the Lease) since the read.
        if (!isConflict(err)) throw err;
      }
    }
    await sleep(50);
  }
  const stored = JSON.parse(lease.metadata.annotations?.[HOLDS] ?? "{}") as Holds;
  const holds = Object.fromEntries(
    Object.entries(stored)
      .map(([crd, hs]) => [crd, hs.filter(alive)] as const)
      .filter(([, hs]) => hs.length > 0),
  );
  try {
    return await work(holds);
  } finally {
    // Guarded by the lock's own write: while this process holds it, no other writes the Lease.
    await writeLease(kube, REF, lease.metadata, {
      annotations: { [HOLDS]: JSON.stringify(holds) },
      spec: { holderIdentity: null },
    });
  }
}

/** Deletes the kinds' objects (finalizers dropped: their cloud side is a fake's), then their CRDs, until gone. */
async function deleteCrds(kube: Kube, defs: readonly ResourceType[]) {
  for (const d of defs) {
    const page = await kube.list(d).catch(() => ({ items: [] as KubeObject[] }));
    for (const o of page.items) {
      const ns = o.metadata.namespace;
      await kube
        .patch(d, o.metadata.name, { metadata: { finalizers: [] } }, { namespace: ns })
        .catch(() => undefined);
      await kube.delete(d, o.metadata.name, ns).catch(() => undefined);
    }
    await kube.delete(CRD_TYPE, crdNameOf(d)).catch(() => undefined);
  }
  const deadline = Date.now() + 60_000;
  for (const d of defs) {
    while ((await kube.get(CRD_TYPE, crdNameOf(d))) && Date.now() < deadline) await sleep(100);
  }
}

/**
 * Installs the kinds' CRDs and holds them for this test file. One that no live process holds is removed
 * first (objects and all: a run stopped half-way may have left it, with another schema or objects).
 */
export async function installCrds(kube: Kube, defs: readonly ManagedKindDef[]) {
  await underLock(kube, async (holds) => {
    await deleteCrds(
      kube,
      defs.filter((d) => !holds[crdNameOf(d)]),
    );
    // Established within two minutes even on a loaded machine.
    await applyCrds(
      kubeConfig(),
      defs.map((d) => managedCrd(d)),
      120_000,
    );
    for (const d of defs) holds[crdNameOf(d)] = [...new Set([...(holds[crdNameOf(d)] ?? []), ME])];
  });
}

/**
 * Lets go of this file's hold on the kinds' CRDs; those no other live process holds are removed (their
 * objects first), so the shared API server serves no more than before. Also what a file calls first to
 * start from no CRD at all where no other file uses the kind.
 */
export async function removeCrds(kube: Kube, defs: readonly ResourceType[]) {
  await underLock(kube, async (holds) => {
    for (const d of defs) {
      const others = (holds[crdNameOf(d)] ?? []).filter((h) => h !== ME);
      if (others.length > 0) holds[crdNameOf(d)] = others;
      else delete holds[crdNameOf(d)];
    }
    await deleteCrds(
      kube,
      defs.filter((d) => !holds[crdNameOf(d)]),
    );
  });
}
