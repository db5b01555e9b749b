// The IAM permissions of every generated Google kind (Google's `service.resource.verb` names, kept where
// Google's predefined roles confirm them, the rest listed as unconfirmed), the custom role of an activated
// set, and RBAC for exactly the activated kinds, apart from rbac.yaml.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadIam } from "../../../infra/gcp/facts.ts";
import { iamServicesOf } from "../../../infra/gcp/iam-prefix.ts";
import { googleIamRole } from "../../../infra/gcp/iam-role.ts";
import { generateGcp } from "../../../infra/gen-gcp.ts";
import { googleapisRbacObjects, rbacObjects } from "../../../infra/k8s/gen-rbac.ts";
import { withNamespacedVariants } from "../../../shared/api/external.ts";
import {
  activatedGoogleEntries,
  loadGoogleCatalog,
  loadGoogleSpec,
} from "../../../shared/api/googleapis/catalog.ts";
import type { GoogleKindSpec } from "../../../shared/api/googleapis/spec.ts";
import { googleProviders } from "../../../shared/providers/gcp/generic/kinds.ts";
import { managedKinds } from "../../../shared/providers/index.ts";

// The registry as a process with an activated generated kind has it (read when the registry is imported).
vi.hoisted(() => {
  process.env.DRIFTLESS_ACTIVATE = "run.googleapis.service";
});

let all: GoogleKindSpec[] = [];
beforeAll(() => {
  generateGcp();
  all = loadGoogleCatalog().kinds.map((e) => loadGoogleSpec(e));
}, 60_000);

