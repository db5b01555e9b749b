// Shared by the cloud-event stack tests: what an event about an unmanaged resource costs once its kind's
// shapes are marked (shared/reconciler/shape-marks.ts) — one LIST per shape in use.
import { expect } from "vitest";
import { type ManagedKindDef, namespacedVariantOf } from "../../../shared/api/managed.ts";
import type { Kube, KubeObject } from "../../../shared/kube/client.ts";
import { SHAPE_MARKS, SHAPE_MARKS_REF, shapeKeyOf } from "../../../shared/reconciler/shape-marks.ts";

/**
 * LISTs an unmanaged resource's event costs now: the cluster-scoped shape (this file's managed resource is
 * there, so it is in use), and the namespaced (.m.) one when other tests on this stack made objects in it.
 * Call after one such event: a shape without a mark is checked and recorded once per cluster.
 */
export async function listsPerUnmanagedEvent(kube: Kube, def: ManagedKindDef): Promise<number> {
  const marks = await kube.get<KubeObject & { data?: Record<string, string> }>(
    SHAPE_MARKS,
    SHAPE_MARKS_REF.name,
    SHAPE_MARKS_REF.namespace,
  );
  expect(marks?.data?.[shapeKeyOf(def)]).toBe("in-use");
  const namespaced = marks?.data?.[shapeKeyOf(namespacedVariantOf(def))];
  expect(namespaced === "in-use" || namespaced === "unused").toBe(true);
  return namespaced === "in-use" ? 2 : 1;
}
