// The GCP kinds: a new one is its schema in shared/api/gcp/, its provider file here and one line below;
// `npm run gen:kinds` then regenerates what derives from this list. The GCP functions import this file,
// never shared/providers/index.ts, so their bundles carry Google's SDKs only.
import { providerConfigKindsOf, withNamespacedVariants } from "../../api/external.ts";
import { withHome } from "../home.ts";
import { globalAddressProvider } from "./compute-globaladdress.ts";
import { computeNetworkProvider } from "./compute-network.ts";
import { checkGcpCredentials } from "./config.ts";
import { activatedGoogleKinds } from "./generic/kinds.ts";
import { gcpHome } from "./home.ts";
import { subscriptionProvider } from "./pubsub-subscription.ts";
import { topicProvider } from "./pubsub-topic.ts";
import { connectionProvider } from "./servicenetworking-connection.ts";
import { sqlDatabaseProvider } from "./sql-database.ts";
import { sqlInstanceProvider } from "./sql-instance.ts";
import { sqlUserProvider } from "./sql-user.ts";
import { gcsBucketProvider } from "./storage-bucket.ts";

export const gcpKinds = withNamespacedVariants(
  [
    topicProvider,
    subscriptionProvider,
    gcsBucketProvider,
    computeNetworkProvider,
    globalAddressProvider,
    connectionProvider,
    sqlInstanceProvider,
    sqlDatabaseProvider,
    sqlUserProvider,
    // The generated kinds (Google's protos) that are activated; none by default (docs/gcp-generated.md).
    ...activatedGoogleKinds(),
  ].map((p) => withHome(p, gcpHome)),
);

export const gcpProviderConfigKinds = providerConfigKindsOf("gcp", checkGcpCredentials);
