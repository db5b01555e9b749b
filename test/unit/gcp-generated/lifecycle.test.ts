// Generated Google Cloud kinds end to end through the real engine and the two generic providers, against
// the generic wire fake driven by the same generated specs (infra/local/fakes/gcp-generic-fake.ts), with the
// in-memory API server: for 25 kinds of 19 APIs (Compute among them) — create (operations followed over
// reconciles), drift corrected with an update mask of only the drifted field, an immutable change refused
// and left unchanged, import by external name, delete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { GoogleApiError, rateLimited } from "../../../infra/local/fakes/gcp-fake-http.ts";
import {
  type GoogleGenericFake,
  startGoogleGenericFake,
} from "../../../infra/local/fakes/gcp-generic-fake.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import { loadGoogleCatalog, loadGoogleSpec } from "../../../shared/api/googleapis/catalog.ts";
import { OWNER_LABEL } from "../../../shared/api/googleapis/kind.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import type { ManagedKindDef, ManagedResource } from "../../../shared/api/managed.ts";
import { Annotations } from "../../../shared/api/meta.ts";
import { providerConfigs } from "../../../shared/api/provider-config.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { gcpHome } from "../../../shared/providers/gcp/home.ts";
import { withHome } from "../../../shared/providers/home.ts";
import type { ReconcileResult, ResourceKey } from "../../../shared/reconciler/reconciler.ts";
import { KindRegistry } from "../../../shared/reconciler/registry.ts";
import { defaultTags } from "../../support/default-tags.ts";
import { MemoryApiServer } from "../../support/memory-apiserver.ts";
import { Reconciler } from "../../support/routed.ts";

const PROJECT = "driftless-test";
const NET = `projects/${PROJECT}/global/networks/net-x`;
type Json = Record<string, unknown>;

/** A kind under test: what to create it with, a field to drift, and (when it has one) an immutable change. */
interface Case {
  type: string;
  kind?: string;
  forProvider: Json;
  drift: Json;
  immutable?: Json;
  secrets?: Record<string, string>;
  /** Google has no update method for it: drift is reported as an immutable change, never patched. */
  noUpdate?: true;
}

