// The managed kinds the AWS functions serve: the AWS registry, imported by file (never through
// shared/providers/index.ts) so the Lambda bundles carry the AWS SDK only.
export { awsKinds, awsProviderConfigKinds } from "../../shared/providers/aws/kinds.ts";
