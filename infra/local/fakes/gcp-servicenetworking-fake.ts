// Wire-protocol fake of the Service Networking API v1 (private services connections), beside the
// Compute fake whose networks and VPC_PEERING addresses it checks. No emulator exists. What it keeps of
// the real API:
// - URL shapes `/v1/services/{service}/connections` (list needs `?network=`), `connections/{name}`
//   PATCH with `updateMask` and `force`, `connections/{name}:deleteConnection`, `/v1/operations/{id}`.
// - Writes answer a google.longrunning.Operation `{name: "operations/…", done}`, done after polls; a
//   failed one carries `error: {code, message}`; reads of the operation, or of the network's connections,
//   are the polls. A created connection is listed at once (and gone again if its operation fails); its peering
//   (`servicenetworking-googleapis-com`) shows on the network when the operation is done, and goes
//   when a delete is done.
// - Networks are `projects/{project id or number}/global/networks/{name}`; reserved ranges must be
//   VPC_PEERING addresses of that network (400 FAILED_PRECONDITION otherwise); a second create for a
//   network is refused as the API does.
import { randomBytes } from "node:crypto";
import type { ComputeFake } from "./gcp-compute-fake.ts";
import {
  Countdown,
  type FakeHttpServer,
  type FakeRequest,
  GoogleApiError,
  type Json,
  startFakeHttp,
} from "./gcp-fake-http.ts";

export const SERVICE = "servicenetworking.googleapis.com";
export const PEERING = "servicenetworking-googleapis-com";

export interface ServiceNetworkingFakeOptions {
  port?: number;
  /** Reads an operation takes to be done (default 1). */
  operationPolls?: number;
}

export interface ServiceNetworkingFake extends FakeHttpServer {
  connection(network: string): Json | undefined;
  /** The next operation on this network ends with this error (e.g. a range exhausted). */
  failNextOperation(network: string, code: number, message: string): void;
}

const NETWORK = /^projects\/([^/]+)\/global\/networks\/([^/]+)$/;

