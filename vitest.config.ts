import { defineConfig } from "vitest/config";

// Two projects: `unit` needs nothing running; `integration` talks to the real local stack
// (kube-apiserver, moto, Pub/Sub emulator, Azurite, the ARM and GCS fakes), started once per run.
export default defineConfig({
  test: {
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/global-stack.ts"],
        },
      },
    ],
  },
});
