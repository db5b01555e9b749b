// Wire-protocol fake of the Compute Engine API v1: global networks, global addresses and global
// operations, the parts private service access needs. No emulator of Compute Engine exists. What it keeps
// of the real API:
// - URL shapes `/compute/v1/projects/{p}/global/{networks|addresses|operations}[/{name}]`.
// - Writes answer a `compute#operation` PENDING → RUNNING → DONE, moved on by polls (reads of the
//   operation or of its target), never by the clock. An inserted resource is 404 until its operation is
//   DONE; a deleted one is there until then. Operations can be listed with a filter on targetLink
//   (`targetLink eq '<regex>'` or `targetLink = "<link>"`).
// - Errors in Google's JSON shape: 409 alreadyExists (also while the insert runs), 404 notFound, 400
//   resourceInUseByAnotherResource when a network still has addresses or peerings, 429
//   rateLimitExceeded (failNext), and quota errors as Compute reports them: an operation DONE with
//   `QUOTA_EXCEEDED` (failNextInsert).
import { createHash, randomBytes } from "node:crypto";
import { computeAsset, type FakeAsset } from "./gcp-assets.ts";
import {
  Countdown,
  type FakeHttpServer,
  type FakeRequest,
  GoogleApiError,
  type Json,
  now,
  startFakeHttp,
} from "./gcp-fake-http.ts";

export interface ComputeFakeOptions {
  port?: number;
  /** Reads an operation takes to be DONE (default 1). */
  operationPolls?: number;
}

interface Operation {
  project: string;
  doc: Json;
  countdown: Countdown;
  finish: () => void;
}

export interface ComputeFake extends FakeHttpServer {
  network(project: string, name: string): Json | undefined;
  address(project: string, name: string): Json | undefined;
  /** Every network and global address as they stand, for the Cloud Asset fake's index. */
  assets(): FakeAsset[];
  /** Makes a network behind driftless's back (as if made in the console), at once. */
  seedNetwork(project: string, name: string, body?: Json): Json;
  /** Adds or removes a peering on a network (the service networking fake's side of a connection). */
  setPeering(project: string, network: string, peering: Json | undefined): void;
  /** The next insert named `name` ends DONE with this error (e.g. QUOTA_EXCEEDED) and leaves nothing. */
  failNextInsert(name: string, code: string, message: string): void;
}

const NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const numericId = (s: string) =>
  (BigInt(`0x${createHash("sha256").update(s).digest("hex").slice(0, 15)}`) % 10n ** 19n).toString();