export async function startServiceNetworkingFake(
  compute: ComputeFake,
  opts: ServiceNetworkingFakeOptions = {},
): Promise<ServiceNetworkingFake> {
  const connections = new Map<string, Json>();
  const operations = new Map<
    string,
    { doc: Json; network: string; countdown: Countdown; finish: () => void }
  >();
  const failures = new Map<string, { code: number; message: string }>();

  const parseNetwork = (network: unknown) => {
    const m = NETWORK.exec(String(network ?? ""));
    if (!m)
      throw new GoogleApiError(
        400,
        "badRequest",
        `Invalid network: "${String(network ?? "")}".`,
        "INVALID_ARGUMENT",
      );
    const project = m[1] ?? "";
    const name = m[2] ?? "";
    if (!compute.network(project, name))
      throw new GoogleApiError(
        400,
        "badRequest",
        `Network ${String(network)} was not found.`,
        "FAILED_PRECONDITION",
      );
    return { project, name, key: `projects/${project}/global/networks/${name}` };
  };

  const checkRanges = (project: string, network: string, ranges: unknown) => {
    if (!Array.isArray(ranges) || ranges.length === 0)
      throw new GoogleApiError(
        400,
        "badRequest",
        "At least one allocated IP range is required.",
        "INVALID_ARGUMENT",
      );
    const link = compute.network(project, network)?.selfLink;
    for (const r of ranges) {
      const addr = compute.address(project, String(r));
      if (addr?.purpose !== "VPC_PEERING" || addr.network !== link)
        throw new GoogleApiError(
          400,
          "badRequest",
          `Allocated IP range '${String(r)}' not found in network.`,
          "FAILED_PRECONDITION",
        );
    }
  };

  const tick = (op: { doc: Json; countdown: Countdown; finish: () => void }) => {
    if (!op.doc.done && op.countdown.tick()) {
      op.doc.done = true;
      op.finish();
    }
  };

  const operation = (network: string, finish: () => void, metadata: Json, onError?: () => void): Json => {
    const doc: Json = {
      name: `operations/pssn.p24-${randomBytes(8).toString("hex")}`,
      metadata,
      done: false,
    };
    const failure = failures.get(network);
    failures.delete(network);
    operations.set(String(doc.name), {
      doc,
      network,
      countdown: new Countdown(opts.operationPolls ?? 1),
      finish: () => {
        if (failure) {
          doc.error = { code: failure.code, message: failure.message, details: [] };
          onError?.();
          return;
        }
        finish();
      },
    });
    return doc;
  };

  const peer = (project: string, name: string, on: boolean) =>
    compute.setPeering(
      project,
      name,
      on
        ? {
            name: PEERING,
            network:
              "https://www.googleapis.com/compute/v1/projects/tenant-project/global/networks/servicenetworking",
            state: "ACTIVE",
            stateDetails: "[2000] Connected.",
            autoCreateRoutes: true,
            exchangeSubnetRoutes: true,
            exportCustomRoutes: false,
            importCustomRoutes: false,
            stackType: "IPV4_ONLY",
          }
        : undefined,
    );

  const route = (req: FakeRequest): Json | undefined => {
    const { seg, method, body, query } = req;
    if (seg[0] === "operations" && seg[1] && method === "GET") {
      const op = operations.get(`operations/${seg[1]}`);
      if (!op)
        throw new GoogleApiError(404, "notFound", `Operation operations/${seg[1]} not found.`, "NOT_FOUND");
      tick(op);
      return op.doc;
    }
    if (seg[0] !== "services" || seg[2] !== "connections") return undefined;
    if (seg[1] !== SERVICE)
      throw new GoogleApiError(
        403,
        "forbidden",
        `Service ${seg[1]} is not a producer of private services.`,
        "PERMISSION_DENIED",
      );
    const target = seg[3];
    if (target === undefined && method === "GET") {
      const net = parseNetwork(query.get("network") ?? "");
      // Reading the network's connections is a poll of its operations too.
      for (const op of operations.values()) if (op.network === net.key) tick(op);
      const c = connections.get(net.key);
      return c ? { connections: [c] } : {};
    }
    if (target === undefined && method === "POST") {
      const net = parseNetwork(body.network);
      if (connections.has(net.key))
        throw new GoogleApiError(
          400,
          "badRequest",
          "Cannot modify allocated ranges in CreateConnection. Please use UpdateConnection.",
          "FAILED_PRECONDITION",
        );
      checkRanges(net.project, net.name, body.reservedPeeringRanges);
      const conn: Json = {
        network: net.key,
        reservedPeeringRanges: [...(body.reservedPeeringRanges as string[])],
        peering: PEERING,
        service: `services/${SERVICE}`,
      };
      connections.set(net.key, conn);
      return operation(
        net.key,
        () => peer(net.project, net.name, true),
        { "@type": "type.googleapis.com/google.protobuf.Empty" },
        () => connections.delete(net.key),
      );
    }
    if (target?.endsWith(":deleteConnection") && method === "POST") {
      const net = parseNetwork(body.consumerNetwork);
      if (!connections.has(net.key))
        throw new GoogleApiError(
          404,
          "notFound",
          `Connection for network ${net.key} not found.`,
          "NOT_FOUND",
        );
      return operation(
        net.key,
        () => {
          connections.delete(net.key);
          peer(net.project, net.name, false);
        },
        {},
      );
    }
    if (target !== undefined && method === "PATCH") {
      const net = parseNetwork(body.network);
      const conn = connections.get(net.key);
      if (!conn)
        throw new GoogleApiError(
          404,
          "notFound",
          `Connection for network ${net.key} not found.`,
          "NOT_FOUND",
        );
      if (query.get("updateMask") !== "reservedPeeringRanges")
        throw new GoogleApiError(
          400,
          "badRequest",
          "updateMask must be reservedPeeringRanges.",
          "INVALID_ARGUMENT",
        );
      checkRanges(net.project, net.name, body.reservedPeeringRanges);
      const removed = (conn.reservedPeeringRanges as string[]).some(
        (r) => !(body.reservedPeeringRanges as string[]).includes(r),
      );
      if (removed && query.get("force") !== "true")
        throw new GoogleApiError(
          400,
          "badRequest",
          "Removing an allocated range needs force=true.",
          "FAILED_PRECONDITION",
        );
      return operation(
        net.key,
        () => {
          conn.reservedPeeringRanges = [...(body.reservedPeeringRanges as string[])];
        },
        {},
      );
    }
    return undefined;
  };

  const server = await startFakeHttp({
    name: "Service Networking",
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: ["/v1"],
    keyOf: (r) =>
      r.seg[0] === "operations"
        ? `${r.method} operations`
        : `${r.method} connections${r.seg[3]?.includes(":") ? `:${r.seg[3].split(":")[1]}` : ""}`,
    route,
  });
  return Object.assign(server, {
    connection: (network: string) => connections.get(network),
    failNextOperation(network: string, code: number, message: string) {
      failures.set(network, { code, message });
    },
  });
}
