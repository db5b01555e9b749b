// Shared pieces of the fault suite: the tried / survived / lost tally every area prints at the end (and
// merges into test/faults/.results.json), and small helpers for counting cloud resources and objects.
import { mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { DescribeVpcsCommand, EC2Client } from "@aws-sdk/client-ec2";
import { ListQueuesCommand } from "@aws-sdk/client-sqs";
import type { ResourceType } from "../../shared/api/meta.ts";
import { providerConfigs } from "../../shared/api/provider-config.ts";
import type { Kube } from "../../shared/kube/client.ts";
import { coreApi } from "../../shared/kube/core.ts";
import { createLogger } from "../../shared/log.ts";
import { OWNER_TAG } from "../../shared/providers/aws/ec2-common.ts";
import { createAwsProviderConfig, motoSqs } from "../support/aws.ts";
import { env, sleep } from "../support/env.ts";

const RESULTS_FILE = join(import.meta.dirname, ".results.json");

export interface Trial {
  name: string;
  survived: boolean;
  detail?: string;
  /** The test that recorded it (tests of a file may run concurrently). */
  scope?: string;
}

/** One test's view of its area's tally: what it records, and what of that was lost. */
export interface TallyScope {
  record(name: string, survived: boolean, detail?: string): boolean;
  /** This test's lost trials, as "name: detail" lines (for an assertion that shows them). */
  lost(): string[];
}

/**
 * One area's tally. A fault "survived" when the system ended in the correct state (no duplicate, no
 * orphan, converged, clear error); "lost" when it did not. Tests assert `lost === 0` at the end.
 */
export class Tally {
  readonly area: string;
  readonly trials: Trial[] = [];
  /** What the area found that is neither survived nor lost: honest notes for the report. */
  readonly findings: string[] = [];
  readonly started = Date.now();
  constructor(area: string) {
    this.area = area;
  }

  record(name: string, survived: boolean, detail?: string, scope?: string): boolean {
    this.trials.push({ name, survived, ...(detail ? { detail } : {}), ...(scope ? { scope } : {}) });
    return survived;
  }

  /** A view for one test, so concurrent tests assert only on their own trials. */
  scope(label: string): TallyScope {
    return {
      record: (name, survived, detail) => this.record(name, survived, detail, label),
      lost: () =>
        this.trials
          .filter((t) => t.scope === label && !t.survived)
          .map((t) => `${t.name}: ${t.detail ?? ""}`),
    };
  }

  note(finding: string): void {
    this.findings.push(finding);
  }

  get tried() {
    return this.trials.length;
  }
  get survived() {
    return this.trials.filter((t) => t.survived).length;
  }
  get lost() {
    return this.trials.filter((t) => !t.survived).length;
  }

  /** Prints the summary line and merges this area into .results.json (safe against parallel files). */
  report(): void {
    const seconds = (Date.now() - this.started) / 1000;
    const line = `[faults] ${this.area}: tried ${this.tried} / survived ${this.survived} / lost ${this.lost} (${seconds.toFixed(1)} s)`;
    process.stdout.write(`${line}\n`);
    for (const t of this.trials.filter((x) => !x.survived))
      process.stdout.write(`[faults]   LOST ${t.name}: ${t.detail ?? ""}\n`);
    for (const f of this.findings) process.stdout.write(`[faults]   finding: ${f}\n`);
    withLock(() => {
      let all: Record<string, unknown> = {};
      try {
        all = JSON.parse(readFileSync(RESULTS_FILE, "utf8")) as Record<string, unknown>;
      } catch {
        // first area of the run, or an unreadable file: start over
      }
      all[this.area] = {
        tried: this.tried,
        survived: this.survived,
        lost: this.lost,
        seconds: Number(seconds.toFixed(1)),
        at: new Date().toISOString(),
        trials: this.trials,
        ...(this.findings.length > 0 ? { findings: this.findings } : {}),
      };
      const tmp = `${RESULTS_FILE}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(all, null, 2)}\n`);
      renameSync(tmp, RESULTS_FILE);
    });
  }
}

/** A directory lock (mkdir is atomic): the suite's files run in parallel processes. */
function withLock(fn: () => void) {
  const lock = `${RESULTS_FILE}.lock`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) break; // a stale lock from a killed run: write anyway
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    fn();
  } finally {
    try {
      rmdirSync(lock);
    } catch {
      // already gone
    }
  }
}

/** SQS queue URLs in moto whose name starts with `prefix` (asked of moto directly, never via a proxy). */
export async function motoQueues(prefix: string): Promise<string[]> {
  const sqs = motoSqs();
  try {
    const out = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: prefix, MaxResults: 1000 }));
    return out.QueueUrls ?? [];
  } finally {
    sqs.destroy();
  }
}

const ec2 = () =>
  new EC2Client({
    region: "us-east-1",
    endpoint: env("AWS_ENDPOINT_URL"),
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
  });

/** VPC ids in moto carrying the ownership tag of this managed resource uid. */
export async function motoVpcsOwnedBy(uid: string): Promise<string[]> {
  const client = ec2();
  try {
    const out = await client.send(
      new DescribeVpcsCommand({ Filters: [{ Name: `tag:${OWNER_TAG}`, Values: [uid] }] }),
    );
    return (out.Vpcs ?? []).map((v) => v.VpcId ?? "");
  } finally {
    client.destroy();
  }
}

/** Deletes objects of a test, dropping finalizers first, and waits until they are gone. */
export async function forceDelete(kube: Kube, t: ResourceType, names: readonly string[]) {
  await Promise.all(
    names.map(async (name) => {
      const current = await kube.get(t, name).catch(() => undefined);
      if (!current) return;
      if (current.metadata.finalizers?.length)
        await kube.patch(t, name, { metadata: { finalizers: null } }).catch(() => undefined);
      await kube.delete(t, name).catch(() => undefined);
    }),
  );
}

/** Runs `fn` over `items`, `width` at a time, keeping results in order. */
export async function mapLimit<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>) {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i] as T);
    }),
  );
  return results;
}

export { sleep };

/** An AWS ProviderConfig (credentials in a Secret, as users do) whose endpoint is `url` (a proxy). */
export async function createAwsProviderConfigAt(kube: Kube, name: string, url: string) {
  await createAwsProviderConfig(kube, name);
  await kube.patch(providerConfigs.aws.type, name, { spec: { endpoint: { url } } });
}

/** Events in `namespace` about the object `name`, oldest first. */
export async function eventsFor(kube: Kube, name: string, namespace = "default") {
  const list = await coreApi(kube).listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items;
}

/** A real (pino) logger writing JSON lines into memory, as `driftless run` and the functions log. */
export function bufferLogger(level = "debug") {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString("utf8"));
      done();
    },
  });
  const logger = createLogger({ level, name: "faults", destination });
  return { logger, text: () => chunks.join(""), lines: () => chunks.join("").split("\n").filter(Boolean) };
}
