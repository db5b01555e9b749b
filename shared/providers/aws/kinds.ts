// The AWS kinds: a new one is its schema in shared/api/aws/, its provider file here and one line below;
// `npm run gen:kinds` then regenerates what derives from this list (forwarder kinds, README table,
// serverless.yml IAM). The AWS functions import this file, never shared/providers/index.ts, so their
// bundles carry the AWS SDK only.
import { providerConfigKindsOf, withNamespacedVariants } from "../../api/external.ts";
import { activatedAwsccKinds } from "../awscc/kinds.ts";
import { checkAwsCredentials } from "./config.ts";
import { securityGroupProvider } from "./ec2-securitygroup.ts";
import { subnetProvider } from "./ec2-subnet.ts";
import { vpcProvider } from "./ec2-vpc.ts";
import { dbInstanceProvider } from "./rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "./rds-dbsubnetgroup.ts";
import { bucketProvider } from "./s3-bucket.ts";
import { queueProvider } from "./sqs-queue.ts";

export const awsKinds = withNamespacedVariants([
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

export const awsProviderConfigKinds = providerConfigKindsOf("aws", checkAwsCredentials, [
  { sid: "WhoAmI", actions: ["sts:GetCallerIdentity"], resources: ["*"] },
]);
