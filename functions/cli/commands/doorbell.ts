// `driftless doorbell print|apply|delete`: the ValidatingWebhookConfiguration that makes the API server
// ring the reconcile function's HTTPS endpoint (shared/doorbell/webhook.ts). The URL's path carries the
// secret, so `print` is for piping into kubectl or a GitOps repository that keeps Secrets safe.
import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { stringify } from "yaml";
import { doorbellPath, secretProblem } from "../../../shared/doorbell/http.ts";
import {
  applyWebhookConfiguration,
  DEFAULT_WEBHOOK_NAME,
  DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
  deleteWebhookConfiguration,
  doorbellWebhookConfiguration,
  redactUrl,
  webhookUrlProblem,
} from "../../../shared/doorbell/webhook.ts";
import { Kube } from "../../../shared/kube/client.ts";
import { UsageError } from "../../../shared/ops/errors.ts";
import { typesOf } from "../../../shared/worker/worker.ts";
import { type CliContext, config, parseInteger, registry } from "../common.ts";
import { stderr, stdout } from "../output.ts";

interface ConfigOpts {
  url: string;
  caFile?: string;
  name: string;
  timeout: number;
  selector?: string;
  claims: boolean;
}

export function registerDoorbell(program: Command, cli: CliContext): void {
  const doorbell = program
    .command("doorbell")
    .description("print, apply or delete the webhook configuration that lets the API server ring driftless");
  const withConfigOptions = (c: Command) =>
    c
      .requiredOption(
        "--url <base>",
        "the endpoint's base URL (the Lambda Function URL, the Cloud Functions HTTP URL, https://host:port of driftless run --doorbell); /<secret>/admit is appended",
      )
      .option(
        "--ca-file <pem>",
        "CA bundle that signs the endpoint's certificate (default: the API server's system roots)",
      )
      .option("--name <name>", "metadata.name of the configuration", DEFAULT_WEBHOOK_NAME)
      .option(
        "--timeout <seconds>",
        `the most a write waits for the endpoint (1–30, default ${DEFAULT_WEBHOOK_TIMEOUT_SECONDS})`,
        parseInteger("--timeout", 1, 30),
        DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
      )
      .option("-l, --selector <labels>", "only objects with these labels ring (key=value,…): shards")
      .option("--no-claims", "leave claims and classes out (deployments with DRIFTLESS_CLAIMS=false)")
      .addHelpText(
        "after",
        "\nThe secret is read from DRIFTLESS_DOORBELL_SECRET (the same value the functions are given).",
      );
  withConfigOptions(
    doorbell.command("print").description("print the ValidatingWebhookConfiguration as YAML"),
  ).action(async (opts: ConfigOpts) => {
    const webhook = await build(opts);
    stderr.write("note: the URL's path holds the doorbell secret; store this output like a Secret\n");
    stdout.write(stringify(webhook));
  });
  withConfigOptions(
    doorbell
      .command("apply")
      .description("create or update the ValidatingWebhookConfiguration in the cluster"),
  ).action(async (opts: ConfigOpts) => {
    const webhook = await build(opts);
    const { kc } = cli.kubeConfig();
    const done = await applyWebhookConfiguration(new Kube(kc), webhook);
    stdout.write(
      `validatingwebhookconfiguration/${opts.name} ${done}: writes of driftless kinds now ring ${redactUrl(opts.url)}\n`,
    );
  });
  doorbell
    .command("delete")
    .description("delete the webhook configuration (back to the forwarder, or to the sweep alone)")
    .option("--name <name>", "metadata.name of the configuration", DEFAULT_WEBHOOK_NAME)
    .action(async (opts: { name: string }) => {
      const { kc } = cli.kubeConfig();
      await deleteWebhookConfiguration(new Kube(kc), opts.name);
      stdout.write(`validatingwebhookconfiguration/${opts.name} deleted\n`);
    });
}

async function build(opts: ConfigOpts): Promise<Record<string, unknown>> {
  const cfg = config();
  const secret = cfg.DRIFTLESS_DOORBELL_SECRET;
  const problem = secretProblem(secret);
  if (problem || !secret) throw new UsageError(`${problem}; generate one with: openssl rand -hex 32`);
  const base = opts.url.replace(/\/+$/, "");
  const baseProblem = webhookUrlProblem(base);
  if (baseProblem) throw new UsageError(`--url: ${baseProblem}`);
  const { managedKinds, providerConfigKinds } = await registry();
  let caBundlePem: string | undefined;
  if (opts.caFile) {
    try {
      caBundlePem = await readFile(opts.caFile, "utf8");
    } catch (err) {
      throw new UsageError(`--ca-file: cannot read ${opts.caFile}: ${(err as Error).message}`);
    }
    if (!caBundlePem.includes("-----BEGIN CERTIFICATE-----"))
      throw new UsageError(`--ca-file: ${opts.caFile} holds no PEM certificate`);
  }
  try {
    return doorbellWebhookConfiguration({
      url: `${base}${doorbellPath(secret, "admit")}`,
      types: typesOf(managedKinds, providerConfigKinds, { claims: opts.claims }),
      caBundlePem,
      name: opts.name,
      timeoutSeconds: opts.timeout,
      labelSelector: opts.selector,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
