// What every benchmark section gets: the run's id and sizes, the cluster, the recording proxy, and the
// in-sync queues set up once for the sections that need them.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Kube } from "../../shared/kube/client.ts";
import type { WireProxy } from "./wire.ts";

export interface Sizes {
  /** In-sync SQS queues (work per reconcile, overhead, latency). */
  insync: number;
  /** Concurrency of workers and bare calls. */
  concurrency: number;
  /** Drift cycles counted in the work section. */
  workCycles: number;
  /** Repetitions of engine vs bare calls. */
  overheadReps: number;
  /** Spec changes per latency path. */
  latencyChanges: number;
  /** Managed resources in the API server for the scale section (two points). */
  scale: [number, number];
  /** Sweeps per scale point. */
  sweepReps: number;
  /** Child processes per RSS point. */
  rssReps: number;
  /** Fresh processes per cold-import median (aws-reconcile; other bundles use fewer). */
  importSamples: number;
}

export const QUICK: Sizes = {
  insync: 100,
  concurrency: 8,
  workCycles: 2,
  overheadReps: 3,
  latencyChanges: 50,
  scale: [200, 1000],
  sweepReps: 3,
  rssReps: 2,
  importSamples: 5,
};

export const FULL: Sizes = {
  insync: 1000,
  concurrency: 8,
  workCycles: 3,
  overheadReps: 5,
  latencyChanges: 200,
  scale: [1000, 10_000],
  sweepReps: 3,
  rssReps: 3,
  importSamples: 9,
};

export interface BenchContext {
  quick: boolean;
  sizes: Sizes;
  /** Unique per run: names and label values carry it. */
  run: string;
  env: Record<string, string>;
  kc: KubeConfig;
  /** For setup and cleanup; sections that count requests make their own Kube. */
  kube: Kube;
  proxy: WireProxy;
  /** The ProviderConfig every benchmark object uses (endpoint: the proxy). */
  providerConfig: string;
  /** Names of the in-sync Queue objects (and of their SQS queues). */
  insync: string[];
  /** Where the benchmark's bundles are built. */
  distDir: string;
  log(msg: string): void;
}
