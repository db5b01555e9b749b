import type { V1OwnerReference, V1Secret } from "@kubernetes/client-node";

/** The type of every connection Secret driftless writes: managed resources' and claims' copies. */
const CONNECTION_SECRET_TYPE = "connection.driftless.dev/v1alpha1";

export interface ConnectionSecretWrite {
  name: string;
  namespace: string;
  /** The Secret as it is, if it exists: its keys, labels and resourceVersion (a guarded replace) are kept. */
  current: V1Secret | undefined;
  /** Keys to set, base64-encoded. Keys are added, never removed. */
  data: Readonly<Record<string, string>>;
  /** Labels besides `app.kubernetes.io/managed-by: driftless`. */
  labels?: Record<string, string>;
  annotations?: Record<string, string> | undefined;
  ownerReferences: V1OwnerReference[];
}

/** The Secret to create or replace: `data` laid over the current keys; undefined when that changes nothing. */
export function connectionSecret(w: ConnectionSecretWrite): V1Secret | undefined {
  const data = { ...(w.current?.data ?? {}) };
  let changed = !w.current;
  for (const [k, v] of Object.entries(w.data)) {
    if (data[k] !== v) {
      data[k] = v;
      changed = true;
    }
  }
  if (!changed) return undefined;
  const meta = w.current?.metadata;
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: CONNECTION_SECRET_TYPE,
    metadata: {
      name: w.name,
      namespace: w.namespace,
      ...(meta?.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      labels: { ...(meta?.labels ?? {}), "app.kubernetes.io/managed-by": "driftless", ...w.labels },
      ...(w.annotations ? { annotations: w.annotations } : {}),
      ownerReferences: w.ownerReferences,
    },
    data,
  };
}
