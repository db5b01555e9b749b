// Refreshes infra/azure/arm-types.json.gz from a git mirror of github.com/Azure/bicep-types-az: for every
// resource type ARM can PUT, its newest stable (non-preview) api-version and, from that version's
// `types.json`, only what the generator needs (property types, the flags Required / ReadOnly /
// WriteOnly / DeployTimeConstant, `sensitive`, the `list*` functions), descriptions cut short.
// The mirror's generated/index.json (a map of `type@version` → `types.json#/n`) is rebuilt here from the
// `ResourceType` entries of the `types.json` files themselves: the same facts, one read.
//
//   node infra/azure/refresh-types.ts <bicep-types-az git dir> [commit]
import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import {
  ARM_TYPES_FILE,
  type ArmData,
  type ArmFile,
  type ArmFunction,
  type ArmProp,
  type ArmResource,
  type ArmType,
  isStableApiVersion,
} from "./types-data.ts";

type Raw = Record<string, unknown> & { $type: string };
const refOf = (r: unknown) =>
  Number(String((r as { $ref?: string } | undefined)?.$ref ?? "").replace("#/", ""));
const MAX_DOC = 160;
const short = (d: unknown) => {
  if (typeof d !== "string" || !d) return undefined;
  const s = d.replace(/\s+/g, " ").trim();
  return s.length <= MAX_DOC ? s : `${s.slice(0, MAX_DOC - 1).replace(/\s+\S*$/, "")}…`;
};

/** Reads many blobs through one `git cat-file --batch`. */
async function readBlobs(gitDir: string, ids: string[], each: (i: number, text: string) => void) {
  const child = spawn("git", ["--git-dir", gitDir, "cat-file", "--batch"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let buf = Buffer.alloc(0);
  let i = 0;
  const done = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const header = buf.subarray(0, nl).toString();
        const size = Number(header.split(" ")[2]);
        if (header.endsWith("missing")) return reject(new Error(`blob missing in the mirror: ${header}`));
        if (buf.length < nl + 1 + size + 1) return;
        each(i++, buf.subarray(nl + 1, nl + 1 + size).toString("utf8"));
        buf = buf.subarray(nl + 1 + size + 1);
      }
    });
    child.on("close", () => resolve());
  });
  child.stdin.end(`${ids.join("\n")}\n`);
  await done;
}

/** One file's types, only those reachable from `roots`, renumbered; the old → new index map. */
function compact(raw: Raw[], roots: number[]): { types: ArmType[]; map: Map<number, number> } {
  const map = new Map<number, number>();
  const order: number[] = [];
  const visit = (i: number) => {
    if (map.has(i) || !raw[i]) return;
    map.set(i, order.length);
    order.push(i);
    const t = raw[i];
    const kids: unknown[] = [];
    if (t.$type === "ObjectType") {
      for (const p of Object.values((t.properties ?? {}) as Record<string, { type: unknown }>))
        kids.push(p.type);
      if (t.additionalProperties) kids.push(t.additionalProperties);
    } else if (t.$type === "DiscriminatedObjectType") {
      for (const p of Object.values((t.baseProperties ?? {}) as Record<string, { type: unknown }>))
        kids.push(p.type);
      kids.push(...Object.values((t.elements ?? {}) as Record<string, unknown>));
    } else if (t.$type === "ArrayType") kids.push(t.itemType);
    else if (t.$type === "UnionType") kids.push(...((t.elements ?? []) as unknown[]));
    for (const k of kids) visit(refOf(k));
  };
  for (const r of roots) visit(r);
  const n = (r: unknown) => map.get(refOf(r)) ?? -1;
  const props = (ps: unknown) =>
    Object.fromEntries(
      Object.entries(
        (ps ?? {}) as Record<string, { type: unknown; flags?: number; description?: string }>,
      ).map(([k, p]) => {
        const doc = short(p.description);
        return [k, (doc ? [n(p.type), p.flags ?? 0, doc] : [n(p.type), p.flags ?? 0]) as ArmProp];
      }),
    );
  const types = order.map((i): ArmType => {
    const t = raw[i] as Raw;
    switch (t.$type) {
      case "StringType":
        return {
          k: "s",
          ...(t.sensitive ? { sens: 1 as const } : {}),
          ...(typeof t.minLength === "number" ? { min: t.minLength } : {}),
          ...(typeof t.maxLength === "number" ? { max: t.maxLength } : {}),
        };
      case "StringLiteralType":
        return { k: "l", v: String(t.value) };
      case "IntegerType":
        return { k: "i" };
      case "BooleanType":
        return { k: "b" };
      case "NullType":
        return { k: "n" };
      case "ArrayType":
        return { k: "arr", of: n(t.itemType) };
      case "UnionType":
        return { k: "u", el: ((t.elements ?? []) as unknown[]).map(n) };
      case "ObjectType":
        return {
          k: "o",
          name: String(t.name ?? ""),
          p: props(t.properties),
          ...(t.additionalProperties ? { ap: n(t.additionalProperties) } : {}),
          ...(t.sensitive ? { sens: 1 as const } : {}),
        };
      case "DiscriminatedObjectType":
        return {
          k: "d",
          name: String(t.name ?? ""),
          disc: String(t.discriminator),
          p: props(t.baseProperties),
          el: Object.fromEntries(
            Object.entries((t.elements ?? {}) as Record<string, unknown>).map(([k, v]) => [k, n(v)]),
          ),
        };
      default:
        return { k: "a" };
    }
  });
  return { types, map };
}

