// GitOps health: the Argo CD Lua health script, run by a real Lua 5.1 interpreter (Debian's lua5.1, as
// .ci/run installs it) in Argo CD's sandbox (base functions and table only), over the objects each
// driftless group holds; and kstatus readiness (Ready + observedGeneration) for every kind's CRD.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { argocdHealthYaml, HEALTH_YAML_FILE, healthPatterns } from "../../../infra/k8s/gen-argocd-health.ts";
import { type Condition, ConditionReason } from "../../../shared/api/meta.ts";
import { allCrds } from "../../../shared/crds.ts";
import { setConditions } from "../../../shared/reconciler/conditions.ts";

/** A JSON value as a Lua table constructor (what Argo CD hands the script as `obj`). */
function lua(v: unknown): string {
  if (v === null || v === undefined) return "nil";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `{${v.map(lua).join(", ")}}`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `[${JSON.stringify(k)}] = ${lua(x)}`)
    .join(", ")}}`;
}

/** Runs each script over its object in one lua5.1 process, as Argo CD would: `obj` global, no std libs. */
function runLua(cases: Array<{ script: string; obj: unknown }>): Array<{ status: string; message: string }> {
  const dir = mkdtempSync(join(tmpdir(), "driftless-lua-"));
  const file = join(dir, "cases.lua");
  const body = cases
    .map(
      (c) => `do
  local f = assert(loadstring(${JSON.stringify(c.script)}))
  setfenv(f, { obj = ${lua(c.obj)}, ipairs = ipairs, pairs = pairs, tostring = tostring, tonumber = tonumber, type = type, next = next, table = table })
  local hs = f()
  io.write(hs.status, "\\t", hs.message or "", "\\n")
