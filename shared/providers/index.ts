import type { ManagedKindProvider, ProviderConfigKind } from "../api/external.ts";
import { providerConfigs } from "../api/provider-config.ts";
import { checkAwsCredentials } from "./aws/config.ts";
import { securityGroupProvider } from "./aws/ec2-securitygroup.ts";
import { subnetProvider } from "./aws/ec2-subnet.ts";
import { vpcProvider } from "./aws/ec2-vpc.ts";
import { dbInstanceProvider } from "./aws/rds-dbinstance.ts";
import { dbSubnetGroupProvider } from "./aws/rds-dbsubnetgroup.ts";
import { bucketProvider } from "./aws/s3-bucket.ts";
import { queueProvider } from "./aws/sqs-queue.ts";
import { checkAzureCredentials } from "./azure/config.ts";
import { containerProvider } from "./azure/container.ts";
import { resourceGroupProvider } from "./azure/resource-group.ts";
import { azureSubnetProvider } from "./azure/subnet.ts";
import { virtualNetworkProvider } from "./azure/virtual-network.ts";
import { checkGcpCredentials } from "./gcp/config.ts";
import { subscriptionProvider } from "./gcp/pubsub-subscription.ts";
import { topicProvider } from "./gcp/pubsub-topic.ts";
import { gcsBucketProvider } from "./gcp/storage-bucket.ts";

/** Every managed kind driftless reconciles: adding a kind is one file plus one line here. */
export const managedKinds: ManagedKindProvider[] = [
  queueProvider as ManagedKindProvider,
  bucketProvider as ManagedKindProvider,
  dbInstanceProvider as ManagedKindProvider,
  vpcProvider as ManagedKindProvider,
  subnetProvider as ManagedKindProvider,
  securityGroupProvider as ManagedKindProvider,
  dbSubnetGroupProvider as ManagedKindProvider,
  resourceGroupProvider as ManagedKindProvider,
  containerProvider as ManagedKindProvider,
  virtualNetworkProvider as ManagedKindProvider,
  azureSubnetProvider as ManagedKindProvider,
  topicProvider as ManagedKindProvider,
  subscriptionProvider as ManagedKindProvider,
  gcsBucketProvider as ManagedKindProvider,
];

/** Every cloud's ProviderConfig and its credential check. */
export const providerConfigKinds: ProviderConfigKind[] = [
  { cloud: "aws", type: providerConfigs.aws.type, check: checkAwsCredentials as ProviderConfigKind["check"] },
  {
    cloud: "azure",
    type: providerConfigs.azure.type,
    check: checkAzureCredentials as ProviderConfigKind["check"],
  },
  { cloud: "gcp", type: providerConfigs.gcp.type, check: checkGcpCredentials as ProviderConfigKind["check"] },
];