export async function startComputeFake(opts: ComputeFakeOptions = {}): Promise<ComputeFake> {
  const networks = new Map<string, Json>();
  const addresses = new Map<string, Json>();
  const operations = new Map<string, Operation>();
  const inserting = new Set<string>();
  const failures = new Map<string, { code: string; message: string }>();
  let base = "";
  let nextBlock = 16;
  const k = (p: string, n: string) => `${p}/${n}`;
  const selfLink = (p: string, coll: string, n: string) =>
    `${base}/compute/v1/projects/${p}/global/${coll}/${n}`;
  const notFound = (p: string, coll: string, n: string) =>
    new GoogleApiError(404, "notFound", `The resource 'projects/${p}/global/${coll}/${n}' was not found`);

  const settle = (op: Operation) => {
    if (op.doc.status === "DONE") return;
    if (op.countdown.tick()) {
      op.doc.status = "DONE";
      op.doc.progress = 100;
      op.doc.endTime = now();
      op.finish();
    } else op.doc.status = "RUNNING";
  };
  const settleFor = (link: string) => {
    for (const op of operations.values()) if (op.doc.targetLink === link) settle(op);
  };

  const operation = (p: string, type: string, targetLink: string, finish: () => void): Json => {
    const name = `operation-${Date.now()}-${randomBytes(6).toString("hex")}-${randomBytes(4).toString("hex")}`;
    const doc: Json = {
      kind: "compute#operation",
      id: numericId(name),
      name,
      operationType: type,
      targetLink,
      targetId: numericId(targetLink),
      status: "PENDING",
      user: "driftless@fake.iam.gserviceaccount.com",
      progress: 0,
      insertTime: now(),
      startTime: now(),
      selfLink: `${base}/compute/v1/projects/${p}/global/operations/${name}`,
    };
    operations.set(k(p, name), {
      project: p,
      doc,
      countdown: new Countdown(opts.operationPolls ?? 1),
      finish,
    });
    return doc;
  };

  /** An insert's operation: the resource appears when it is DONE, or the operation carries the error. */
  const insertOp = (p: string, coll: string, name: string, store: Map<string, Json>, doc: Json) => {
    if (store.has(k(p, name)) || inserting.has(`${coll}/${k(p, name)}`))
      throw new GoogleApiError(
        409,
        "alreadyExists",
        `The resource 'projects/${p}/global/${coll}/${name}' already exists`,
      );
    inserting.add(`${coll}/${k(p, name)}`);
    const failure = failures.get(name);
    failures.delete(name);
    const op = operation(p, "insert", selfLink(p, coll, name), () => {
      inserting.delete(`${coll}/${k(p, name)}`);
      if (failure) {
        op.error = { errors: [{ code: failure.code, message: failure.message }] };
        op.httpErrorStatusCode = 403;
        op.httpErrorMessage = "FORBIDDEN";
        return;
      }
      store.set(k(p, name), doc);
    });
    return op;
  };

  const networkDoc = (p: string, body: Json): Json => {
    const name = String(body.name ?? "");
    if (!NAME.test(name))
      throw new GoogleApiError(
        400,
        "invalid",
        `Invalid value for field 'resource.name': '${name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'`,
      );
    if (body.IPv4Range !== undefined)
      throw new GoogleApiError(400, "invalid", "Legacy networks are not supported by the fake.");
    const auto = body.autoCreateSubnetworks !== false;
    const mtu = body.mtu === undefined ? 1460 : Number(body.mtu);
    if (mtu < 1300 || mtu > 8896)
      throw new GoogleApiError(
        400,
        "invalid",
        `Invalid value for field 'resource.mtu': '${mtu}'. Must be between 1300 and 8896.`,
      );
    const routing = (body.routingConfig ?? {}) as Json;
    const id = numericId(`${p}/${name}/${randomBytes(4).toString("hex")}`);
    return {
      kind: "compute#network",
      id,
      creationTimestamp: now(),
      name,
      ...(body.description !== undefined ? { description: body.description } : {}),
      selfLink: selfLink(p, "networks", name),
      selfLinkWithId: selfLink(p, "networks", id),
      autoCreateSubnetworks: auto,
      subnetworks: auto
        ? ["us-central1", "europe-west1"].map(
            (r) => `${base}/compute/v1/projects/${p}/regions/${r}/subnetworks/${name}`,
          )
        : [],
      routingConfig: { routingMode: routing.routingMode ?? "REGIONAL", bgpBestPathSelectionMode: "LEGACY" },
      mtu,
      networkFirewallPolicyEnforcementOrder: "AFTER_CLASSIC_FIREWALL",
    };
  };

  const networkByLink = (link: string) => {
    const m = /projects\/([^/]+)\/global\/networks\/([^/]+)$/.exec(link);
    return m ? networks.get(k(m[1] ?? "", m[2] ?? "")) : undefined;
  };

  const addressDoc = (p: string, body: Json): Json => {
    const name = String(body.name ?? "");
    if (!NAME.test(name))
      throw new GoogleApiError(400, "invalid", `Invalid value for field 'resource.name': '${name}'.`);
    const purpose = body.purpose;
    const type = body.addressType ?? "EXTERNAL";
    if (purpose === "VPC_PEERING") {
      if (type !== "INTERNAL")
        throw new GoogleApiError(
          400,
          "invalid",
          "Invalid value for field 'resource.addressType': VPC_PEERING addresses must be INTERNAL.",
        );
      const prefix = Number(body.prefixLength);
      if (!Number.isInteger(prefix) || prefix < 8 || prefix > 29)
        throw new GoogleApiError(
          400,
          "invalid",
          `Invalid value for field 'resource.prefixLength': '${String(body.prefixLength)}'.`,
        );
      if (typeof body.network !== "string" || !networkByLink(body.network))
        throw new GoogleApiError(
          400,
          "invalid",
          `Invalid value for field 'resource.network': '${String(body.network)}'. The referenced network resource cannot be found.`,
        );
    } else if (purpose !== undefined) {
      throw new GoogleApiError(
        400,
        "invalid",
        `The fake supports purpose VPC_PEERING only, not ${String(purpose)}.`,
      );
    }
    const address = typeof body.address === "string" ? body.address : `10.${nextBlock++ % 250}.0.0`;
    const network = body.network ? (networkByLink(String(body.network))?.selfLink as string) : undefined;
    return {
      kind: "compute#address",
      id: numericId(`${p}/${name}/${randomBytes(4).toString("hex")}`),
      creationTimestamp: now(),
      name,
      ...(body.description !== undefined ? { description: body.description } : {}),
      address,
      ...(body.prefixLength !== undefined ? { prefixLength: Number(body.prefixLength) } : {}),
      status: "RESERVED",
      selfLink: selfLink(p, "addresses", name),
      addressType: type,
      ...(purpose ? { purpose } : {}),
      ...(network ? { network } : {}),
      labels: body.labels ?? {},
      labelFingerprint: randomBytes(8).toString("base64"),
    };
  };

  const opsList = (p: string, q: URLSearchParams): Json => {
    const filter = q.get("filter") ?? "";
    const regex = /^\(?targetLink eq '(.*)'\)?$/.exec(filter);
    const exact = /^\(?targetLink = "(.*)"\)?$/.exec(filter);
    const items = [...operations.values()]
      .filter((o) => o.project === p)
      .filter((o) => {
        const link = String(o.doc.targetLink);
        if (regex) return new RegExp(`^${regex[1]}$`).test(link);
        if (exact) return link === exact[1];
        return true;
      })
      .map((o) => o.doc);
    return {
      kind: "compute#operationList",
      id: `projects/${p}/global/operations`,
      items,
      selfLink: `${base}/compute/v1/projects/${p}/global/operations`,
    };
  };

  const route = (req: FakeRequest): Json | undefined => {
    const { seg, method, body } = req;
    if (seg[0] !== "projects" || !seg[1] || seg[2] !== "global") return undefined;
    const p = seg[1];
    const coll = seg[3];
    const name = seg[4];
    if (coll === "operations") {
      if (name === undefined && method === "GET") return opsList(p, req.query);
      const op = name ? operations.get(k(p, name)) : undefined;
      if (!op) throw notFound(p, "operations", name ?? "");
      if (method === "GET" || (method === "POST" && seg[5] === "wait")) {
        settle(op);
        return op.doc;
      }
      return undefined;
    }
    if (coll === "networks") {
      if (name === undefined) {
        if (method === "POST") {
          const doc = networkDoc(p, body);
          return insertOp(p, "networks", String(doc.name), networks, doc);
        }
        if (method === "GET")
          return {
            kind: "compute#networkList",
            items: [...networks.entries()].filter(([key]) => key.startsWith(`${p}/`)).map(([, v]) => v),
          };
        return undefined;
      }
      settleFor(selfLink(p, "networks", name));
      const net = networks.get(k(p, name));
      if (!net) throw notFound(p, "networks", name);
      if (method === "GET") return net;
      if (method === "PATCH") {
        if (
          body.autoCreateSubnetworks !== undefined &&
          body.autoCreateSubnetworks !== net.autoCreateSubnetworks
        )
          throw new GoogleApiError(
            400,
            "invalid",
            "Invalid value for field 'resource.autoCreateSubnetworks': use switchToCustomMode.",
          );
        return operation(p, "patch", String(net.selfLink), () => {
          if (body.mtu !== undefined) net.mtu = Number(body.mtu);
          if (body.description !== undefined) net.description = body.description;
          const routing = body.routingConfig as Json | undefined;
          if (routing?.routingMode)
            net.routingConfig = { ...(net.routingConfig as Json), routingMode: routing.routingMode };
        });
      }
      if (method === "DELETE") {
        const used = [...addresses.values()].find((a) => a.network === net.selfLink);
        const peered = ((net.peerings ?? []) as Json[]).length > 0;
        if (used || peered)
          throw new GoogleApiError(
            400,
            "resourceInUseByAnotherResource",
            `The network resource 'projects/${p}/global/networks/${name}' is already being used by '${used ? `projects/${p}/global/addresses/${String(used.name)}` : "a peering"}'`,
            "FAILED_PRECONDITION",
          );
        return operation(p, "delete", String(net.selfLink), () => networks.delete(k(p, name)));
      }
      return undefined;
    }
    if (coll === "addresses") {
      if (name === undefined) {
        if (method === "POST") {
          const doc = addressDoc(p, body);
          return insertOp(p, "addresses", String(doc.name), addresses, doc);
        }
        if (method === "GET")
          return {
            kind: "compute#addressList",
            items: [...addresses.entries()].filter(([key]) => key.startsWith(`${p}/`)).map(([, v]) => v),
          };
        return undefined;
      }
      settleFor(selfLink(p, "addresses", name));
      const addr = addresses.get(k(p, name));
      if (!addr) throw notFound(p, "addresses", name);
      if (method === "GET" && seg[5] === undefined) return addr;
      if (method === "POST" && seg[5] === "setLabels") {
        if (body.labelFingerprint !== addr.labelFingerprint)
          throw new GoogleApiError(
            412,
            "conditionNotMet",
            "Labels fingerprint either invalid or resource labels have changed",
            "FAILED_PRECONDITION",
          );
        return operation(p, "setLabels", String(addr.selfLink), () => {
          addr.labels = body.labels ?? {};
          addr.labelFingerprint = randomBytes(8).toString("base64");
        });
      }
      if (method === "DELETE")
        return operation(p, "delete", String(addr.selfLink), () => addresses.delete(k(p, name)));
      return undefined;
    }
    return undefined;
  };

  // Cloud Asset names the types after Compute's services: Networks, GlobalAddresses.
  const assets = () => [
    ...[...networks.values()].map((d) => computeAsset(String(d.selfLink), "Network", d)),
    ...[...addresses.values()].map((d) => computeAsset(String(d.selfLink), "GlobalAddress", d)),
  ];
  const server = await startFakeHttp({
    name: "Compute Engine",
    assets,
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    prefixes: ["/compute/v1"],
    keyOf: (r) => `${r.method} ${r.seg[3] ?? "unknown"}${r.seg[5] ? `/${r.seg[5]}` : ""}`,
    route,
  });
  base = server.url;
  return Object.assign(server, {
    network: (p: string, n: string) => networks.get(k(p, n)),
    address: (p: string, n: string) => addresses.get(k(p, n)),
    assets,
    seedNetwork(p: string, n: string, body: Json = {}) {
      const doc = networkDoc(p, { ...body, name: n });
      networks.set(k(p, n), doc);
      return doc;
    },
    setPeering(p: string, n: string, peering: Json | undefined) {
      const net = networks.get(k(p, n));
      if (!net) return;
      if (peering) net.peerings = [peering];
      else delete net.peerings;
    },
    failNextInsert(name: string, code: string, message: string) {
      failures.set(name, { code, message });
    },
  });
}
