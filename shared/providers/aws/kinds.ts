// The AWS kinds: a new one is its schema in shared/api/aws/, its provider file here and one line below;
// `npm run gen:kinds` then regenerates what derives from this list (forwarder kinds, README table,
// serverless.yml IAM). The AWS functions import this file, never shared/providers/index.ts, so their
// bundles carry the AWS SDK only.
import {
  defineProviderConfigKind,
  type ManagedKindProvider,
  type ProviderConfigKind,
  providerConfigKindsOf,
  withNamespacedVariants,
} from "../../api/external.ts";
import { providerConfigs, v2ProviderConfigs } from "../../api/provider-config.ts";
import { activatedAwsccKinds } from "../awscc/kinds.ts";
import { checkAwsCredentials } from "./config.ts";
import { securityGroupProvider } from "./ec2-securitygroup.ts";
import { subnetProvider } from "./ec2-subnet.ts";
import { vpcProvider } from "./ec2-vpc.ts";
import { dbInstanceProvider } from "./rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "./rds-dbsubnetgroup.ts";
import { bucketProvider } from "./s3-bucket.ts";
import { queueProvider } from "./sqs-queue.ts";

export const awsKinds: ManagedKindProvider[] = withNamespacedVariants([
  queueProvider,
  bucketProvider,
  dbInstanceProvider,
  vpcProvider,
  subnetProvider,
  securityGroupProvider,
  dbSubnetGroupProvider,
  // The generated kinds (Cloud Control) that are activated; none by default (docs/awscc.md).
  ...activatedAwsccKinds(),
]);

export const awsProviderConfigKinds: ProviderConfigKind[] = providerConfigKindsOf(
  defineProviderConfigKind({
    cloud: "aws",
    type: providerConfigs.aws.type,
    check: checkAwsCredentials,
    iam: [{ sid: "WhoAmI", actions: ["sts:GetCallerIdentity"], resources: ["*"] }],
  }),
  v2ProviderConfigs.aws,
);
