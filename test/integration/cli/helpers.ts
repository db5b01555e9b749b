// Spawns the real CLI (functions/cli/main.ts, bundled as `npm run build` ships it: test/support/test-bundles.ts)
// with the Node 22 binary running the tests and the stack's environment, the way an operator runs it.
import { type ChildProcess, spawn } from "node:child_process";
import { expect } from "vitest";
import type { ManagedKindDef } from "../../../shared/api/managed.ts";
import { ActivationPolicy, type ActivationPolicyObject } from "../../../shared/api/pkg/activation-policy.ts";
import type { Kube } from "../../../shared/kube/client.ts";
import { eventually } from "../../support/env.ts";
import { getMr } from "../../support/reconcile.ts";
import { TEST_COMPILE_CACHE, testBundle } from "../../support/test-bundles.ts";

/** Node's arguments for `driftless args…`: the bundle the global setup built. */
const cliArgs = (args: string[]) => [testBundle("cli"), ...args];

/** The CLI's environment: the test's, sharing one compile cache across the spawned CLIs. */
const cliEnv = (env: Record<string, string | undefined>) => ({
  ...process.env,
  NODE_COMPILE_CACHE: TEST_COMPILE_CACHE,
  ...env,
});

/** The label the objects of one test carry, so `run`, `forward` and `sweep` see only that test's objects. */
export const TEST_LABEL = "driftless.dev/test";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `driftless <args>` to completion. */
export function cli(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, cliArgs(args), {
      env: cliEnv({ LOG_LEVEL: "warn", ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`driftless ${args.join(" ")} did not finish in time; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

/** A long-running `driftless <args>` (run, forward) whose output is collected while it runs. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly #exit: Promise<number | null>;

  constructor(args: string[], env: Record<string, string | undefined> = {}) {
    this.child = spawn(process.execPath, cliArgs(args), {
      env: cliEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      this.stdout += d;
    });
    this.child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      this.stderr += d;
    });
    this.#exit = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  /** JSON log lines printed so far (pino writes one object per line on stdout). */
  logs(): Array<Record<string, unknown>> {
    return this.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Waits for a log line matching `pred`. */
  waitForLog(pred: (l: Record<string, unknown>) => boolean, what: string, timeoutMs = 60_000) {
    return eventually(async () => this.logs().find(pred), { timeoutMs, what, intervalMs: 100 });
  }

  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  async stop(graceMs = 30_000): Promise<number | null> {
    if (this.child.exitCode !== null) return this.child.exitCode;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    const code = await this.#exit;
    clearTimeout(timer);
    return code;
  }

  exited(): Promise<number | null> {
    return this.#exit;
  }
}

/** Adds the test label to an object already created (ProviderConfigs from the shared helpers). */
export async function label(
  kube: Kube,
  type: Parameters<Kube["patch"]>[0],
  name: string,
  value: string,
): Promise<void> {
  await kube.patch(type, name, { metadata: { labels: { [TEST_LABEL]: value } } });
}

/** The Warning event telling an object in `default` that its kind is not activated (waited for). */
export async function notActivatedWarning(kube: Kube, name: string) {
  const { NOT_ACTIVATED } = await import("../../../shared/ops/activation-policy.ts");
  return eventually(
    async () =>
      (
        await kube.listEvents<{ reason?: string; type?: string; message?: string }>(
          "default",
          `involvedObject.name=${name}`,
        )
      ).find((e) => e.reason === NOT_ACTIVATED),
    { timeoutMs: 60_000, what: "the KindNotActivated Warning event" },
  );
}

/** The object once a served process made it Ready (waited for, up to 90 s). */
export async function readyOnceServed(kube: Kube, type: ManagedKindDef, name: string) {
  return eventually(
    async () => {
      const mr = await getMr(kube, type, name);
      return mr?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? mr : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 500, what: `${name} Ready once activated` },
  );
}

/**
 * What a running `driftless run` shows once a policy activated generated kinds: it started again in the
 * same process (never restarted), logged the CRDs now activated, and the policy's status lists them.
 * Returns the policy as stored.
 */
export async function expectActivatedWithoutRestart(
  run: CliProcess,
  kube: Kube,
  policyName: string,
  crds: readonly string[],
) {
  expect(run.child.exitCode).toBeNull();
  expect(run.logs().filter((l) => l.msg === "driftless run started").length).toBe(2);
  const changed = run
    .logs()
    .find((l) => l.msg === "activation changed: serving the generated kinds now activated");
  expect(changed?.activated).toEqual(crds);
  const policy = await eventually(
    async () => {
      const p = await kube.get<ActivationPolicyObject>(ActivationPolicy, policyName);
      return p?.status?.activated?.length ? p : undefined;
    },
    { what: "the policy's status.activated" },
  );
  expect(policy.status?.activated).toEqual(crds);
  return policy;
}