end`,
    )
    .join("\n");
  writeFileSync(file, body);
  let out: string;
  try {
    out = execFileSync("lua5.1", [file], { encoding: "utf8" });
  } catch (err) {
    throw new Error(`lua5.1 failed (apt-get install -y lua5.1; .ci/run does): ${(err as Error).message}`);
  }
  return out
    .trimEnd()
    .split("\n")
    .map((l) => {
      const [status = "", message = ""] = l.split("\t");
      return { status, message };
    });
}

const customizations = (): Record<string, { "health.lua": string }> => {
  const cm = parse(readFileSync(HEALTH_YAML_FILE, "utf8")) as { data: Record<string, string> };
  return parse(cm.data["resource.customizations"] as string);
};

/** Argo CD's glob: `*` matches any run of characters, dots included. */
const matches = (pattern: string, groupKind: string) =>
  new RegExp(
    `^${pattern
      .split("*")
      .map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, "\\$&"))
      .join(".*")}$`,
  ).test(groupKind);

const NOW = new Date("2026-11-27T00:00:00Z");
const conds = (list: Array<Omit<Condition, "lastTransitionTime">>, generation: number) =>
  setConditions([], list, NOW, generation);
const READY = { type: "Ready", status: "True", reason: ConditionReason.Available } as const;
const SYNCED = { type: "Synced", status: "True", reason: ConditionReason.ReconcileSuccess } as const;

const NOT_READY = (reason: string) => ({ type: "Ready", status: "False", reason }) as const;

/** The states an operator meets, each with the health Argo CD must show. */
function states(apiVersion: string, kind: string) {
  /** An object of generation 2 (or as `extra` says) whose conditions were written at `seen`. */
  const at = (
    list: Parameters<typeof conds>[0] | undefined,
    extra: Record<string, unknown> = {},
    seen = 2,
  ) => ({
    apiVersion,
    kind,
    metadata: { name: "x", generation: 2, ...extra },
    ...(list ? { status: { conditions: conds(list, seen) } } : {}),
  });
  const failing = {
    type: "Synced",
    status: "False",
    reason: "ReconcileError",
    message: "cannot create: AccessDenied",
  } as const;
  const pausedSynced = {
    type: "Synced",
    status: "False",
    reason: ConditionReason.ReconcilePaused,
    message: "paused",
  } as const;
  const deleting = {
    deletionTimestamp: "2026-11-27T00:00:00Z",
    finalizers: ["finalizer.managedresource.crossplane.io"],
  };
  return [
    { name: "Ready", obj: at([READY, SYNCED]), status: "Healthy" },
    {
      name: "not Ready (creating)",
      obj: at([NOT_READY(ConditionReason.Creating), SYNCED]),
      status: "Progressing",
      message: "Creating",
    },
    {
      name: "failing (Synced=False)",
      obj: at([NOT_READY(ConditionReason.Creating), failing]),
      status: "Degraded",
      message: "ReconcileError: cannot create: AccessDenied",
    },
    {
      name: "paused",
      obj: at([READY, pausedSynced], { annotations: { "crossplane.io/paused": "true" } }),
      status: "Suspended",
    },
    {
      name: "deleting",
      obj: at([NOT_READY(ConditionReason.Deleting), SYNCED], deleting),
      status: "Progressing",
      message: "deleting: Deleting",
    },
    { name: "never reconciled", obj: at(undefined), status: "Progressing" },
    {
      name: "spec changed since the last reconcile",
      obj: at([READY, SYNCED], { generation: 3 }),
      status: "Progressing",
      message: "generation 3 not reconciled yet (status is of 2)",
    },
  ];
}

const withHealth = allCrds().filter((c) =>
  (c.spec.names.categories ?? []).some((cat: string) => ["managed", "claim", "providerconfig"].includes(cat)),
);

describe("Argo CD health (infra/k8s/argocd-health.yaml)", () => {
  it("is generated and checked in up to date", () => {
    expect(readFileSync(HEALTH_YAML_FILE, "utf8")).toBe(argocdHealthYaml());
  });

  it("covers every managed (both shapes), claim and ProviderConfig kind, and the generated AWS kinds", () => {
    const patterns = Object.keys(customizations());
    expect(patterns).toEqual(healthPatterns());
    for (const c of withHealth)
      expect(patterns.some((p) => matches(p, `${c.spec.group}/${c.spec.names.kind}`))).toBe(true);
    for (const generated of ["s3.awscc.driftless.dev/Bucket", "lambda.awscc.m.driftless.dev/Function"])
      expect(patterns.some((p) => matches(p, generated))).toBe(true);
    // Classes, export templates and Provider objects carry no Ready/Synced: Argo CD's default applies.
    expect(patterns.some((p) => matches(p, "classes.driftless.dev/S3BucketClass"))).toBe(false);
  });

  it("gives each group's objects the health of their conditions, run by Lua 5.1 as Argo CD runs it", () => {
    const all = customizations();
    const cases = Object.entries(all).flatMap(([pattern, { "health.lua": script }]) => {
      const crd = withHealth.find((c) => matches(pattern, `${c.spec.group}/${c.spec.names.kind}`));
      const group = crd?.spec.group ?? pattern.replace("*", "s3").replace(/\/\*$/, "");
      const kind = crd?.spec.names.kind ?? "Bucket";
      return states(`${group}/v1alpha1`, kind).map((s) => ({ ...s, pattern, script }));
    });
    expect(cases.length).toBe(Object.keys(all).length * 7);
    const results = runLua(cases);
    expect(results).toHaveLength(cases.length);
    cases.forEach((c, i) => {
      const got = results[i];
      expect({ case: `${c.pattern} ${c.name}`, status: got?.status }).toEqual({
        case: `${c.pattern} ${c.name}`,
        status: c.status,
      });
      if (c.message) expect(got?.message).toBe(c.message);
    });
  });
});

/**
 * kstatus readiness as Flux's health checks apply it to a custom resource: Current when the Ready
 * condition is True and what it reports is of the object's current generation (status.observedGeneration,
 * or the condition's own observedGeneration).
 */
function kstatusCurrent(obj: {
  metadata: { generation?: number };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}): boolean {
  const ready = obj.status?.conditions?.find((c) => c.type === "Ready");
  if (ready?.status !== "True") return false;
  const observed = obj.status?.observedGeneration ?? ready.observedGeneration;
  return observed !== undefined && observed === obj.metadata.generation;
}

type Schema = { properties?: Record<string, Schema>; items?: Schema };

describe("kstatus readiness (Flux) for every kind", () => {
  it.each(withHealth.map((c) => [`${c.spec.group}/${c.spec.names.kind}`, c] as const))("%s", (_name, crd) => {
    // The API server prunes fields its structural schema lacks: Ready's observedGeneration must survive.
    const root = (crd.spec.versions[0] as { schema?: { openAPIV3Schema?: Schema } } | undefined)?.schema
      ?.openAPIV3Schema;
    const status = root?.properties?.status;
    const condition = status?.properties?.conditions?.items?.properties;
    expect(Object.keys(condition ?? {})).toEqual(
      expect.arrayContaining([
        "type",
        "status",
        "reason",
        "message",
        "observedGeneration",
        "lastTransitionTime",
      ]),
    );
    const obj = (generation: number, list: Condition[]) => ({
      metadata: { generation },
      status: { conditions: list },
    });
    expect(kstatusCurrent(obj(2, conds([READY, SYNCED], 2)))).toBe(true);
    expect(kstatusCurrent(obj(3, conds([READY, SYNCED], 2)))).toBe(false);
    expect(
      kstatusCurrent(
        obj(2, conds([{ type: "Ready", status: "False", reason: ConditionReason.Creating }], 2)),
      ),
    ).toBe(false);
    expect(kstatusCurrent({ metadata: { generation: 1 } })).toBe(false);
  });
});
