import type { TestProject } from "vitest/node";
import { down, up } from "../../infra/local/stack.ts";
import { ensureTestBundles } from "./test-bundles.ts";

// Starts the local stack once per test run (or reuses one already up) and hands its endpoints to
// every test worker through the environment; stops only what this run started. Meanwhile bundles what
// the tests spawn (test-bundles.ts), once per change of its sources.
export default async function setup(_project: TestProject) {
  const [{ env, started }] = await Promise.all([up(), ensureTestBundles()]);
  Object.assign(process.env, env);
  return async () => {
    if (started && !process.env.DRIFTLESS_KEEP_STACK) await down();
  };
}
