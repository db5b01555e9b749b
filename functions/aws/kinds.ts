// The managed kinds the AWS functions serve. Imported by file, never through shared/providers/index.ts,
// so the Lambda bundles carry the AWS SDK only (no Pub/Sub, Storage or Azure); a unit test checks this
// list against the full registry, so a new AWS kind cannot be forgotten here.
import type { ManagedKindProvider, ProviderConfigKind } from "../../shared/api/external.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import { checkAwsCredentials } from "../../shared/providers/aws/config.ts";
import { securityGroupProvider } from "../../shared/providers/aws/ec2-securitygroup.ts";
import { subnetProvider } from "../../shared/providers/aws/ec2-subnet.ts";
import { vpcProvider } from "../../shared/providers/aws/ec2-vpc.ts";
import { dbInstanceProvider } from "../../shared/providers/aws/rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "../../shared/providers/aws/rds-dbsubnetgroup.ts";
import { bucketProvider } from "../../shared/providers/aws/s3-bucket.ts";
import { queueProvider } from "../../shared/providers/aws/sqs-queue.ts";

export const awsKinds: ManagedKindProvider[] = [
  queueProvider as ManagedKindProvider,
  bucketProvider as ManagedKindProvider,
  dbInstanceProvider as ManagedKindProvider,
  vpcProvider as ManagedKindProvider,
  subnetProvider as ManagedKindProvider,
  securityGroupProvider as ManagedKindProvider,
  dbSubnetGroupProvider as ManagedKindProvider,
];

export const awsProviderConfigKinds: ProviderConfigKind[] = [
  { cloud: "aws", type: providerConfigs.aws.type, check: checkAwsCredentials as ProviderConfigKind["check"] },
];
