// What a migration produces, shared by the Crossplane migration (migrate.ts) and the namespaced one.

export type IssueSeverity =
  /** The object was not migrated at all (unknown kind, malformed object, no id): nothing written; exit 1. */
  | "error"
  /**
   * A field (or part of one) driftless does not manage, or a value it cannot take: left out, listed; exit 1
   * unless allowed.
   */
  | "dropped"
  /** Carried over, but something must be done before applying (copy a Secret, move a consumer). */
  | "warning"
  /** Worth knowing; nothing lost. */
  | "note";

export interface MigrateIssue {
  severity: IssueSeverity;
  /** `Kind.group/name` of the source object, or `document N` when it has none. */
  source: string;
  /** forProvider field (or spec path) concerned. */
  field?: string;
  message: string;
}

export interface MigratedObject {
  /** `Kind.group/name` of the Crossplane object. */
  source: string;
  /** The driftless object, ready to apply. */
  object: DriftlessObject;
}

export interface DriftlessObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown>;
}
