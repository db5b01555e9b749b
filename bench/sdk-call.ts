// CPU of one AWS SDK call as the providers make it (ClientCache + sdkOptions), against a moto server:
// `node bench/sdk-call.ts http://127.0.0.1:PORT [calls] [variant]` prints the function's own CPU per call
// (moto runs in its own process, so process.cpuUsage() holds only the client's work).
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { ClientCache, sdkOptions } from "../shared/providers/aws/config.ts";

const [endpoint = "http://127.0.0.1:5000", callsText = "2000", variant = "default"] = process.argv.slice(2);
const calls = Number(callsText);
const credentials = { accessKeyId: "testing", secretAccessKey: "testing" };
const config = { region: "us-east-1", endpoint, credentials, cacheKey: `bench/${variant}` };
// Variant "cacheMiddleware": the SDK's documented option to resolve the middleware stack once per command
// class (tried and reverted, docs/performance.md), against the clients the providers build ("default").
const clients = new ClientCache((c) =>
  variant === "cacheMiddleware"
    ? new SQSClient({ ...sdkOptions(c), cacheMiddleware: true })
    : new SQSClient(sdkOptions(c)),
);
const client = clients.get(config);
const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: "sdk-call-bench" }));
const call = () => client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
for (let n = 0; n < 200; n++) await call(); // warm-up: JIT, sockets
const cpu = process.cpuUsage();
const wall = performance.now();
for (let n = 0; n < calls; n++) await call();
const used = process.cpuUsage(cpu);
const ms = (used.user + used.system) / 1000;
console.log(
  JSON.stringify({
    variant,
    calls,
    cpuMsPerCall: +(ms / calls).toFixed(3),
    userMsPerCall: +(used.user / 1000 / calls).toFixed(3),
    systemMsPerCall: +(used.system / 1000 / calls).toFixed(3),
    wallMsPerCall: +((performance.now() - wall) / calls).toFixed(3),
  }),
);
client.destroy();
