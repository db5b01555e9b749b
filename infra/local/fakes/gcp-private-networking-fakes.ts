// The three wire fakes Cloud SQL private IP needs, started together and wired as Google's APIs are: the
// Service Networking fake checks Compute's networks and ranges and peers the network, and the Cloud SQL
// fake refuses a private IP in a network without that peering. Tests start them in-process; the local
// stack runs this file (`--sql-port`, `--compute-port`, `--service-networking-port`).
import { parseArgs } from "node:util";
import { type ComputeFake, type ComputeFakeOptions, startComputeFake } from "./gcp-compute-fake.ts";
import { type ServiceNetworkingFake, startServiceNetworkingFake } from "./gcp-servicenetworking-fake.ts";
import { type SqlFake, type SqlFakeOptions, startSqlFake } from "./gcp-sql-fake.ts";

export interface GcpPrivateNetworkingFakes {
  sql: SqlFake;
  compute: ComputeFake;
  serviceNetworking: ServiceNetworkingFake;
  /** The ProviderConfig endpoint block that points a GCP ProviderConfig at these fakes. */
  endpoint: { sql: string; compute: string; serviceNetworking: string };
  close(): Promise<void>;
}

export async function startGcpPrivateNetworkingFakes(
  opts: {
    sql?: Omit<SqlFakeOptions, "peered">;
    compute?: ComputeFakeOptions;
    serviceNetworking?: { port?: number; operationPolls?: number };
  } = {},
): Promise<GcpPrivateNetworkingFakes> {
  const compute = await startComputeFake(opts.compute);
  const serviceNetworking = await startServiceNetworkingFake(compute, opts.serviceNetworking);
  const sql = await startSqlFake({
    ...opts.sql,
    peered: (network) => {
      const [, project, , , name] = network.split("/");
      return ((compute.network(project ?? "", name ?? "")?.peerings ?? []) as unknown[]).length > 0;
    },
  });
  return {
    sql,
    compute,
    serviceNetworking,
    endpoint: { sql: sql.url, compute: compute.url, serviceNetworking: serviceNetworking.url },
    close: async () => {
      await Promise.all([sql.close(), serviceNetworking.close(), compute.close()]);
    },
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      "sql-port": { type: "string", default: "0" },
      "compute-port": { type: "string", default: "0" },
      "service-networking-port": { type: "string", default: "0" },
    },
  });
  const fakes = await startGcpPrivateNetworkingFakes({
    sql: { port: Number(values["sql-port"]) },
    compute: { port: Number(values["compute-port"]) },
    serviceNetworking: { port: Number(values["service-networking-port"]) },
  });
  process.stdout.write(`${JSON.stringify({ ready: true, ...fakes.endpoint })}\n`);
  const stop = () => void fakes.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
