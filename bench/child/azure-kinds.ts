// What an Azure reconcile container loads at cold start, bundled by the benchmark like a function (esbuild,
// minified, no AWS or Google SDK, no client-node): the worker core over the Azure registry — the
// hand-written kinds and the generated kinds DRIFTLESS_ACTIVATE selects, read *at run time* from the data
// beside the bundle (azure/catalog.json and one spec file per activated kind; infra/build/build.ts's
// copyAzureKindsData). There is no Azure Functions trigger adapter yet: this is the code such a function
// would carry, measured, not a deployable function. Prints the kinds it serves.
import { Kube } from "../../shared/kube/client.ts";
import { noopLogger } from "../../shared/pipeline/common.ts";
import { azureKinds, azureProviderConfigKinds } from "../../shared/providers/azure/kinds.ts";
import { createWorker } from "../../shared/worker/worker.ts";

// Never called: loading, not reconciling, is measured.
const kube = new Kube({
  server: "https://127.0.0.1:1",
  prepare: () => Promise.reject(new Error("the bench bundle reaches no cluster")),
});
const worker = createWorker({
  kube,
  kinds: azureKinds,
  providerConfigKinds: azureProviderConfigKinds,
  logger: noopLogger,
});
process.stdout.write(`\nazure-kinds=${azureKinds.length} types=${worker.types.length}\n`);