describe("IAM permissions of the generated Google kinds", () => {
  it("names, for every kind, what each of its calls needs: confirmed by Google's roles, or listed as unconfirmed", () => {
    const known = new Set(loadIam().permissions);
    expect(known.size).toBeGreaterThan(10_000);
    const problems: string[] = [];
    let confirmedKinds = 0;
    for (const s of all) {
      const p = s.permissions;
      const unconfirmed = new Set(s.google.unconfirmedPermissions ?? []);
      if (unconfirmed.size === 0) confirmedKinds++;
      if (!p.read?.length) problems.push(`${s.typeName}: no read`);
      // A create permission exactly when Google has a create method (a singleton of settings has none).
      if (Boolean(p.create?.length) !== Boolean(s.google.create)) problems.push(`${s.typeName}: create`);
      // A delete permission exactly when Google has a delete method (a KeyRing has none: it is released).
      if (Boolean(p.delete?.length) !== Boolean(s.google.delete)) problems.push(`${s.typeName}: delete`);
      // An update permission exactly when Google has an update method (the provider never calls another).
      if (Boolean(p.update?.length) !== Boolean(s.google.update)) problems.push(`${s.typeName}: update`);
      // A list permission exactly when Google has a list method: the batched drift check and the search
      // for a create whose answer was lost list the parent (or Compute's region / zone).
      if (Boolean(p.list?.length) !== Boolean(s.google.list)) problems.push(`${s.typeName}: list`);
      for (const name of Object.values(p).flat()) {
        if (!/^[a-z0-9]+\.[A-Za-z0-9]+\.[a-z][A-Za-z]*$/.test(name)) problems.push(`${s.typeName}: ${name}`);
        if (!known.has(name) && !unconfirmed.has(name)) problems.push(`${s.typeName}: ${name} unchecked`);
      }
      // Following an operation needs reading it: Compute's always has its scoped Operations' get.
      if (
        s.google.family === "compute" &&
        s.google.create?.lro &&
        !p.create?.some((x) => /Operations\.get$/.test(x))
      )
        problems.push(`${s.typeName}: no operations.get`);
    }
    expect(problems.slice(0, 20)).toEqual([]);
    // Measured on the pinned data: 881 of 1,082 kinds have every permission confirmed (849 before the
    // API's prefix and the collection's spelling were read from the roles; 846 of 1,082 before the RPC's verb was tried, 846 of 1,081 and 831 of 1,065 on the two branches merged, 831 of 1,064, 823 of 1,056 and 625 of 716 on the two branches merged before, 651 of 785, 617 of 708, 613 of 704, 591 of 692 before).
    expect(confirmedKinds).toBeGreaterThan(870);
  });

  it("takes the spelling Google's roles use where an API differs from its host or collection", () => {
    const of = (type: string, kind?: string) =>
      all.find((s) => s.typeName === type && (!kind || s.kind === kind))?.permissions;
    expect(of("run.googleapis.com/Service")?.create).toEqual(["run.services.create", "run.operations.get"]);
    expect(of("compute.googleapis.com/Address", "GlobalAddress")?.create).toEqual([
      "compute.globalAddresses.create",
      "compute.globalOperations.get",
    ]);
    expect(of("compute.googleapis.com/Address", "Address")?.update).toBeUndefined();
    expect(of("bigtableadmin.googleapis.com/Cluster")?.create).toContain("bigtable.clusters.create");
    // A parent under a project (a spec field) reads that project too: its id and number are one home.
    expect(of("gkehub.googleapis.com/MembershipBinding")?.read).toEqual([
      "gkehub.membershipbindings.get",
      "resourcemanager.projects.get",
    ]);
    expect(of("compute.googleapis.com/Address", "GlobalAddress")?.list).toEqual([
      "compute.globalAddresses.list",
    ]);
    expect(of("cloudresourcemanager.googleapis.com/TagKey")?.list).toEqual(["resourcemanager.tagKeys.list"]);
  });

  it("names a call whose RPC verb is not the standard one by that verb where Google's roles do (DropDatabase → drop)", () => {
    const of = (type: string, kind?: string) =>
      all.find((s) => s.typeName === type && (!kind || s.kind === kind));
    const db = of("spanner.googleapis.com/Database");
    expect(db?.google.delete).toMatchObject({ rpc: "DropDatabase" });
    expect(db?.permissions.delete?.[0]).toBe("spanner.databases.drop");
    expect(db?.google.unconfirmedPermissions ?? []).toEqual([]);
    // Compute's PatchInterconnectGroup: Google's roles name it `patch`, not the `update` of other Compute kinds.
    expect(of("compute.googleapis.com/InterconnectGroup")?.permissions.update?.[0]).toBe(
      "compute.interconnectGroups.patch",
    );
    expect(of("compute.googleapis.com/Network")?.permissions.update?.[0]).toBe("compute.networks.update");
    // The standard verb first: Compute's Insert is `create` wherever Google's roles hold that.
    expect(of("compute.googleapis.com/Network")?.permissions.create?.[0]).toBe("compute.networks.create");
    // Measured on the pinned data: 3 kinds' permissions confirmed by their RPC's verb (Spanner's Database;
    // Compute's InterconnectGroup and InterconnectAttachmentGroup), none taken where the roles lack it.
    const byRpc = all.filter((s) =>
      (["create", "get", "update", "delete"] as const).some((op) => {
        const h = op === "get" ? s.google.get : s.google[op];
        const verb = h?.rpc && /^[A-Z][a-z]+/.exec(h.rpc)?.[0]?.toLowerCase();
        const perm = s.permissions[op === "get" ? "read" : op]?.[0];
        return verb && perm?.endsWith(`.${verb}`) && verb !== op;
      }),
    );
    expect(byRpc.map((s) => s.typeName).sort()).toEqual([
      "compute.googleapis.com/InterconnectAttachmentGroup",
      "compute.googleapis.com/InterconnectGroup",
      "spanner.googleapis.com/Database",
    ]);
  });

  it("takes the service prefix Google's roles hold for an API's collections where it is not the host's (translate → cloudtranslate)", () => {
    const of = (type: string) => all.find((s) => s.typeName === type);
    const glossary = of("translate.googleapis.com/Glossary");
    // Translation's host is translate.googleapis.com; Google's roles hold cloudtranslate.<collection>.* for
    // its glossaries, datasets, models and adaptiveMtDatasets, and the long-running operation's get too.
    expect(glossary?.permissions).toEqual({
      create: ["cloudtranslate.glossaries.create", "cloudtranslate.operations.get"],
      read: ["cloudtranslate.glossaries.get"],
      update: ["cloudtranslate.glossaries.update", "cloudtranslate.operations.get"],
      delete: ["cloudtranslate.glossaries.delete", "cloudtranslate.operations.get"],
      list: ["cloudtranslate.glossaries.list"],
    });
    expect(glossary?.google.unconfirmedPermissions ?? []).toEqual([]);
    // The roles spell the entries' collection `glossaryentries`: the one spelling of it under that prefix.
    expect(of("translate.googleapis.com/GlossaryEntry")?.permissions.create).toEqual([
      "cloudtranslate.glossaryentries.create",
    ]);
    // The roles hold no `models` under cloudtranslate (only customModels, generalModels…): the data does not
    // decide, so the Model keeps the plain derivation and lists it as unconfirmed.
    expect(of("translate.googleapis.com/Model")?.google.unconfirmedPermissions).toContain(
      "translate.models.get",
    );
    // A collection spelled otherwise under the API's own prefix, the only such spelling in the roles.
    expect(of("apihub.googleapis.com/RuntimeProjectAttachment")?.permissions.read).toEqual([
      "apihub.runTimeProjectAttachments.get",
    ]);
    // The standard name stays where the roles hold it: Cloud Run is `run.*`, never another prefix.
    expect(of("run.googleapis.com/Service")?.permissions.read).toEqual(["run.services.get"]);
  });

  it("derives an API's prefix only where one prefix holds several of its collections, more than any other", () => {
    const known = new Set([
      "cloudtranslate.glossaries.get",
      "cloudtranslate.models.get",
      "automl.models.get",
      "aiplatform.datasets.get",
      "aiplatform.models.get",
      "automl.datasets.get",
      "billing.budgets.get",
    ]);
    const derived = iamServicesOf(
      [
        {
          api: "translate.googleapis.com",
          standard: ["translate"],
          collections: [["glossaries"], ["models"]],
        },
        // Two prefixes hold as many of its collections: the data does not decide.
        {
          api: "financialservices.googleapis.com",
          standard: ["financialservices"],
          collections: [["datasets"], ["models"], ["instances"]],
        },
        // One collection is not several: left to the standard spelling (unconfirmed).
        { api: "billingbudgets.googleapis.com", standard: ["billingbudgets"], collections: [["budgets"]] },
        // Its own prefix holds as many: it stays the API's.
        { api: "automl.googleapis.com", standard: ["automl"], collections: [["datasets"], ["models"]] },
        // Two of five is not most of the API's collections.
        {
          api: "admanager.googleapis.com",
          standard: ["admanager"],
          collections: [["glossaries"], ["models"], ["sites"], ["orders"], ["teams"]],
        },
      ],
      known,
    );
    expect(Object.fromEntries(derived)).toEqual({ "translate.googleapis.com": "cloudtranslate" });
  });

  it("confirms no permission outside Google's published roles, and lists none as unconfirmed that they hold", () => {
    const known = new Set(loadIam().permissions);
    const outside: string[] = [];
    for (const s of all) {
      const unconfirmed = new Set(s.google.unconfirmedPermissions ?? []);
      for (const name of Object.values(s.permissions).flat())
        if (!unconfirmed.has(name) && !known.has(name)) outside.push(`${s.typeName}: ${name}`);
      for (const name of unconfirmed) if (known.has(name)) outside.push(`${s.typeName}: ${name} is held`);
    }
    expect(outside).toEqual([]);
  });

  it("makes one custom role of an activated set: every permission of their calls, once", () => {
    const specs = activatedGoogleEntries(
      ["run.googleapis.service", "compute.googleapis.network", "compute.googleapis.globaladdress"],
      loadGoogleCatalog(),
    ).map((e) => loadGoogleSpec(e));
    const role = googleIamRole(specs);
    expect(role.includedPermissions).toEqual([...new Set(role.includedPermissions)].sort());
    expect(role.includedPermissions).toEqual(
      [...new Set(specs.flatMap((s) => Object.values(s.permissions).flat()))].sort(),
    );
    expect(role.includedPermissions).toContain("compute.networks.update");
    expect(role.includedPermissions).not.toContain("compute.globalAddresses.update");
  });
});

