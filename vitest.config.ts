import { defineConfig } from "vitest/config";

// Four projects: `unit` needs nothing running; `packaging` builds the function bundles and runs
// `osls package` (minutes, no servers); `integration` talks to the real local stack (kube-apiserver,
// moto, Pub/Sub emulator, Azurite, the ARM and GCS fakes), started once per run; `faults` injects
// failures (process kills, API server restarts, cloud throttling, bad input) into it.
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
        // Same group as unit and integration, so `vitest run` overlaps it with them exactly as before.
        test: { name: "packaging", include: ["test/packaging/**/*.test.ts"] },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/global-stack.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          globalSetup: ["test/support/global-stack.ts"],
          // Mostly waiting on servers, not CPU: three files at once even on two cores. A project with its
          // own maxWorkers needs its own group; it runs after the other two.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
