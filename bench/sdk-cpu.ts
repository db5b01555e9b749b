// CPU and instructions of one drift check's cloud call through the product's own client path, against moto
// behind a keep-alive front in another process (moto closes every connection; AWS keeps them open), so the
// measured process holds only the client's work. Not a test: it reports, nothing asserts.
//
//   node bench/sdk-cpu.ts [--endpoint URL] [--calls N] [--runs R] [--variants a,b,…] [--concurrency C]
//                         [--callgrind] [--profile DIR]
//
// --endpoint  moto (default: the stack's, DRIFTLESS_PORT_MOTO); the bench puts its own front before it,
//             which holds each answer to --latency-ms (log-normal median, as section 17; default 0).
// Each variant runs R times in a fresh process: N calls after 200 warm-up calls, CPU µs per call from
// process.cpuUsage() around the N. --callgrind also runs each variant once under `valgrind
// --tool=callgrind`, zeroing and dumping its counters around the N calls (callgrind_control) and
// reporting user-space instructions per call, which the shared machine's load moves far less than CPU time
// (perf has no hardware counters in this VM). --profile writes a
// --cpu-prof profile per variant and prints where the samples went (signing, endpoint, serde, …).
import { execFile, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { DescribeVpcsCommand, EC2Client, type EC2ClientConfig } from "@aws-sdk/client-ec2";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
  SQSClient,
  type SQSClientConfig,
} from "@aws-sdk/client-sqs";
import type { ExternalClient } from "../shared/api/external.ts";
import type { ManagedResource } from "../shared/api/managed.ts";
import { type AwsClientConfig, ClientCache, sdkOptions } from "../shared/providers/aws/config.ts";

const SELF = fileURLToPath(import.meta.url);
const NODE = process.execPath;
const WARM_UP = 200;
const QUEUE_NAME = "sdk-cpu-bench";
const CREDENTIALS_INI = "[default]\naws_access_key_id = testing\naws_secret_access_key = testing\n";

/**
 * What each variant changes against the product's client (ClientCache + sdkOptions). "observe" is the
 * Queue kind's own observe (client configuration per call, the cached client, GetQueueAttributes, the
 * observed fields): what the batched check calls per resource. The others send GetQueueAttributes (or
 * DescribeVpcs) through ClientCache with one SDK option more, to see what each option is worth.
 */
type Variant =
  | { path: "observe" }
  | {
      path: "sqs";
      options?: (c: AwsClientConfig) => Partial<SQSClientConfig>;
      remove?: string[];
      attributes?: QueueAttributeName[];
    }
  | { path: "ec2"; options?: (c: AwsClientConfig) => Partial<EC2ClientConfig> };

// Not here: requestChecksumCalculation / responseChecksumValidation. Neither SQS's nor EC2's client has
// flexible checksums (the options are not in SQSClientConfig or EC2ClientConfig, and the middleware stack is
// the same with and without them): the SHA-256 in the profile is SigV4's payload hash.
const VARIANTS: Record<string, () => Promise<Variant>> = {
  observe: async () => ({ path: "observe" }),
  sqs: async () => ({ path: "sqs" }),
  "sqs-cache-middleware": async () => ({ path: "sqs", options: () => ({ cacheMiddleware: true }) }),
  "sqs-fetch-handler": async () => {
    const { FetchHttpHandler } = await import("@smithy/fetch-http-handler");
    return { path: "sqs", options: () => ({ requestHandler: new FetchHttpHandler({ keepAlive: true }) }) };
  },
  // What the Queue kind reads (observedOf), instead of "All": a smaller answer to parse.
  "sqs-named-attributes": async () => ({
    path: "sqs",
    attributes: [
      "QueueArn",
      "FifoQueue",
      "ContentBasedDeduplication",
      "DelaySeconds",
      "MaximumMessageSize",
      "MessageRetentionPeriod",
      "ReceiveMessageWaitTimeSeconds",
      "VisibilityTimeout",
      "RedrivePolicy",
      "Policy",
      "RedriveAllowPolicy",
    ],
  }),
  // Not an option: the stack's public remove(), to see what the middleware costs (it only acts in Lambda).
  "sqs-no-recursion-detection": async () => ({ path: "sqs", remove: ["recursionDetectionMiddleware"] }),
  ec2: async () => ({ path: "ec2" }),
};

interface ClientResult {
  variant: string;
  calls: number;
  concurrency: number;
  cpuUsPerCall: number;
  userUsPerCall: number;
  systemUsPerCall: number;
  wallMsPerCall: number;
}

// ---------------------------------------------------------------------------------------------------
// The measured process: N calls of one variant.

