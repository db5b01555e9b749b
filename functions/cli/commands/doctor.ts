// `driftless doctor`: check everything driftless depends on and say how to fix what is wrong.
import type { Command } from "commander";
import type { DoctorCheck, GeneratedCrd } from "../../../shared/ops/doctor.ts";
import {
  type CliContext,
  config,
  EXIT,
  outputOption,
  parseInteger,
  queueSettings,
  registry,
} from "../common.ts";
import { doctorLine, type Output, Progress, printObject, stdout } from "../output.ts";
import { activationPlan } from "./crds.ts";

export function registerDoctor(program: Command, cli: CliContext): void {
  program
    .command("doctor")
    .description(
      "check kubeconfig, API server, CRDs, RBAC, queue and every ProviderConfig's credentials; say how to fix what is wrong",
    )
    .addOption(outputOption(["table", "json"]))
    .option("--timeout <seconds>", "per check", parseInteger("--timeout", 1, 600), 15)
    .option("-l, --selector <labels>", "check only the ProviderConfigs matching this label selector")
    .addHelpText("after", "\n✓ ok   ✗ failed (exit 1)   ! warning   - skipped")
    .action(async (opts: { output: Output; timeout: number; selector?: string }) => {
      const cfg = config();
      const results: DoctorCheck[] = [];
      const progress = new Progress();
      progress.update("checking …", true);
      const [{ doctor }, { managedKinds, providerConfigKinds }] = await Promise.all([
        import("../../../shared/ops/doctor.ts"),
        registry(),
      ]);
      const { install } = await activationPlan({});
      const activeNames = new Set(install.map((c) => c.metadata.name));
      for await (const check of doctor({
        loadKubeConfig: () => cli.loadKubeConfig(cfg),
        queue: queueSettings(cfg),
        // Only the activated managed kinds (DRIFTLESS_ACTIVATE): the others have, rightly, no CRD.
        managed: managedKinds
          .map((k) => k.definition)
          .filter((d) => activeNames.has(`${d.plural}.${d.group}`)),
        providerConfigKinds,
        crds: install as unknown as GeneratedCrd[],
        timeoutMs: opts.timeout * 1000,
        ...(opts.selector ? { providerConfigSelector: opts.selector } : {}),
        tenancy: { ambientIdentityNamespaces: cfg.DRIFTLESS_AMBIENT_IDENTITY_NAMESPACES },
      })) {
        results.push(check);
        if (opts.output === "table") {
          progress.done();
          stdout.write(doctorLine(check));
          progress.update("checking …", true);
        }
      }
      progress.done();
      const failed = results.filter((r) => r.status === "fail");
      if (opts.output === "json") printObject(stdout, "json", { ok: failed.length === 0, checks: results });
      else
        stdout.write(
          failed.length === 0
            ? `\nall ${results.length} checks passed\n`
            : `\n${failed.length} of ${results.length} checks failed\n`,
        );
      if (failed.length > 0) process.exitCode = EXIT.failure;
    });
}
