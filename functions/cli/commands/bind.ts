// `driftless bind`: connect an app cluster to this control plane.
import type { Command } from "commander";
import { UsageError } from "../../../shared/ops/errors.ts";
import { type CliContext, collect, loadAppClusters } from "../common.ts";
import { stdout } from "../output.ts";

export function registerBind(program: Command, cli: CliContext): void {
  program
    .command("bind")
    .description(
      "connect an app cluster to this control plane: its namespace, agent identity and RBAC here, the exported claim CRDs there",
    )
    .requiredOption("--app-cluster <kubeconfig>", "kubeconfig of the app cluster (as its administrator)")
    .requiredOption("--name <name>", "the app cluster's name; its claims live in namespace app-<name> here")
    .option(
      "--allow-local-files",
      "let the app cluster's kubeconfig name local files (tokenFile, client-certificate, client-key, certificate-authority paths)",
    )
    .option(
      "--export <template>",
      "an APIServiceExportTemplate to bind; repeatable (default: every template)",
      collect,
    )
    .addHelpText(
      "after",
      "\nRe-running it is harmless (and needed after adding templates). Then serve the app cluster with driftless run --app-cluster <name>=<kubeconfig>. The kubeconfig may not run commands (exec plugins, auth providers) nor name local files without --allow-local-files.",
    )
    .action(
      async (opts: { appCluster: string; name: string; export?: string[]; allowLocalFiles?: boolean }) => {
        // Read (and refused, if it must be) before either cluster is touched.
        const [app] = await loadAppClusters(
          [`${opts.name}=${opts.appCluster}`],
          opts.allowLocalFiles ? [opts.name] : [],
        );
        if (!app) throw new UsageError("--app-cluster: no kubeconfig");
        const { kc } = cli.kubeConfig();
        const { bindAppCluster } = await import("../../../shared/export/bind.ts");
        const res = await bindAppCluster({
          controlPlane: kc,
          app,
          name: opts.name,
          templates: opts.export ?? [],
        });
        stdout.write(
          `app cluster ${res.appCluster} bound: namespace ${res.namespace}, templates ${res.templates.join(", ")}, kinds ${res.kinds.join(", ")}\n`,
        );
      },
    );
}
