// How app-cluster objects are named on the control plane. One namespace per app cluster, so the agent's
// credentials can be confined to it by a Role; inside it, the app namespace is part of the claim's name
// (`<app namespace>.<claim name>`): a namespace name has no dot, so no two app namespaces can collide.
import { namedError } from "../named-error.ts";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_NAME = 253;
const NAMESPACE_PREFIX = "app-";

/** The ServiceAccount, Role and RoleBinding of an app cluster's agent, in its control-plane namespace. */
export const AGENT_IDENTITY = "driftless-export-agent";
/** ConfigMap in the control-plane namespace recording the binding: app cluster name and templates. */
export const BINDING_CONFIGMAP = "driftless-export-binding";
/** Namespace and ConfigMap in the app cluster recording which control-plane binding it has. */
export const APP_BINDING_NAMESPACE = "driftless-system";
export const APP_BINDING_CONFIGMAP = "driftless-export";

export class InvalidNameError extends namedError("InvalidNameError", Error) {}

/** Checks an app cluster's name: a DNS label short enough for `app-<name>` to be a namespace. */
export function validateAppClusterName(name: string): string {
  if (!DNS1123_LABEL.test(name) || name.length > 63 - NAMESPACE_PREFIX.length) {
    throw new InvalidNameError(
      `app cluster name "${name}" must be lower-case letters, digits and '-', at most ${63 - NAMESPACE_PREFIX.length} characters`,
    );
  }
  return name;
}

/** The control-plane namespace that holds everything of one app cluster. */
export const controlPlaneNamespace = (appCluster: string) =>
  `${NAMESPACE_PREFIX}${validateAppClusterName(appCluster)}`;

/** The ClusterRole (and binding) that lets an app cluster's agent read its templates, by name only. */
export const templateReaderName = (appCluster: string) => `${AGENT_IDENTITY}-${appCluster}`;

/** The control-plane name of an app cluster's object `namespace/name` (claims, their Secret names). */
export function upstreamName(appNamespace: string, name: string): string {
  const up = `${appNamespace}.${name}`;
  if (up.length > MAX_NAME) {
    throw new InvalidNameError(
      `${appNamespace}/${name}: namespace and name together must be at most ${MAX_NAME - 1} characters to be exported`,
    );
  }
  return up;
}

/** The app-cluster name of a control-plane object synced back: the `<app namespace>.` prefix removed. */
export function downstreamName(appNamespace: string, upstream: string): string {
  const prefix = `${appNamespace}.`;
  return upstream.startsWith(prefix) && upstream.length > prefix.length
    ? upstream.slice(prefix.length)
    : upstream;
}
