// A fast in-sync set for the end-to-end run at 10k (issue 33): the real reconciler adopts a few objects,
// and the rest are written in the state it gave them (metadata, spec, status — the name-dependent parts
// substituted), two writes each instead of a reconcile pass or three. Nothing here decides "in sync":
// the product's own batched drift check does (`inSyncCheck`), and whatever it hands back is reconciled by
// the real reconciler before anything is measured — so the measured run starts from the state a real
// adoption leaves, and reports any object that was not (allSettled).
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../shared/api/cloud-events.ts";
import { Annotations, type Condition, type ResourceType } from "../../shared/api/meta.ts";
import type { Kube, KubeObject } from "../../shared/kube/client.ts";
import { inParallel } from "../../test/support/env.ts";
import { WRITE_CONCURRENCY } from "./fixtures.ts";

type Adopted = KubeObject & { spec?: unknown; status?: { conditions?: Condition[]; [k: string]: unknown } };

/** Substitutes every occurrence of `from` by `to` in a JSON value (names in URLs, ARNs, annotations). */
function substitute<T>(value: T, from: string, to: string): T {
  return JSON.parse(JSON.stringify(value).replaceAll(from, to)) as T;
}

/**
 * Writes `names` as copies of `template` (an object the real reconciler adopted, whose external name is its
 * name): create with the template's labels, annotations, finalizers and spec, then its status, each
 * condition's observedGeneration the new object's generation. Existing objects are left as they are.
 */
export async function cloneAdopted(
  kube: Kube,
  type: ResourceType & { group: string; kind: string },
  template: Adopted,
  names: readonly string[],
): Promise<void> {
  const from = template.metadata.name;
  await inParallel(names, WRITE_CONCURRENCY, async (name) => {
    const labels = {
      ...(template.metadata.labels ?? {}),
      [EXTERNAL_KEY_LABEL]: externalKeyOf(type, name),
    };
    const annotations = substitute(template.metadata.annotations ?? {}, from, name);
    if (annotations[Annotations.externalName] !== name)
      throw new Error(`cloneAdopted: the template's external name is not its name (${from})`);
    let created: KubeObject;
    try {
      created = await kube.create<KubeObject>(type, {
        apiVersion: template.apiVersion,
        kind: template.kind,
        metadata: {
          name,
          labels,
          annotations,
          ...(template.metadata.finalizers ? { finalizers: template.metadata.finalizers } : {}),
        },
        spec: substitute(template.spec, from, name),
      } as KubeObject);
    } catch (err) {
      if ((err as { status?: number }).status === 409) return;
      throw err;
    }
    const status = substitute(template.status ?? {}, from, name);
    status.conditions = (status.conditions ?? []).map((c) => ({
      ...c,
      observedGeneration: created.metadata.generation ?? 1,
    }));
    await kube.patchStatus(type, name, status);
  });
}