describe("RBAC of generated Google kinds", () => {
  it("grants exactly the activated kinds, both shapes, in their own ClusterRoles; rbac.yaml holds none", () => {
    const specs = activatedGoogleEntries(
      ["run.googleapis.service", "secretmanager.googleapis.secret"],
      loadGoogleCatalog(),
    ).map((e) => loadGoogleSpec(e));
    const managed = withNamespacedVariants(googleProviders(specs)).map((k) => k.definition);
    const objects = googleapisRbacObjects(managed);
    const granted = objects
      .flatMap((o) => (o as { rules?: Array<{ apiGroups: string[]; resources: string[] }> }).rules ?? [])
      .flatMap((r) => r.resources.map((res) => `${res}.${r.apiGroups[0]}`));
    expect([...new Set(granted)].sort()).toEqual([
      "secrets.secretmanager.googleapis.driftless.dev",
      "secrets.secretmanager.googleapis.m.driftless.dev",
      "secrets/status.secretmanager.googleapis.driftless.dev",
      "secrets/status.secretmanager.googleapis.m.driftless.dev",
      "services.run.googleapis.driftless.dev",
      "services.run.googleapis.m.driftless.dev",
      "services/status.run.googleapis.driftless.dev",
      "services/status.run.googleapis.m.driftless.dev",
    ]);
    expect(objects.map((o) => (o as { metadata: { name: string } }).metadata.name)).toEqual([
      "driftless-forwarder-googleapis",
      "driftless-forwarder-googleapis",
      "driftless-reconciler-googleapis",
      "driftless-reconciler-googleapis",
    ]);
    // The registry holds an activated generated kind, and still the shipped rbac.yaml does not name it.
    expect(managedKinds.some((k) => k.definition.group === "run.googleapis.driftless.dev")).toBe(true);
    expect(JSON.stringify(rbacObjects())).not.toContain(".googleapis.");
  });

  it("has rules for every generated kind, over all of them, when all are activated", () => {
    const managed = withNamespacedVariants(googleProviders(all)).map((k) => k.definition);
    const rules = googleapisRbacObjects(managed).flatMap(
      (o) => (o as { rules?: Array<{ apiGroups: string[]; resources: string[] }> }).rules ?? [],
    );
    const granted = new Set(rules.flatMap((r) => r.resources.map((res) => `${res}.${r.apiGroups[0]}`)));
    const missing = managed.filter(
      (d) => !granted.has(`${d.plural}.${d.group}`) || !granted.has(`${d.plural}/status.${d.group}`),
    );
    expect(missing.map((d) => `${d.plural}.${d.group}`)).toEqual([]);
    expect(managed.length).toBe(all.length * 2);
  });
});
