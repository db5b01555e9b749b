// Wire-protocol fake of the Google Cloud Storage JSON API (buckets only), so the real
// @google-cloud/storage SDK runs against it unchanged via `apiEndpoint` or STORAGE_EMULATOR_HOST.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { type FakeAsset, labelsOf } from "./gcp-assets.ts";

export interface GcsFakeOptions {
  port: number;
  host?: string;
}

export interface FakeServer {
  url: string;
  /** Every bucket, for the Cloud Asset fake's index (also at `/__fake/assets`). */
  assets(): FakeAsset[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

interface Bucket {
  project: string;
  doc: Json;
}

const STORAGE_CLASSES = new Set([
  "STANDARD",
  "NEARLINE",
  "COLDLINE",
  "ARCHIVE",
  "MULTI_REGIONAL",
  "REGIONAL",
  "DURABLE_REDUCED_AVAILABILITY",
]);
const MULTI_REGIONS = new Set(["US", "EU", "ASIA"]);
const DUAL_REGIONS = new Set(["NAM4", "EUR4", "EUR5", "EUR7", "EUR8", "ASIA1"]);
// Writable bucket fields; everything else in a request body is output-only and ignored, as GCS does.
const WRITABLE = new Set([
  "labels",
  "versioning",
  "storageClass",
  "lifecycle",
  "cors",
  "retentionPolicy",
  "iamConfiguration",
  "website",
  "logging",
  "defaultEventBasedHold",
  "billing",
  "autoclass",
  "encryption",
  "softDeletePolicy",
  "rpo",
  "acl",
  "defaultObjectAcl",
]);
const CREATE_ONLY = new Set([
  "location",
  "customPlacementConfig",
  "hierarchicalNamespace",
  "objectRetention",
]);

class GcsError extends Error {
  status: number;
  reason: string;
  extra: Json;
  constructor(status: number, reason: string, message: string, extra: Json = {}) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.extra = extra;
  }
}

const notFound = () => new GcsError(404, "notFound", "The specified bucket does not exist.");
const preconditionFailed = () =>
  new GcsError(412, "conditionNotMet", "Precondition Failed", {
    locationType: "header",
    location: "If-Match",
  });
const invalid = (message: string) => new GcsError(400, "invalid", message);

function validBucketName(name: string): boolean {
  if (!/^[a-z0-9][a-z0-9._-]*[a-z0-9]$/.test(name)) return false;
  const parts = name.split(".");
  if (name.length > (parts.length > 1 ? 222 : 63) || name.length < 3) return false;
  if (parts.some((p) => p.length === 0 || p.length > 63)) return false;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return false;
  return !name.startsWith("goog") && !/g[o0]{2}g[l1]e/.test(name);
}

function validLabels(labels: unknown): boolean {
  if (labels === undefined || labels === null) return true;
  if (typeof labels !== "object" || Array.isArray(labels)) return false;
  return Object.entries(labels).every(
    ([k, v]) =>
      /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u.test(k) &&
      (v === null || (typeof v === "string" && /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u.test(v))),
  );
}

// RFC 7396 JSON merge patch: GCS PATCH semantics, so `labels: {k: null}` removes label k.
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const out: Json =
    target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// GCS bucket etags are base64 of a protobuf varint field 1 holding the metageneration ("CAE=" for 1).
function etagFor(metageneration: number): string {
  const bytes = [0x08];
  let n = metageneration;
  while (n >= 0x80) {
    bytes.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes).toString("base64");
}

// A stable 12-digit project number per project id, like GCS's numeric `projectNumber`.
const projectNumber = (project: string) =>
  (BigInt(`0x${createHash("sha256").update(project).digest("hex").slice(0, 15)}`) % 10n ** 12n)
    .toString()
    .padStart(12, "1");

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as Json;
  } catch {
    // falls through to the parse error below
  }
  throw new GcsError(400, "parseError", "Parse Error");
}

function pick(body: Json, allowed: Set<string>): Json {
  return Object.fromEntries(Object.entries(body).filter(([k]) => allowed.has(k)));
}

