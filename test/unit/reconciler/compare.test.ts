import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Bucket } from "../../../shared/api/aws/s3.ts";
import { Queue } from "../../../shared/api/aws/sqs.ts";
import {
  deepEqual,
  driftedFields,
  lateInitialize,
  mapPaths,
  parseDuration,
  replacementPatch,
  versionSatisfies,
} from "../../../shared/reconciler/compare.ts";

const Nested = z.object({
  name: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  network: z
    .object({
      cidr: z.string().optional(),
      dns: z.object({ enabled: z.boolean().optional() }).optional(),
      annotations: z.record(z.string(), z.string()).default({}),
    })
    .optional(),
  ports: z.array(z.number()).optional(),
});
const maps = mapPaths(Nested);

describe("deepEqual", () => {
  it("compares JSON values structurally, ignoring key order but not array order", () => {
    expect(deepEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(deepEqual({}, [])).toBe(false);
    expect(deepEqual(null, {})).toBe(false);
    expect(deepEqual("1", 1)).toBe(false);
  });
});

describe("mapPaths", () => {
  it("finds map fields (z.record) at any depth, through optional and default wrappers", () => {
    expect([...maps].sort()).toEqual(["labels", "network.annotations"]);
  });

  it("finds the map fields of the AWS kinds: tags, and a Queue's policy document (compared whole)", () => {
    expect([...mapPaths(Bucket.forProvider)]).toEqual(["tags"]);
    expect([...mapPaths(Queue.forProvider)].sort()).toEqual(["policy", "tags"]);
  });
});

describe("driftedFields", () => {
  it("reports only fields the user set whose observed value differs", () => {
    const drift = driftedFields(
      { name: "a", ports: [80, 443] },
      { name: "b", ports: [80, 443], extra: 1 },
      maps,
    );
    expect(drift).toEqual(["name"]);
  });

  it("counts a field the user set that the cloud does not report as drift (it was removed out of band)", () => {
    expect(driftedFields({ name: "a", ports: undefined }, { ports: [1] }, maps)).toEqual(["name"]);
    expect(driftedFields({ redrive: { target: "dlq" } }, {}, maps)).toEqual(["redrive"]);
    expect(driftedFields({ redrive: { target: "dlq" } }, { redrive: null }, maps)).toEqual(["redrive"]);
    expect(driftedFields({ network: { dns: { enabled: true } } }, { network: { mtu: 1 } }, maps)).toEqual([
      "network.dns",
    ]);
  });

  it("does not count a field the user left empty, or an empty list or map the cloud reports as absent", () => {
    expect(driftedFields({ name: undefined, ports: [] }, {}, maps)).toEqual([]);
    expect(driftedFields({ labels: {} }, {}, maps)).toEqual([]);
  });

  it("skips writeOnly fields and compares version fields by version", () => {
    const fields = { password: { writeOnly: true }, engineVersion: { compare: "version" as const } };
    expect(
      driftedFields({ password: "x", engineVersion: "16" }, { engineVersion: "16.5" }, maps, fields),
    ).toEqual([]);
    expect(driftedFields({ engineVersion: "16.4" }, { engineVersion: "16.5" }, maps, fields)).toEqual([]);
    expect(driftedFields({ engineVersion: "16.4" }, { engineVersion: "16.3" }, maps, fields)).toEqual([
      "engineVersion",
    ]);
    expect(driftedFields({ engineVersion: "16.4" }, { engineVersion: "17.1" }, maps, fields)).toEqual([
      "engineVersion",
    ]);
  });

  it("compares nested structs field by field and names the nested path", () => {
    const desired = { network: { cidr: "10.0.0.0/16", dns: { enabled: true } } };
    const observed = { network: { cidr: "10.0.0.0/16", dns: { enabled: false, ttl: 30 }, zone: "a" } };
    expect(driftedFields(desired, observed, maps)).toEqual(["network.dns.enabled"]);
  });

  it("compares maps as a whole: an extra key in the cloud is drift", () => {
    expect(driftedFields({ labels: { team: "a" } }, { labels: { team: "a", rogue: "x" } }, maps)).toEqual([
      "labels",
    ]);
    expect(
      driftedFields({ network: { annotations: {} } }, { network: { annotations: { x: "y" } } }, maps),
    ).toEqual(["network.annotations"]);
  });

  it("would miss an extra cloud key if a map were treated as a struct (why mapPaths matters)", () => {
    expect(driftedFields({ labels: { team: "a" } }, { labels: { team: "a", rogue: "x" } })).toEqual([]);
  });

  it("compares arrays in order", () => {
    expect(driftedFields({ ports: [80, 443] }, { ports: [443, 80] }, maps)).toEqual(["ports"]);
  });
});

describe("lateInitialize", () => {
  it("fills only fields the user left empty and reports their paths", () => {
    const { value, filled } = lateInitialize(
      { name: "mine", ports: undefined },
      { name: "cloud", ports: [80], cidr: "x" },
      maps,
    );
    expect(value).toEqual({ name: "mine", ports: [80], cidr: "x" });
    expect(filled.sort()).toEqual(["cidr", "ports"]);
  });

  it("never overwrites a user value, including false, zero and empty string", () => {
    const desired = { a: false, b: 0, c: "" };
    const { value, filled } = lateInitialize(desired, { a: true, b: 5, c: "cloud" });
    expect(value).toEqual(desired);
    expect(filled).toEqual([]);
  });

  it("fills inside nested structs without touching the user's nested values", () => {
    const { value, filled } = lateInitialize(
      { network: { cidr: "10.0.0.0/16" } },
      { network: { cidr: "192.168.0.0/16", dns: { enabled: true } } },
      maps,
    );
    expect(value).toEqual({ network: { cidr: "10.0.0.0/16", dns: { enabled: true } } });
    expect(filled).toEqual(["network.dns"]);
  });

  it("never merges into a map the user set (maps are whole values), but fills an absent one", () => {
    const set = lateInitialize({ labels: { team: "a" } }, { labels: { team: "b", env: "dev" } }, maps);
    expect(set.value).toEqual({ labels: { team: "a" } });
    expect(set.filled).toEqual([]);
    const empty = lateInitialize({ labels: {} }, { labels: { env: "dev" } }, maps);
    expect(empty.value).toEqual({ labels: {} });
    const absent = lateInitialize({}, { labels: { env: "dev" } }, maps);
    expect(absent.value).toEqual({ labels: { env: "dev" } });
    expect(absent.filled).toEqual(["labels"]);
  });

  it("ignores observed nulls and leaves the inputs unmodified", () => {
    const desired = { network: { cidr: "a" } };
    const observed = { name: null, network: { dns: { enabled: true } } };
    const { value, filled } = lateInitialize(desired, observed, maps);
    expect(filled).toEqual(["network.dns"]);
    expect(desired).toEqual({ network: { cidr: "a" } });
    (value.network as { dns: { enabled: boolean } }).dns.enabled = false;
    expect(observed.network.dns.enabled).toBe(true);
  });
});

describe("parseDuration", () => {
  it.each([
    ["250ms", 250],
    ["90s", 90_000],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["1m30s", 90_000],
    ["1.5h", 5_400_000],
    ["2h0m5s", 7_205_000],
  ])("parses %s", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([undefined, "", "5", "abc", "-5s", "5 s", "1h 30m", "5sx", "0s", "5d"])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("versionSatisfies", () => {
  it.each([
    ["16", "16.5", true],
    ["16", "16", true],
    ["16.4", "16.4", true],
    ["16.4", "16.10", true],
    ["16.4", "16.3", false],
    ["16.4", "16", false],
    ["16", "17.0", false],
    ["8.0.35", "8.0.36", true],
    ["8.0.35", "8.0.34", false],
    ["5.7.mysql_aurora.2.11.2", "5.7.mysql_aurora.2.11.2", true],
  ])("want %s, cloud %s → %s", (want, got, ok) => {
    expect(versionSatisfies(want, got)).toBe(ok);
  });
});

describe("replacementPatch", () => {
  it("nulls the keys the new value no longer has, at any depth, so a merge patch replaces whole", () => {
    expect(replacementPatch({ a: 1, b: { c: 1, d: 2 }, e: 3 }, { a: 2, b: { c: 1 } })).toEqual({
      a: 2,
      b: { c: 1, d: null },
      e: null,
    });
    expect(replacementPatch(undefined, { a: 1 })).toEqual({ a: 1 });
  });
});

describe("lateInitialize with field behaviours", () => {
  it("never fills writeOnly fields or fields with lateInitialize: false", () => {
    const fields = { password: { writeOnly: true }, engineVersion: { lateInitialize: false } };
    const { value, filled } = lateInitialize(
      {},
      { password: "p", engineVersion: "16.4", size: 5 },
      new Set(),
      fields,
    );
    expect(value).toEqual({ size: 5 });
    expect(filled).toEqual(["size"]);
  });
});