const CASES: Case[] = [
  {
    type: "secretmanager.googleapis.com/Secret",
    forProvider: { replication: { automatic: {} }, labels: { a: "1" } },
    drift: { labels: { a: "2" } },
    immutable: { replication: { userManaged: { replicas: [{ location: "us-east1" }] } } },
  },
  {
    type: "artifactregistry.googleapis.com/Repository",
    forProvider: { location: "us-central1", format: "DOCKER", description: "d" },
    drift: { description: "console" },
  },
  {
    type: "workflows.googleapis.com/Workflow",
    forProvider: { location: "us-central1", description: "d", sourceContents: "main: {}" },
    drift: { description: "console" },
  },
  {
    type: "redis.googleapis.com/Instance",
    forProvider: { location: "us-central1", tier: "BASIC", memorySizeGb: 1, displayName: "r" },
    drift: { displayName: "console" },
  },
  {
    type: "memcache.googleapis.com/Instance",
    forProvider: {
      location: "us-central1",
      nodeCount: 1,
      nodeConfig: { cpuCount: 1, memorySizeMb: 1024 },
      displayName: "m",
    },
    drift: { displayName: "console" },
  },
  {
    type: "file.googleapis.com/Instance",
    forProvider: { location: "us-central1-a", tier: "BASIC_HDD", description: "f" },
    drift: { description: "console" },
  },
  {
    type: "certificatemanager.googleapis.com/Certificate",
    forProvider: { location: "global", description: "c", managed: { domains: ["a.example.com"] } },
    drift: { description: "console" },
  },
  {
    type: "run.googleapis.com/Service",
    forProvider: {
      location: "us-central1",
      description: "s",
      template: { containers: [{ image: "us-docker.pkg.dev/cloudrun/container/hello" }] },
    },
    drift: { description: "console" },
  },
  {
    type: "eventarc.googleapis.com/Trigger",
    forProvider: {
      location: "us-central1",
      eventFilters: [{ attribute: "type", value: "google.cloud.pubsub.topic.v1.messagePublished" }],
      destination: { workflow: "projects/p/locations/us-central1/workflows/w" },
      labels: { t: "1" },
    },
    drift: { labels: { t: "2" } },
  },
  {
    type: "apigateway.googleapis.com/Api",
    forProvider: { location: "global", displayName: "a" },
    drift: { displayName: "console" },
  },
  {
    type: "privateca.googleapis.com/CaPool",
    forProvider: { location: "us-central1", tier: "DEVOPS", labels: { p: "1" } },
    drift: { labels: { p: "2" } },
  },
  {
    type: "cloudfunctions.googleapis.com/Function",
    forProvider: { location: "us-central1", description: "fn" },
    drift: { description: "console" },
  },
  {
    type: "networkconnectivity.googleapis.com/Hub",
    forProvider: { parent: `projects/${PROJECT}/locations/global`, description: "h" },
    drift: { description: "console" },
  },
  {
    type: "gkehub.googleapis.com/Membership",
    forProvider: { location: "global", labels: { m: "1" } },
    drift: { labels: { m: "2" } },
  },
  {
    type: "datastream.googleapis.com/ConnectionProfile",
    forProvider: {
      location: "us-central1",
      displayName: "cp",
      mysqlProfile: {
        hostname: "10.0.0.1",
        username: "u",
        passwordSecretRef: { namespace: "default", name: "db", key: "password" },
      },
    },
    drift: { displayName: "console" },
    secrets: { password: "hunter2-do-not-show" },
  },
  {
    type: "alloydb.googleapis.com/Cluster",
    kind: "Cluster",
    forProvider: {
      location: "us-central1",
      network: NET,
      displayName: "a",
      initialUser: {
        user: "postgres",
        passwordSecretRef: { namespace: "default", name: "db", key: "password" },
      },
    },
    drift: { displayName: "console" },
    secrets: { password: "hunter2-do-not-show" },
  },
  {
    // Create under `{name=projects/*}` (the path's parent variable is `name`), a name Google chooses.
    type: "monitoring.googleapis.com/AlertPolicy",
    forProvider: { displayName: "a", combiner: "OR", userLabels: { team: "a" } },
    drift: { displayName: "console" },
  },
  {
    // Created under the project's own path variable (`/v1/projects/{project_id=*}/agentPools`), its id `agentPoolId`.
    type: "storagetransfer.googleapis.com/agentPools",
    forProvider: { displayName: "p", bandwidthLimit: { limitMbps: "100" } },
    drift: { displayName: "console" },
  },
  {
    // Updated with PUT (the whole group), not PATCH.
    type: "monitoring.googleapis.com/Group",
    forProvider: { displayName: "g", filter: 'resource.type = "gce_instance"' },
    drift: { filter: 'resource.type = "gae_app"' },
  },
  {
    type: "compute.googleapis.com/Network",
    kind: "Network",
    forProvider: { autoCreateSubnetworks: false, description: "n" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Firewall",
    kind: "Firewall",
    forProvider: { network: NET, allowed: [{ IPProtocol: "tcp", ports: ["22"] }], description: "fw" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Subnetwork",
    kind: "Subnetwork",
    forProvider: { region: "us-central1", network: NET, ipCidrRange: "10.2.0.0/16", description: "s" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Disk",
    kind: "Disk",
    forProvider: { zone: "us-central1-a", sizeGb: "10", description: "d" },
    drift: { description: "console" },
  },
  {
    type: "compute.googleapis.com/Address",
    kind: "Address",
    forProvider: { region: "us-central1", description: "a" },
    drift: { description: "console" },
    noUpdate: true,
  },
  {
    type: "compute.googleapis.com/Address",
    kind: "GlobalAddress",
    forProvider: { description: "g" },
    drift: { description: "console" },
    noUpdate: true,
  },
];

let fake: GoogleGenericFake;
const api = new MemoryApiServer();
const kube = api.kube();
let r: Reconciler;
const specs = new Map<Case, GoogleKindSpec>();
const defs = new Map<Case, ManagedKindDef>();
/** Kinds only the reference tests use (a binding's parent and scope), by Google's type. */
const MORE = [
  "gkehub.googleapis.com/Scope",
  "gkehub.googleapis.com/MembershipBinding",
  "monitoring.googleapis.com/NotificationChannel",
  "compute.googleapis.com/CrossSiteNetwork",
  "compute.googleapis.com/WireGroup",
];
const more = new Map<string, ManagedKindDef>();

beforeAll(async () => {
  generateGcp();
  fake = await startGoogleGenericFake({ opPolls: 1 });
  const catalog = loadGoogleCatalog();
  for (const c of CASES) {
    const e = catalog.kinds.find((k) => k.typeName === c.type && (!c.kind || k.kind === c.kind));
    if (!e) throw new Error(`no generated kind ${c.type} ${c.kind ?? ""}`);
    specs.set(c, loadGoogleSpec(e));
  }
  const extra = MORE.map((t) => loadGoogleSpec(catalog.kinds.find((k) => k.typeName === t) as never));
  const providers = googleProviders([...new Set(specs.values()), ...extra], { pollDelaysMs: [] }).map((p) =>
    withHome(p, gcpHome),
  );
  for (const s of extra)
    more.set(
      s.typeName,
      providers.find((p) => p.definition.kind === s.kind && p.definition.group.startsWith(`${s.group}.`))
        ?.definition as ManagedKindDef,
    );
  for (const [c, s] of specs)
    defs.set(
      c,
      providers.find((p) => p.definition.kind === s.kind && p.definition.group.startsWith(`${s.group}.`))
        ?.definition as ManagedKindDef,
    );
  const pc = providerConfigs.gcp.type;
  api.seed(pc, {
    apiVersion: `${pc.group}/${pc.version}`,
    kind: "ProviderConfig",
    metadata: { name: "default" },
    spec: {
      projectID: PROJECT,
      credentials: { source: "InjectedIdentity" },
      endpoint: { apis: `${fake.url}/{api}` },
    },
  });
  api.seedSecret("default", "db", { password: "hunter2-do-not-show" });
  r = new Reconciler(kube, new KindRegistry(withNamespacedVariants(providers)), {
    creationGracePeriodMs: 0,
    rateLimit: false,
    retryBaseMs: 0,
    // Cluster-scoped resources without a connection Secret read Secrets only where the platform allows.
    secretRefNamespaces: ["default"],
  });
});
afterAll(async () => {
  await fake?.close();
});

const key = (d: ManagedKindDef, name: string): ResourceKey => ({
  apiVersion: d.apiVersion,
  kind: d.kind,
  name,
});
const get = (d: ManagedKindDef, name: string) => api.get<ManagedResource<Json, Json>>(d, name);
const cond = (d: ManagedKindDef, name: string, type: string) =>
  get(d, name)?.status?.conditions?.find((x) => x.type === type);

async function settle(d: ManagedKindDef, name: string, max = 8): Promise<ReconcileResult[]> {
  const out: ReconcileResult[] = [];
  for (let i = 0; i < max; i++) {
    const res = await r.reconcile(key(d, name));
    out.push(res);
    if (res.outcome === "in-sync" && cond(d, name, "Ready")?.status === "True") break;
    if (res.requeueAfterMs === undefined || res.outcome === "error" || res.outcome === "blocked") break;
  }
  return out;
}

/** Where the fake keeps a resource: its full name, or Compute's path. */
function cloudName(s: GoogleKindSpec, mr: ManagedResource<Json, Json> | undefined, id: string): string {
  const fp = mr?.spec.forProvider ?? {};
  if (s.google.family === "resource") return String(mr?.status?.atProvider?.name ?? "");
  return (s.google.get?.p ?? "").replace(/\{(\w+)\}/g, (_, v: string) =>
    v === "project" ? PROJECT : v === "region" || v === "zone" ? String(fp[v]) : id,
  );
}

const seed = (
  d: ManagedKindDef,
  name: string,
  forProvider: Json,
  annotations?: Record<string, string>,
  policies?: string[],
) =>
  api.seed(d, {
    apiVersion: d.apiVersion,
    kind: d.kind,
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { forProvider, ...(policies ? { managementPolicies: policies } : {}) },
  });

describe("generated Google Cloud kinds through the generic providers", () => {
  it("covers 25 kinds of at least 8 APIs, Compute among them", () => {
    const groups = new Set([...specs.values()].map((s) => s.group));
    expect(CASES.length).toBe(25);
    expect(groups.size).toBeGreaterThanOrEqual(8);
    expect(groups.has("compute.googleapis")).toBe(true);
  });

  for (const c of CASES) {
    const label = `${c.type}${c.kind ? ` (${c.kind})` : ""}`;
    it(`${label}: create, drift corrected, immutable refused, import, delete`, async () => {
      const s = specs.get(c) as GoogleKindSpec;
      const d = defs.get(c) as ManagedKindDef;
      const name = `t-${s.kind.toLowerCase()}-${s.group.split(".")[0]}`.slice(0, 40);

      // Create: the operation runs for a poll; the engine follows it over reconciles.
      seed(d, name, structuredClone(c.forProvider));
      const created = await settle(d, name);
      expect(created[0]?.outcome, JSON.stringify(cond(d, name, "Synced"))).toBe("created");
      const why = JSON.stringify([cond(d, name, "Ready"), cond(d, name, "Synced"), created]);
      expect(cond(d, name, "Ready"), why).toMatchObject({ status: "True", reason: "Available" });
      expect(cond(d, name, "Synced")).toMatchObject({ status: "True" });
      const mr = get(d, name);
      const where = cloudName(s, mr, name);
      const stored = fake.resource(where) as Json;
      expect(stored, where).toBeDefined();
      // Secrets reached Google, and nowhere else.
      for (const v of Object.values(c.secrets ?? {})) {
        expect(JSON.stringify(stored)).toContain(v);
        expect(JSON.stringify(get(d, name))).not.toContain(v);
      }

      // Drift: changed in the console, put back with an update of only that field.
      fake.mutate(where, c.drift);
      const before = fake.stats();
      if (c.noUpdate) {
        await r.reconcile(key(d, name));
        expect(cond(d, name, "Synced")?.message).toContain("immutable");
        expect(
          Object.entries(fake.stats()).filter(([k, n]) => /^(PATCH|PUT) /.test(k) && n > (before[k] ?? 0)),
        ).toEqual([]);
        fake.mutate(where, structuredClone(c.forProvider));
        await settle(d, name);
      }
      const fixed = c.noUpdate ? [{ outcome: "updated" }] : await settle(d, name);
      expect(
        fixed.map((x) => x.outcome),
        JSON.stringify(cond(d, name, "Synced")),
      ).toContain("updated");
      const after = fake.resource(where) as Json;
      // Labels put back carry Crossplane's default labels beside the spec's (written with any labels write).
      for (const k of Object.keys(c.drift))
        expect(after[k], JSON.stringify([fixed, cond(d, name, "Synced")])).toEqual(
          k === d.tagging?.field
            ? { ...defaultTags(d, name, "default"), ...(c.forProvider[k] as Record<string, string>) }
            : c.forProvider[k],
        );
      const writes = Object.entries(fake.stats()).filter(
        ([k, n]) => /^(PATCH|PUT) /.test(k) && n > (before[k] ?? 0),
      );
      expect(writes.length).toBe(c.noUpdate ? 0 : 1);

      // Immutable: refused with the field named, the cloud left as it was.
      if (c.immutable) {
        api.mutate(d, name, (o) => Object.assign((o.spec as { forProvider: Json }).forProvider, c.immutable));
        await r.reconcile(key(d, name));
        expect(cond(d, name, "Synced")).toMatchObject({ status: "False" });
        expect(cond(d, name, "Synced")?.message).toContain("immutable");
        expect(fake.resource(where)).toEqual(after);
        api.mutate(d, name, (o) =>
          Object.assign((o.spec as { forProvider: Json }).forProvider, structuredClone(c.forProvider)),
        );
        await settle(d, name);
      }

      // Import: another object observing the same resource by its external name makes nothing new.
      const ext = get(d, name)?.metadata.annotations?.[Annotations.externalName] as string;
      const creates = fake.stats();
      seed(d, `${name}-imp`, structuredClone(c.forProvider), { [Annotations.externalName]: ext }, [
        "Observe",
      ]);
      await settle(d, `${name}-imp`);
      expect(cond(d, `${name}-imp`, "Ready")).toMatchObject({ status: "True" });
      expect(
        Object.entries(fake.stats()).filter(([k, n]) => k.startsWith("POST") && n > (creates[k] ?? 0)),
      ).toEqual([]);

      // Delete: gone from Google, then the object.
      await kube.delete(d, name);
      await settle(d, name);
      await settle(d, name);
      expect(fake.resource(where)).toBeUndefined();
      expect(get(d, name)).toBeUndefined();
    });
  }

  it("a create whose answer is lost is found again by its owner label: one alert policy, never two", async () => {
    const c = CASES.find((x) => x.type === "monitoring.googleapis.com/AlertPolicy") as Case;
    const d = defs.get(c) as ManagedKindDef;
    expect(d.ownershipLookup).toBe(true);
    const listOf = async () =>
      ((await (await fetch(`${fake.url}/monitoring/v3/projects/${PROJECT}/alertPolicies`)).json()) as Json)
        .alertPolicies as Json[] | undefined;
    const before = (await listOf())?.length ?? 0;
    seed(d, "lost-alert", structuredClone(c.forProvider));
    // Google makes it; the answer never arrives.
    fake.loseAnswerNext(/^POST monitoring /);
    const first = await r.reconcile(key(d, "lost-alert"));
    expect(first.outcome).toBe("error");
    expect(get(d, "lost-alert")?.metadata.annotations?.[Annotations.externalName]).toBeUndefined();
    const posts = fake.stats();
    await settle(d, "lost-alert");
    // Found by the label carrying the object's uid: its name recorded, no second create sent.
    const uid = get(d, "lost-alert")?.metadata.uid as string;
    const mine = ((await listOf()) ?? []).filter(
      (p) => (p.userLabels as Record<string, string> | undefined)?.[OWNER_LABEL] === uid,
    );
    expect(mine).toHaveLength(1);
    expect((await listOf())?.length).toBe(before + 1);
    expect(get(d, "lost-alert")?.metadata.annotations?.[Annotations.externalName]).toBe(mine[0]?.name);
    expect(cond(d, "lost-alert", "Ready"), JSON.stringify(get(d, "lost-alert")?.status)).toMatchObject({
      status: "True",
    });
    expect(
      Object.entries(fake.stats()).filter(([k, n]) => k.startsWith("POST") && n > (posts[k] ?? 0)),
    ).toEqual([]);
    // The label is driftless's own: never drift, not in the observed labels.
    expect(get(d, "lost-alert")?.spec.forProvider.userLabels).not.toHaveProperty(OWNER_LABEL);
    await kube.delete(d, "lost-alert");
    await settle(d, "lost-alert");
    await settle(d, "lost-alert");
    expect((await listOf())?.length ?? 0).toBe(before);
  });

  it("a notification channel's credential labels come from Secret keys, reach Google only, and are never drift", async () => {
    const d = more.get("monitoring.googleapis.com/NotificationChannel") as ManagedKindDef;
    const token = "xoxb-slack-token-do-not-show-41";
    api.seedSecret("default", "slack", { token });
    seed(d, "chan", {
      type: "slack",
      displayName: "c",
      labels: { channel_name: "#alerts" },
      sensitiveLabels: { authTokenSecretRef: { namespace: "default", name: "slack", key: "token" } },
    });
    const created = await settle(d, "chan");
    expect(created[0]?.outcome, JSON.stringify(cond(d, "chan", "Synced"))).toBe("created");
    expect(cond(d, "chan", "Ready")).toMatchObject({ status: "True" });
    const where = String(get(d, "chan")?.status?.atProvider?.name);
    // The token is in the channel's labels at Google, merged with the spec's labels; nowhere in the object.
    expect((fake.resource(where) as Json).labels).toEqual({ channel_name: "#alerts", auth_token: token });
    const shown = () => JSON.stringify([get(d, "chan"), api.list("v1/events")]);
    expect(shown()).not.toContain(token);
    expect(shown()).not.toContain(token.slice(-4));
    // Google answers it obfuscated: not drift, not late-initialized into spec.forProvider.labels.
    const quiet = fake.stats();
    expect((await r.reconcile(key(d, "chan"))).outcome).toBe("in-sync");
    expect(
      Object.keys(fake.stats()).filter((k) => k.startsWith("PATCH") && fake.stats()[k] !== quiet[k]),
    ).toEqual([]);
    expect(get(d, "chan")?.spec.forProvider.labels).toEqual({ channel_name: "#alerts" });
    // Drift of a plain label: the labels map is written whole, the token with it (else the mask drops it).
    fake.mutate(where, { labels: { channel_name: "#console", auth_token: token } });
    const fixed = await settle(d, "chan");
    expect(fixed.map((x) => x.outcome)).toContain("updated");
    expect((fake.resource(where) as Json).labels).toEqual({ channel_name: "#alerts", auth_token: token });
    expect(shown()).not.toContain(token);
    // A credential key written in the spec's labels as text is refused, and nothing is sent.
    const before = fake.stats();
    api.mutate(d, "chan", (o) =>
      Object.assign((o.spec as { forProvider: Json }).forProvider, {
        labels: { channel_name: "#other", auth_token: "plain" },
      }),
    );
    await r.reconcile(key(d, "chan"));
    expect(cond(d, "chan", "Synced")?.message).toContain("sensitiveLabels.authTokenSecretRef");
    expect(
      Object.entries(fake.stats()).filter(([k, n]) => k.startsWith("PATCH") && n > (before[k] ?? 0)),
    ).toEqual([]);
    await kube.delete(d, "chan");
    await settle(d, "chan");
    await settle(d, "chan");
    expect(fake.resource(where)).toBeUndefined();
  });

  it("makes a Compute child under the parent its insert path names, by reference to the parent's kind (WireGroup under a CrossSiteNetwork)", async () => {
    const csn = more.get("compute.googleapis.com/CrossSiteNetwork") as ManagedKindDef;
    const wg = more.get("compute.googleapis.com/WireGroup") as ManagedKindDef;
    seed(wg, "wg-a", { description: "w", crossSiteNetworkRef: { name: "csn-a" } });
    // The parent does not exist yet: nothing is made.
    await r.reconcile(key(wg, "wg-a"));
    expect(cond(wg, "wg-a", "Synced")).toMatchObject({ status: "False" });
    seed(csn, "csn-a", { description: "c" });
    await settle(csn, "csn-a");
    await settle(wg, "wg-a");
    expect(cond(wg, "wg-a", "Ready"), JSON.stringify(get(wg, "wg-a")?.status)).toMatchObject({
      status: "True",
    });
    expect(get(wg, "wg-a")?.spec.forProvider.crossSiteNetwork).toBe("csn-a");
    const where = `/compute/v1/projects/${PROJECT}/global/crossSiteNetworks/csn-a/wireGroups/wg-a`;
    expect(fake.resource(where)).toMatchObject({ name: "wg-a", description: "w" });
    // The parent is the object's home: immutable, never sent in the body.
    expect(fake.resource(where)).not.toHaveProperty("crossSiteNetwork");
    fake.mutate(where, { description: "console" });
    expect((await settle(wg, "wg-a")).map((x) => x.outcome)).toContain("updated");
    expect(fake.resource(where)?.description).toBe("w");
    api.mutate(wg, "wg-a", (o) => {
      const fp = (o.spec as { forProvider: Json }).forProvider;
      delete fp.crossSiteNetworkRef;
      fp.crossSiteNetwork = "csn-other";
    });
    const posts = fake.stats();
    await r.reconcile(key(wg, "wg-a"));
    expect(cond(wg, "wg-a", "Synced")).toMatchObject({ status: "False" });
    expect(cond(wg, "wg-a", "Synced")?.message).toContain("immutable");
    expect(
      Object.entries(fake.stats()).filter(([k, n]) => k.startsWith("POST") && n > (posts[k] ?? 0)),
    ).toEqual([]);
    expect(fake.resource(where)?.description).toBe("w");
    api.mutate(wg, "wg-a", (o) => {
      (o.spec as { forProvider: Json }).forProvider.crossSiteNetwork = "csn-a";
    });
    await kube.delete(wg, "wg-a");
    await settle(wg, "wg-a");
    await settle(wg, "wg-a");
    expect(fake.resource(where)).toBeUndefined();
    await kube.delete(csn, "csn-a");
    await settle(csn, "csn-a");
    await settle(csn, "csn-a");
  });

  it("fills a field naming another resource from a …Ref and a parent from a …Selector (google.api.resource_reference), after the targets are ready", async () => {
    const netCase = CASES.find((c) => c.kind === "Network") as Case;
    const alloyCase = CASES.find((c) => c.type === "alloydb.googleapis.com/Cluster") as Case;
    const memCase = CASES.find((c) => c.type === "gkehub.googleapis.com/Membership") as Case;
    const [net, alloy, mem] = [netCase, alloyCase, memCase].map((c) => defs.get(c) as ManagedKindDef) as [
      ManagedKindDef,
      ManagedKindDef,
      ManagedKindDef,
    ];
    const scope = more.get("gkehub.googleapis.com/Scope") as ManagedKindDef;
    const binding = more.get("gkehub.googleapis.com/MembershipBinding") as ManagedKindDef;

    // networkRef → the generated Compute Network's full name (from its self link).
    const { network: _, ...alloyFp } = structuredClone(alloyCase.forProvider);
    seed(alloy, "ref-alloy", { ...alloyFp, networkRef: { name: "ref-net" } });
    const early = await r.reconcile(key(alloy, "ref-alloy"));
    expect(early.outcome).not.toBe("created");
    expect(cond(alloy, "ref-alloy", "Synced")).toMatchObject({ status: "False" });
    expect(get(alloy, "ref-alloy")?.spec.forProvider.network).toBeUndefined();
    seed(net, "ref-net", structuredClone(netCase.forProvider));
    await settle(net, "ref-net");
    expect(cond(net, "ref-net", "Ready")).toMatchObject({ status: "True" });
    await settle(alloy, "ref-alloy");
    expect(cond(alloy, "ref-alloy", "Ready"), JSON.stringify(get(alloy, "ref-alloy")?.status)).toMatchObject({
      status: "True",
    });
    const netName = `projects/${PROJECT}/global/networks/ref-net`;
    expect(get(alloy, "ref-alloy")?.spec.forProvider.network).toBe(netName);
    const made = fake.resource(String(get(alloy, "ref-alloy")?.status?.atProvider?.name));
    expect(made?.network).toBe(netName);
    expect(made).not.toHaveProperty("networkRef");

    // parentSelector (by the Membership's labels) and scopeRef → a MembershipBinding under the Membership.
    api.seed(mem, {
      apiVersion: mem.apiVersion,
      kind: mem.kind,
      metadata: { name: "ref-mem", labels: { team: "ref-a" } },
      spec: { forProvider: structuredClone(memCase.forProvider) },
    });
    seed(scope, "ref-scope", { location: "global" });
    seed(binding, "ref-bind", {
      parentSelector: { matchLabels: { team: "ref-a" } },
      scopeRef: { name: "ref-scope" },
    });
    await settle(mem, "ref-mem");
    await settle(scope, "ref-scope");
    await settle(binding, "ref-bind");
    expect(
      cond(binding, "ref-bind", "Ready"),
      JSON.stringify(get(binding, "ref-bind")?.status),
    ).toMatchObject({
      status: "True",
    });
    const fp = get(binding, "ref-bind")?.spec.forProvider ?? {};
    expect(fp.parent).toBe(get(mem, "ref-mem")?.status?.atProvider?.name);
    expect(fp.scope).toBe(get(scope, "ref-scope")?.status?.atProvider?.name);
    expect(fp.parentRef).toEqual({ name: "ref-mem" });
    const bound = String(get(binding, "ref-bind")?.status?.atProvider?.name);
    expect(bound.startsWith(`${fp.parent}/bindings/`)).toBe(true);
    expect(fake.resource(bound)?.scope).toBe(fp.scope);

    // The explicit parent is the binding's home: pointed at another Membership, it is refused — nothing is
    // read or made under the other one (a second binding, the first left behind) and the binding stays.
    seed(mem, "ref-mem2", structuredClone(memCase.forProvider));
    await settle(mem, "ref-mem2");
    expect(cond(mem, "ref-mem2", "Ready")).toMatchObject({ status: "True" });
    api.mutate(binding, "ref-bind", (o) => {
      const p = (o.spec as { forProvider: Json }).forProvider;
      delete p.parentSelector;
      p.parentRef = { name: "ref-mem2" };
      delete p.parent;
    });
    const before = fake.stats();
    await settle(binding, "ref-bind");
    expect(cond(binding, "ref-bind", "Synced")).toMatchObject({ status: "False" });
    expect(cond(binding, "ref-bind", "Synced")?.message).toContain(`parent "${fp.parent}"`);
    expect(
      Object.entries(fake.stats()).filter(([k, n]) => k.startsWith("POST") && n > (before[k] ?? 0)),
    ).toEqual([]);
    expect(fake.resource(bound)?.scope).toBe(fp.scope);
  });

  it("checks drift in batches: one list call per parent for many objects; drifted or gone ones go to a full reconcile", async () => {
    const check = (d: ManagedKindDef, names: string[]) =>
      r.checkMany(
        names.map((n) => get(d, n) as ManagedResource),
        { connectionSecret: () => undefined },
      );
    const calls = () => Object.values(fake.stats()).reduce((a, b) => a + b, 0);
    for (const c of [CASES[0], CASES.find((x) => x.kind === "Disk")] as Case[]) {
      const d = defs.get(c) as ManagedKindDef;
      const s = specs.get(c) as GoogleKindSpec;
      const names = [1, 2, 3].map((n) => `batch-${d.kind.toLowerCase()}-${n}`);
      for (const n of names) {
        seed(d, n, structuredClone(c.forProvider));
        await settle(d, n);
        expect(cond(d, n, "Ready")).toMatchObject({ status: "True" });
      }
      fake.reset();
      expect((await check(d, names)).map((v) => v.inSync)).toEqual([true, true, true]);
      // One list call for the three (they share a parent / zone), no GET each.
      expect(calls()).toBe(1);

      const where = names.map((n) => cloudName(s, get(d, n), n));
      fake.mutate(where[1] as string, structuredClone(c.drift));
      fake.reset();
      const verdicts = await check(d, names);
      expect(verdicts.map((v) => v.inSync)).toEqual([true, false, true]);
      expect(calls()).toBe(1);

      // Gone from Google: not concluded from the list alone — a GET of it says so, and a full reconcile follows.
      const gone = where[2] as string;
      const base = `${fake.url}/${s.google.host.replace(/\.googleapis\.com$/, "")}`;
      const del = s.google.family === "compute" ? gone : `/${s.google.version}/${gone}`;
      expect((await fetch(`${base}${del}`, { method: "DELETE" })).ok).toBe(true);
      // Compute's delete is an operation: reads of the resource move it on, as Google finishes it unpolled.
      for (let i = 0; i < 3 && fake.resource(gone); i++) await fetch(`${base}${del}`);
      expect(fake.resource(gone)).toBeUndefined();
      fake.reset();
      expect((await check(d, [names[2] as string])).map((v) => v.inSync)).toEqual([false]);
      const alone = calls();
      fake.reset();
      const after = await check(d, [names[0] as string, names[2] as string]);
      expect(after.map((v) => v.inSync)).toEqual([true, false]);
      // The listed one costs nothing beyond the list the gone one needed anyway.
      expect(calls(), JSON.stringify(fake.stats())).toBe(alone);
      expect(alone).toBeGreaterThan(1);
    }
  });

  it("reports Google's errors by class: RESOURCE_EXHAUSTED backs off, INVALID_ARGUMENT names the field", async () => {
    const c = CASES[1] as Case;
    const d = defs.get(c) as ManagedKindDef;
    fake.failNext(/^POST artifactregistry/, () => rateLimited("artifactregistry.googleapis.com"));
    seed(d, "throttled-repo", structuredClone(c.forProvider));
    await r.reconcile(key(d, "throttled-repo"));
    expect(cond(d, "throttled-repo", "Synced")?.message).toContain("RESOURCE_EXHAUSTED");
    fake.failNext(
      /^POST artifactregistry/,
      () => new GoogleApiError(400, "badRequest", "Invalid value at 'repository.format'", "INVALID_ARGUMENT"),
    );
    seed(d, "bad-repo", structuredClone(c.forProvider));
    await r.reconcile(key(d, "bad-repo"));
    expect(cond(d, "bad-repo", "Synced")).toMatchObject({ status: "False" });
    // The class and Google's reason code; Google's own message only from Google's hosts, never a fake's.
    expect(cond(d, "bad-repo", "Synced")?.message).toContain(
      "invalid argument (INVALID_ARGUMENT): cannot create artifactregistry.googleapis.com/Repository: HTTP 400",
    );
    expect(cond(d, "bad-repo", "Synced")?.message).toContain("badRequest");
    // The same HTTP 400 with Google's status FAILED_PRECONDITION is told as that, not as a bad argument.
    fake.failNext(
      /^POST artifactregistry/,
      () => new GoogleApiError(400, "failedPrecondition", "The API is not ready", "FAILED_PRECONDITION"),
    );
    seed(d, "pre-repo", structuredClone(c.forProvider));
    await r.reconcile(key(d, "pre-repo"));
    expect(cond(d, "pre-repo", "Synced")?.message).toContain("FAILED_PRECONDITION");
    expect(cond(d, "pre-repo", "Synced")?.message).toContain("failedPrecondition");
    expect(cond(d, "pre-repo", "Synced")?.message).not.toContain("INVALID_ARGUMENT");
    // An unknown field reaches Google's validation, not a silent drop: the fake answers as Google does.
    const res = await fetch(
      `${fake.url}/artifactregistry/v1/projects/${PROJECT}/locations/us-central1/repositories?repositoryId=x`,
      { method: "POST", body: JSON.stringify({ formatt: "DOCKER" }) },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { status: string; message: string } }).error).toMatchObject({
      status: "INVALID_ARGUMENT",
      message: expect.stringContaining('Unknown name "formatt"'),
    });
    const out = await fetch(
      `${fake.url}/artifactregistry/v1/projects/${PROJECT}/locations/us-central1/repositories?repositoryId=y`,
      { method: "POST", body: JSON.stringify({ createTime: "2020-01-01T00:00:00Z" }) },
    );
    expect(((await out.json()) as { error: { message: string } }).error.message).toContain("OUTPUT_ONLY");
  });
});