async function runClient(
  endpoint: string,
  name: string,
  calls: number,
  concurrency: number,
  profileOut: string | undefined,
) {
  const make = VARIANTS[name];
  if (!make) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(", ")}`);
  const variant = await make();
  const config: AwsClientConfig = {
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    cacheKey: `bench/${name}`,
  };
  let call: () => Promise<unknown>;
  if (variant.path === "observe") {
    const { queueProvider } = await import("../shared/providers/aws/sqs-queue.ts");
    const queueUrl = await createQueue(config);
    const external = (await queueProvider.connect({
      providerConfig: {
        apiVersion: "aws.driftless.dev/v1alpha1",
        kind: "ProviderConfig",
        metadata: { name: "bench", uid: "bench-uid", generation: 1 },
        spec: {
          region: "us-east-1",
          endpoint: { url: endpoint },
          credentials: {
            source: "Secret",
            secretRef: { namespace: "bench", name: "aws", key: "credentials" },
          },
        },
      },
      readSecretKey: async () => CREDENTIALS_INI,
    })) as ExternalClient<Record<string, unknown>, Record<string, unknown>>;
    const arn = `arn:aws:sqs:us-east-1:123456789012:${QUEUE_NAME}`;
    const mr = {
      apiVersion: "sqs.aws.driftless.dev/v1alpha1",
      kind: "Queue",
      metadata: { name: QUEUE_NAME, namespace: "bench" },
      spec: { forProvider: { region: "us-east-1" } },
      status: { atProvider: { url: queueUrl, arn } },
    } as unknown as ManagedResource<Record<string, unknown>, Record<string, unknown>>;
    call = async () => {
      const obs = await external.observe(mr, QUEUE_NAME);
      if (!obs.resourceExists) throw new Error("the bench queue is gone");
    };
  } else if (variant.path === "sqs") {
    const clients = new ClientCache((c) => new SQSClient({ ...sdkOptions(c), ...variant.options?.(c) }));
    const sqs = clients.get(config);
    for (const name of variant.remove ?? []) sqs.middlewareStack.remove(name);
    const QueueUrl = await createQueue(config);
    const AttributeNames = variant.attributes ?? ["All" as QueueAttributeName];
    call = () => sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames }));
  } else {
    const clients = new ClientCache((c) => new EC2Client({ ...sdkOptions(c), ...variant.options?.(c) }));
    const ec2 = clients.get(config);
    call = () => ec2.send(new DescribeVpcsCommand({}));
  }
  const batch = async (n: number) => {
    let next = 0;
    const lane = async () => {
      while (next++ < n) await call();
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  };
  await batch(WARM_UP); // JIT, sockets
  // Under callgrind: one zero → dump cycle with nothing between (what the cycle itself costs), then one
  // around the measured calls. The orchestrator subtracts the first from the second.
  const underCallgrind = process.env.SDK_CPU_CALLGRIND === "1";
  if (underCallgrind) {
    await callgrind("-z");
    await callgrind("-d", "empty");
    await callgrind("-z");
  }
  // The profile holds the measured calls only (not the imports, the warm-up or the JIT's first tiers).
  const session = profileOut ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
  }
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await batch(calls);
  const used = process.cpuUsage(cpu);
  if (underCallgrind) await callgrind("-d", "measured");
  if (session && profileOut) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(profileOut, JSON.stringify(profile));
  }
  const per = (us: number) => (calls ? +(us / calls).toFixed(1) : 0);
  const result: ClientResult = {
    variant: name,
    calls,
    concurrency,
    cpuUsPerCall: per(used.user + used.system),
    userUsPerCall: per(used.user),
    systemUsPerCall: per(used.system),
    wallMsPerCall: calls ? +((performance.now() - wall) / calls).toFixed(3) : 0,
  };
  console.log(JSON.stringify(result));
  process.exit(0); // keep-alive sockets would hold the process open
}

/** Asks the callgrind this process runs under to zero or dump its counters (through vgdb). */
async function callgrind(...args: string[]) {
  await promisify(execFile)("callgrind_control", [...args, String(process.pid)]);
}

async function createQueue(config: AwsClientConfig): Promise<string> {
  const sqs = new SQSClient(sdkOptions(config));
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: QUEUE_NAME }));
  sqs.destroy();
  if (!QueueUrl) throw new Error("CreateQueue answered no QueueUrl");
  return QueueUrl;
}

// ---------------------------------------------------------------------------------------------------
// The keep-alive front before moto, in its own process.

async function runFront(target: string, latencyMs: number) {
  const { WireProxy, logNormalLatency } = await import("./lib/wire.ts");
  const proxy = await WireProxy.start(target);
  // As section 17 holds answers (log-normal, σ 0.5): concurrent calls then come back spread out, as from AWS.
  if (latencyMs > 0) proxy.latency = logNormalLatency(latencyMs);
  console.log(proxy.url);
  // Calls are not kept: the front runs for a whole bench.
  setInterval(() => proxy.clear(), 1_000).unref();
  process.stdin.resume();
  process.stdin.on("end", () => process.exit(0));
}

async function startFront(target: string, latencyMs: number) {
  const args = [SELF, "--front", target, "--latency-ms", String(latencyMs)];
  const child = spawn(NODE, args, { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise<string>((res, rej) => {
    child.once("error", rej);
    child.stdout.once("data", (d: Buffer) => res(d.toString().trim()));
  });
  return { url, stop: () => child.kill() };
}

// ---------------------------------------------------------------------------------------------------
// Where a profile's samples went: each sample goes to the nearest frame (from the leaf up) in a part
// of the SDK we name; samples with no SDK frame are the event loop's own (socket reads, HTTP parsing).

const PARTS: [string, RegExp][] = [
  // The payload's SHA-256 (@smithy/core's checksum submodule) is SigV4's: SQS and EC2 have no flexible checksums.
  [
    "signing: SigV4, payload SHA-256, credentials",
    /signature-v4|httpAuthSchemes|httpSigning|submodules\/checksum\/|credential/,
  ],
  [
    "endpoint resolution (rules, cache, QueueUrl check)",
    /submodules\/endpoints\/|endpoint\/|middleware-sdk-sqs/,
  ],
  ["retry (strategy, invocation id, attempt headers)", /submodules\/retry\//],
  ["user agent, host header, recursion detection", /@aws-sdk\/core\/dist-cjs\/submodules\/client\//],
  [
    "schema and protocol code: serialisation, parsing, HTTP request objects, URI escaping",
    /submodules\/(schema|protocols|serde|cbor)\/|@aws-sdk\/core\/dist-cjs\/submodules\/protocols|xml|schemas/,
  ],
  [
    "SDK client: send, command, middleware stack",
    /submodules\/(client|transport)\/|@smithy\/core\/dist-cjs\/index|client-sqs|client-ec2/,
  ],
  ["HTTP handler (@smithy/node-http-handler) and node:http it calls", /node-http-handler|fetch-http-handler/],
  ["driftless (client config, ClientCache, observe, answer checks)", /\/shared\//],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

function analyse(file: string): Record<string, number> {
  const profile = JSON.parse(readFileSync(file, "utf8")) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const partOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partOf.get(id);
    if (known) return known;
    const n = byId.get(id);
    let part: string;
    if (!n) part = "(unknown)";
    else if (["(idle)", "(program)", "(garbage collector)", "(root)"].includes(n.callFrame.functionName))
      part = n.callFrame.functionName;
    else {
      const hit = PARTS.find(([, re]) => re.test(n.callFrame.url));
      const up = parent.get(id);
      part = hit
        ? hit[0]
        : up === undefined
          ? "node:http from the event loop: socket writes and reads, HTTP parser, timers"
          : classify(up);
      if (part === "(root)")
        part = "node:http from the event loop: socket writes and reads, HTTP parser, timers";
    }
    partOf.set(id, part);
    return part;
  };
  const ms: Record<string, number> = {};
  profile.samples.forEach((id, i) => {
    const part = classify(id);
    ms[part] = (ms[part] ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000;
  });
  return ms;
}

// ---------------------------------------------------------------------------------------------------
// The orchestrator.

function clientArgs(front: string, variant: string, calls: number, concurrency: number) {
  return [
    SELF,
    "--client",
    variant,
    "--endpoint",
    front,
    "--calls",
    String(calls),
    "--concurrency",
    String(concurrency),
  ];
}

function measured(out: string): ClientResult {
  const line = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(line) as ClientResult;
}

/** Instructions per call, from one run under callgrind: (measured − empty) ÷ calls (see runClient). */
function callgrindPerCall(
  args: string[],
  calls: number,
  dir: string,
): { perCall: number; measured: number; empty: number } {
  const out = join(dir, "callgrind.out");
  const r = spawnSync("valgrind", ["--tool=callgrind", `--callgrind-out-file=${out}`, NODE, ...args], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, SDK_CPU_CALLGRIND: "1" },
  });
  if (r.status !== 0) throw new Error(`callgrind failed: ${r.stderr.slice(-2000)}`);
  const summary = (file: string) => {
    const m = /^summary: (\d+)$/m.exec(readFileSync(file, "utf8"));
    if (!m) throw new Error(`no summary in ${file}`);
    return Number(m[1]);
  };
  const empty = summary(`${out}.1`);
  const measured = summary(`${out}.2`);
  return { perCall: Math.round((measured - empty) / calls), measured, empty };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? ((s[Math.floor((s.length - 1) / 2)] ?? 0) + (s[Math.ceil((s.length - 1) / 2)] ?? 0)) / 2
    : 0;
};

async function orchestrate(o: {
  endpoint: string;
  calls: number;
  runs: number;
  variants: string[];
  concurrency: number;
  callgrind: boolean;
  profile: string | undefined;
  latencyMs: number;
}) {
  const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const front = await startFront(o.endpoint, o.latencyMs);
  const started = { at: new Date().toISOString(), load: load(), moto: o.endpoint, latencyMs: o.latencyMs };
  console.log(JSON.stringify({ ...started, node: process.version }));
  try {
    for (const variant of o.variants) {
      const runs: ClientResult[] = [];
      for (let r = 0; r < o.runs; r++) {
        const p = spawnSync(NODE, clientArgs(front.url, variant, o.calls, o.concurrency), {
          encoding: "utf8",
        });
        if (p.status !== 0) throw new Error(`${variant}: ${p.stderr.slice(-2000)}`);
        runs.push(measured(p.stdout));
      }
      const cpu = runs.map((r) => r.cpuUsPerCall);
      const row: Record<string, unknown> = {
        variant,
        concurrency: o.concurrency,
        calls: o.calls,
        runs: o.runs,
        cpuUsPerCallMedian: median(cpu),
        cpuUsPerCallMin: Math.min(...cpu),
        cpuUsPerCall: cpu,
        systemUsPerCallMedian: median(runs.map((r) => r.systemUsPerCall)),
        wallMsPerCallMedian: median(runs.map((r) => r.wallMsPerCall)),
        load: load(),
      };
      if (o.callgrind) {
        const dir = mkdtempSync(join(tmpdir(), "sdk-cpu-"));
        try {
          const { perCall, measured, empty } = callgrindPerCall(
            clientArgs(front.url, variant, o.calls, o.concurrency),
            o.calls,
            dir,
          );
          row.instructionsPerCall = perCall;
          row.callgrindIr = { measured, empty };
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
      if (o.profile) {
        mkdirSync(o.profile, { recursive: true });
        const file = resolve(o.profile, `${variant}-c${o.concurrency}.cpuprofile`);
        const args = [...clientArgs(front.url, variant, o.calls, o.concurrency), "--profile-out", file];
        const p = spawnSync(NODE, args, { encoding: "utf8" });
        if (p.status !== 0) throw new Error(`${variant} (profiled): ${p.stderr.slice(-2000)}`);
        const ms = analyse(file);
        const busy = Object.entries(ms).filter(([k]) => k !== "(idle)");
        const total = busy.reduce((s, [, v]) => s + v, 0);
        row.profile = Object.fromEntries(
          busy.sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, `${((100 * v) / total).toFixed(1)}%`]),
        );
        row.profileFile = file;
      }
      console.log(JSON.stringify(row));
    }
  } finally {
    front.stop();
  }
}

const { values } = parseArgs({
  options: {
    endpoint: { type: "string" },
    calls: { type: "string", default: "2000" },
    runs: { type: "string", default: "5" },
    variants: { type: "string", default: "observe,sqs" },
    concurrency: { type: "string", default: "1" },
    callgrind: { type: "boolean", default: false },
    profile: { type: "string" },
    client: { type: "string" },
    front: { type: "string" },
    analyse: { type: "string" },
    "profile-out": { type: "string" },
    "latency-ms": { type: "string", default: "0" },
  },
});
const endpoint = values.endpoint ?? `http://127.0.0.1:${process.env.DRIFTLESS_PORT_MOTO ?? 15000}`;
if (values.front) await runFront(values.front, Number(values["latency-ms"]));
else if (values.analyse) console.log(JSON.stringify(analyse(values.analyse), null, 1));
else if (values.client)
  await runClient(
    endpoint,
    values.client,
    Number(values.calls),
    Number(values.concurrency),
    values["profile-out"],
  );
else
  await orchestrate({
    endpoint,
    calls: Number(values.calls),
    runs: Number(values.runs),
    variants: (values.variants ?? "").split(",").filter(Boolean),
    concurrency: Number(values.concurrency),
    callgrind: values.callgrind ?? false,
    profile: values.profile,
    latencyMs: Number(values["latency-ms"]),
  });
