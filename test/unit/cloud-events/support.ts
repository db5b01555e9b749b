// Shared by the cloud-event unit tests: the documented samples (test/fixtures/cloud-events) as templates
// with a test's own names, and an in-memory API server holding managed resources with the index label.
import { EXTERNAL_KEY_LABEL, externalKeyOf } from "../../../shared/api/cloud-events.ts";
import type { ManagedKindProvider } from "../../../shared/api/external.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { awsKinds } from "../../../shared/providers/aws/kinds.ts";
import { azureKinds } from "../../../shared/providers/azure/kinds.ts";
import { gcpKinds } from "../../../shared/providers/gcp/kinds.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";

export { fixture, fixtureJson } from "../../support/cloud-events.ts";

export const allKinds: ManagedKindProvider[] = [...awsKinds, ...gcpKinds, ...azureKinds];

export const kindOf = (kind: string, group: string): ManagedKindProvider => {
  const k = allKinds.find((p) => p.definition.kind === kind && p.definition.group.startsWith(group));
  if (!k) throw new Error(`no kind ${group} ${kind}`);
  return k;
};

/** An API server with managed resources as the engine leaves them: external name and index label. */
export function clusterWith(
  objects: Array<{ kind: ManagedKindProvider; name: string; externalName: string; labelled?: boolean }>,
) {
  const api = new MemoryApiServer();
  for (const o of objects) {
    const def = o.kind.definition;
    api.seed(def, {
      apiVersion: def.apiVersion,
      kind: def.kind,
      metadata: {
        name: o.name,
        annotations: { [Annotations.externalName]: o.externalName },
        ...(o.labelled === false
          ? {}
          : { labels: { [EXTERNAL_KEY_LABEL]: externalKeyOf(def, o.externalName) } }),
      },
      spec: { forProvider: {} },
    });
  }
  return { api, kube: api.kube() };
}

/**
 * The rest of a resolver's API (the shapes' marks: reconciler/shape-marks.ts) for a stand-in that only
 * LISTs: a kind declared in one shape never reads them; one that did would fail loudly.
 */
export const marksUnreachable = {
  get: () => Promise.reject(new Error("the shapes' marks are not served here")),
  create: () => Promise.reject(new Error("the shapes' marks are not served here")),
  patch: () => Promise.reject(new Error("the shapes' marks are not served here")),
};
