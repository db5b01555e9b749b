import { configDefaults, defineConfig } from "vitest/config";

// Five projects: `unit` needs nothing running; `packaging` builds the function bundles and runs
// `osls package` (minutes, no servers); `integration` talks to the real local stack (kube-apiserver,
// moto, Pub/Sub emulator, Azurite, the ARM and GCS fakes), started once per run; `integration-serial`
// is the part of it that needs the cluster to itself; `faults` injects failures (process kills, API
// server restarts, cloud throttling, bad input) into it.
//
// Integration files mostly wait on servers, not CPU, so they run WORKERS at a time on two cores (two, not three:
// tests with 60 s limits such as "20 concurrent reconciles" must keep their margin when the machine is quiet):
// each uses names of its own (uniqueName), its own label for `driftless run -l`/sweeps, its own Cloud
// Control/ARM/GCP fakes, and webhooks that select only its label. Run alone, after them, are the files
// that change what every other file's `driftless run` or function sees:
// - activation: they write ActivationPolicies or Crossplane MRDs, which every `driftless run`, sweep and
//   function cold start reads (cluster-wide) to decide which generated kinds it serves;
// - a webhook with no selector (doorbell admission): every Secret written in the cluster goes through it.
// Generated kinds' CRDs are not a reason: files that use them hold them (test/support/crd-holds.ts, a
// Lease on the API server) and the last live holder removes them, so files sharing a kind run at once.
// README.md ("The local stack") says the same for whoever adds a file.
const WORKERS = 2;
const SERIAL = [
  // activation policies / MRDs
  "test/integration/awscc/activation.test.ts",
  "test/integration/awscc/activation-mrd.test.ts",
  "test/integration/azure-gen/activation.test.ts",
  "test/integration/gcp-generated/activation.test.ts",
  "test/integration/functions/aws-activation.test.ts",
  // a webhook with no selector: every Secret written in the cluster goes through it while it is installed
  "test/integration/doorbell/admission.test.ts",
];

export default defineConfig({
  test: {
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Group 0 (unit, packaging, integration): WORKERS files at a time.
    maxWorkers: WORKERS,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        extends: true,
        test: { name: "packaging", include: ["test/packaging/**/*.test.ts"] },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SERIAL],
          globalSetup: ["test/support/global-stack.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration-serial",
          include: SERIAL,
          globalSetup: ["test/support/global-stack.ts"],
          // One file at a time, after group 0: a project with its own maxWorkers needs its own group.
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          globalSetup: ["test/support/global-stack.ts"],
          // Mostly waiting on servers, not CPU: three files at once even on two cores; last, on its own.
          maxWorkers: 3,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
