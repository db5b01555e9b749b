// The managed kinds the GCP functions serve: the GCP registry, imported by file (never through
// shared/providers/index.ts) so the Cloud Functions bundles carry Google's SDKs only.
export { gcpKinds, gcpProviderConfigKinds } from "../../shared/providers/gcp/kinds.ts";
