// An admission.k8s.io/v1 AdmissionReview as the API server sends it to the doorbell, for tests.
import type { ResourceType } from "../../shared/api/meta.ts";

/** A review of a write of `type`; `request` adds or overrides fields (operation, name, objects…). */
export function admissionReview(type: ResourceType, request: Record<string, unknown>) {
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "req-1",
      kind: { group: type.group, version: type.version, kind: type.kind },
      resource: { group: type.group, version: type.version, resource: type.plural },
      operation: "UPDATE",
      userInfo: { username: "alice" },
      ...request,
    },
  };
}
