import type { TestProject } from "vitest/node";
import { down, up } from "../../infra/local/stack.ts";
import { ensureTestCli } from "./test-cli.ts";

// Starts the local stack once per test run (or reuses one already up) and hands its endpoints to
// every test worker through the environment; stops only what this run started. Meanwhile builds the
// CLI the tests spawn (test-cli.ts), once per change of its sources.
export default async function setup(_project: TestProject) {
  const [{ env, started }] = await Promise.all([up(), ensureTestCli()]);
  Object.assign(process.env, env);
  return async () => {
    if (started && !process.env.DRIFTLESS_KEEP_STACK) await down();
  };
}