async function main() {
  const gitDir = process.argv[2];
  if (!gitDir) throw new Error("usage: node infra/azure/refresh-types.ts <bicep-types-az git dir> [commit]");
  const git = (...args: string[]) =>
    execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
  const commit = git("rev-parse", process.argv[3] ?? "HEAD").trim();
  const date = git("show", "-s", "--format=%cI", commit).trim();
  const listing = git("ls-tree", "-r", commit, "generated")
    .split("\n")
    .map((l) => /^\d+ blob ([0-9a-f]+)\t(generated\/.+\/types\.json)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({
      id: m[1] as string,
      path: m[2] as string,
      api: (m[2] as string).split("/").at(-2) as string,
    }))
    .filter((f) => isStableApiVersion(f.api));
  // Pass 1: which file holds the newest stable version of each resource type.
  const best = new Map<string, { api: string; file: number; name: string }>();
  await readBlobs(
    gitDir,
    listing.map((f) => f.id),
    (i, text) => {
      const f = listing[i];
      if (!f) return;
      for (const t of JSON.parse(text) as Raw[]) {
        if (t.$type !== "ResourceType" || !Number(t.writableScopes ?? 0)) continue;
        const [name = "", api = ""] = String(t.name).split("@");
        if (!isStableApiVersion(api)) continue;
        const key = name.toLowerCase();
        const have = best.get(key);
        if (!have || api > have.api || (api === have.api && i > have.file))
          best.set(key, { api, file: i, name });
      }
    },
  );
  // Pass 2: the chosen files, reduced to the chosen types.
  const chosenFiles = [...new Set([...best.values()].map((b) => b.file))].sort((a, b) => a - b);
  const files: Record<string, ArmFile> = {};
  const resources: ArmResource[] = [];
  await readBlobs(
    gitDir,
    chosenFiles.map((i) => listing[i]?.id ?? ""),
    (j, text) => {
      const fi = chosenFiles[j] as number;
      const f = listing[fi];
      if (!f) return;
      const raw = JSON.parse(text) as Raw[];
      const mine = raw
        .map((t, idx) => ({ t, idx }))
        .filter(({ t }) => t.$type === "ResourceType" && Number(t.writableScopes ?? 0))
        .filter(({ t }) => {
          const [name = "", api = ""] = String(t.name).split("@");
          const b = best.get(name.toLowerCase());
          return b?.file === fi && b.api === api;
        });
      if (mine.length === 0) return;
      const fns = raw.filter((t) => t.$type === "ResourceFunctionType" && /^list/i.test(String(t.name)));
      const roots = [
        ...mine.map(({ t }) => refOf(t.body)),
        ...fns.flatMap((t) => [refOf(t.output), ...(t.input ? [refOf(t.input)] : [])]),
      ];
      const { types, map } = compact(raw, roots);
      const key = f.path.replace(/^generated\//, "").replace(/\/types\.json$/, "");
      files[key] = { types };
      for (const { t } of mine) {
        const [name = "", api = ""] = String(t.name).split("@");
        const functions: ArmFunction[] = fns
          .filter((x) => String(x.resourceType).toLowerCase() === name.toLowerCase() && x.apiVersion === api)
          .map((x) => ({
            name: String(x.name),
            out: map.get(refOf(x.output)) ?? -1,
            ...(x.input ? { in: map.get(refOf(x.input)) ?? -1 } : {}),
          }));
        resources.push({
          type: name,
          api,
          file: key,
          body: map.get(refOf(t.body)) ?? -1,
          ws: Number(t.writableScopes),
          rs: Number(t.readableScopes ?? 0),
          ...(functions.length ? { fns: functions } : {}),
        });
      }
    },
  );
  resources.sort((a, b) => a.type.localeCompare(b.type));
  const data: ArmData = {
    origin: {
      source: "https://github.com/Azure/bicep-types-az (generated/*/types.json)",
      commit,
      date,
      licence: "MIT (Copyright (c) Microsoft Corporation)",
      retrieved: new Date().toISOString().slice(0, 10),
    },
    files,
    resources,
  };
  const gz = gzipSync(JSON.stringify(data), { level: 9 });
  writeFileSync(ARM_TYPES_FILE, gz);
  process.stdout.write(
    `${resources.length} resource types from ${Object.keys(files).length} types.json files (${listing.length} stable ones read) → ${join("infra/azure", "arm-types.json.gz")} (${gz.length} bytes)\n`,
  );
}

if (import.meta.main) await main();