export async function startGcsFake(opts: GcsFakeOptions): Promise<FakeServer> {
  const host = opts.host ?? "127.0.0.1";
  const buckets = new Map<string, Bucket>();
  let counters: Record<string, number> = {};
  let baseUrl = "";

  const send = (res: ServerResponse, status: number, body?: unknown) => {
    const text = body === undefined ? "" : JSON.stringify(body);
    res.writeHead(status, {
      ...(text ? { "content-type": "application/json; charset=UTF-8" } : {}),
      "content-length": String(Buffer.byteLength(text)),
    });
    res.end(text);
  };

  const checkMetageneration = (q: URLSearchParams, doc: Json, isRead: boolean) => {
    const mg = doc["metageneration"];
    const match = q.get("ifMetagenerationMatch");
    const notMatch = q.get("ifMetagenerationNotMatch");
    if (match !== null && match !== mg) throw preconditionFailed();
    if (notMatch !== null && notMatch === mg) {
      throw isRead ? new GcsError(304, "notModified", "Not Modified") : preconditionFailed();
    }
  };

  const finalise = (doc: Json) => {
    for (const key of ["labels", "versioning"]) {
      const v = doc[key];
      if (v === undefined || (v !== null && typeof v === "object" && Object.keys(v).length === 0))
        delete doc[key];
    }
  };

  const insert = async (req: IncomingMessage, res: ServerResponse, q: URLSearchParams) => {
    const project = q.get("project");
    if (!project) throw new GcsError(400, "required", "Required parameter: project");
    const body = await readJson(req);
    const name = body["name"];
    if (typeof name !== "string" || name === "") throw new GcsError(400, "required", "Required");
    if (!validBucketName(name)) throw invalid(`Invalid bucket name: '${name}'`);
    const existing = buckets.get(name);
    if (existing) {
      throw new GcsError(
        409,
        "conflict",
        existing.project === project
          ? "Your previous request to create the named bucket succeeded and you already own it."
          : "The requested bucket name is not available. The bucket namespace is shared by all users of the system. Please select a different name and try again.",
      );
    }
    if (!validLabels(body["labels"])) throw invalid("Invalid argument.");
    const storageClass = (body["storageClass"] as string | undefined)?.toUpperCase() ?? "STANDARD";
    if (!STORAGE_CLASSES.has(storageClass)) throw invalid("Invalid argument.");
    const location = String(body["location"] ?? "US").toUpperCase();
    const locationType = MULTI_REGIONS.has(location)
      ? "multi-region"
      : DUAL_REGIONS.has(location) || body["customPlacementConfig"]
        ? "dual-region"
        : "region";
    const now = new Date().toISOString();
    const base: Json = {
      kind: "storage#bucket",
      selfLink: `${baseUrl}/storage/v1/b/${name}`,
      id: name,
      name,
      projectNumber: projectNumber(project),
      metageneration: "1",
      location,
      storageClass,
      etag: etagFor(1),
      timeCreated: now,
      updated: now,
      softDeletePolicy: { retentionDurationSeconds: "604800", effectiveTime: now },
      iamConfiguration: {
        bucketPolicyOnly: { enabled: false },
        uniformBucketLevelAccess: { enabled: false },
        publicAccessPrevention: "inherited",
      },
      locationType,
      ...(locationType === "region" ? {} : { rpo: "DEFAULT" }),
    };
    const doc = mergePatch(base, { ...pick(body, CREATE_ONLY), ...pick(body, WRITABLE) }) as Json;
    doc["location"] = location;
    doc["storageClass"] = storageClass;
    finalise(doc);
    buckets.set(name, { project, doc });
    send(res, 200, doc);
  };

  const list = (res: ServerResponse, q: URLSearchParams) => {
    const project = q.get("project");
    if (!project) throw new GcsError(400, "required", "Required parameter: project");
    const prefix = q.get("prefix") ?? "";
    const all = [...buckets.values()]
      .filter((b) => b.project === project && (b.doc["name"] as string).startsWith(prefix))
      .map((b) => b.doc)
      .sort((a, b) => ((a["name"] as string) < (b["name"] as string) ? -1 : 1));
    const start = Number(q.get("pageToken") ?? 0) || 0;
    const max = Math.min(Number(q.get("maxResults") ?? 1000) || 1000, 1000);
    const items = all.slice(start, start + max);
    const body: Json = { kind: "storage#buckets" };
    // GCS omits `items` entirely when there are none.
    if (items.length > 0) body["items"] = items;
    if (start + max < all.length) body["nextPageToken"] = String(start + max);
    send(res, 200, body);
  };

  const patch = async (req: IncomingMessage, res: ServerResponse, q: URLSearchParams, bucket: Bucket) => {
    const body = pick(await readJson(req), WRITABLE);
    checkMetageneration(q, bucket.doc, false);
    if (!validLabels(body["labels"])) throw invalid("Invalid argument.");
    if (typeof body["storageClass"] === "string") {
      body["storageClass"] = body["storageClass"].toUpperCase();
      if (!STORAGE_CLASSES.has(body["storageClass"] as string)) throw invalid("Invalid argument.");
    }
    const doc = mergePatch(bucket.doc, body) as Json;
    const mg = Number(doc["metageneration"]) + 1;
    doc["metageneration"] = String(mg);
    doc["etag"] = etagFor(mg);
    doc["updated"] = new Date().toISOString();
    finalise(doc);
    bucket.doc = doc;
    send(res, 200, doc);
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(`http://fake${req.url ?? "/"}`);
    const method = req.method ?? "GET";
    const q = url.searchParams;
    // The SDK uses `${apiEndpoint}/storage/v1`, but STORAGE_EMULATOR_HOST is used verbatim as the base.
    const path = url.pathname.replace(/^\/storage\/v1(?=\/|$)/, "");
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);

    if (seg[0] === "__fake") {
      if (seg[1] === "stats" && method === "GET") {
        const total = Object.values(counters).reduce((a, b) => a + b, 0);
        return send(res, 200, { requests: counters, total });
      }
      if (seg[1] === "assets" && method === "GET") return send(res, 200, { assets: assets() });
      if (seg[1] === "reset" && method === "POST") {
        counters = {};
        return send(res, 200, { reset: true });
      }
    }
    if (seg[0] !== "b" || seg.length > 2) {
      counters[`${method} unknown`] = (counters[`${method} unknown`] ?? 0) + 1;
      throw new GcsError(501, "notImplemented", `The GCS fake does not implement ${method} ${url.pathname}.`);
    }
    counters[`${method} buckets`] = (counters[`${method} buckets`] ?? 0) + 1;
    const name = seg[1];
    if (name === undefined) {
      if (method === "POST") return insert(req, res, q);
      if (method === "GET") return list(res, q);
      throw new GcsError(405, "methodNotAllowed", "Method not allowed.");
    }
    const bucket = buckets.get(name);
    if (!bucket) throw notFound();
    switch (method) {
      case "GET":
        checkMetageneration(q, bucket.doc, true);
        return send(res, 200, bucket.doc);
      case "PATCH":
        return patch(req, res, q, bucket);
      case "DELETE":
        checkMetageneration(q, bucket.doc, false);
        buckets.delete(name);
        return send(res, 204);
      default:
        throw new GcsError(405, "methodNotAllowed", "Method not allowed.");
    }
  };

  // Cloud Asset names a bucket `//storage.googleapis.com/<bucket>`, its location lower-case.
  const assets = (): FakeAsset[] =>
    [...buckets.values()].map(({ project, doc }) => ({
      name: `//storage.googleapis.com/${String(doc["name"])}`,
      assetType: "storage.googleapis.com/Bucket",
      project,
      location: String(doc["location"] ?? "").toLowerCase(),
      labels: labelsOf(doc["labels"]),
      data: doc,
    }));

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof GcsError) {
        if (err.status === 304) return send(res, 304);
        const detail = { message: err.message, domain: "global", reason: err.reason, ...err.extra };
        return send(res, err.status, { error: { code: err.status, message: err.message, errors: [detail] } });
      }
      send(res, 500, { error: { code: 500, message: String(err), errors: [] } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url: baseUrl,
    assets,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { port: { type: "string", default: "0" }, host: { type: "string" } },
  });
  const fake = await startGcsFake({
    port: Number(values.port),
    ...(values.host ? { host: values.host } : {}),
  });
  process.stdout.write(`${JSON.stringify({ ready: true, url: fake.url })}\n`);
  const stop = () => void fake.close().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
