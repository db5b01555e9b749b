// Two of issue 31's last Google types on a real kube-apiserver against the generic Google bed.fake. A Monitoring
// NotificationChannel: its credential labels (Magic Modules' sensitive_labels: auth_token, password,
// service_key) come from a real Secret, reach Google merged into `labels`, and never the object, its events or
// the logs; Google answers them obfuscated and that is never drift; a plain label's drift is put back with
// the token kept; delete. A Compute WireGroup: made under the CrossSiteNetwork its insert path names, filled
// from crossSiteNetworkRef (the generated parent kind), drift put back, delete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managedObject } from "../../support/conformance.ts";
import { newKube, uniqueName } from "../../support/env.ts";
import { gcpProject } from "../../support/gcp.ts";
import { googleGenTestbed } from "../../support/gcp-generated.ts";
import { captureLogger, conditionOf, getMr, keyOf, settle } from "../../support/reconcile.ts";

type Json = Record<string, unknown>;
const [CHANNEL, CSN, WG] = [
  "monitoring.googleapis.com/NotificationChannel",
  "compute.googleapis.com/CrossSiteNetwork",
  "compute.googleapis.com/WireGroup",
];
const kube = newKube();
const PC = uniqueName("gcpsens");
const bed = googleGenTestbed(kube, PC, [CHANNEL, CSN, WG]);
const [def, csn, wg] = [bed.def(CHANNEL), bed.def(CSN), bed.def(WG)];
const { lines, logger } = captureLogger();

beforeAll(
  () =>
    bed.start(
      { opPolls: 1 },
      {
        reconciler: {
          logger,
          // A cluster-scoped resource without a connection Secret reads Secrets only where the platform allows.
          secretRefNamespaces: ["default"],
        },
      },
    ),
  120_000,
);
afterAll(() => bed.close());

describe("issue 31's last Google types on a real API server", () => {
  it("sends the PagerDuty service key from a Secret, never stores, compares or logs it; drift and delete", {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName("chan");
    const key = `pd-service-key-${name}-zq7x`;
    await kube.createSecret({ metadata: { name, namespace: "default" }, stringData: { key } });
    await kube.create(
      def,
      managedObject(def, name, PC, {
        forProvider: {
          type: "pagerduty",
          displayName: "on call",
          labels: { plain: "a" },
          sensitiveLabels: { serviceKeySecretRef: { namespace: "default", name, key: "key" } },
        },
        connectionSecret: false,
      }),
    );
    await settle(bed.reconciler, keyOf(def, name));
    let mr = await getMr<Json>(kube, def, name);
    expect(conditionOf(mr, "Ready"), JSON.stringify(mr?.status)).toMatchObject({ status: "True" });
    const where = String(mr?.status?.atProvider?.name);
    expect(bed.fake.resource(where)?.labels).toEqual({ plain: "a", service_key: key });

    // Google's answer is obfuscated: in sync, nothing late-initialized into the spec's labels.
    expect((await bed.reconciler.reconcile(keyOf(def, name))).outcome).toBe("in-sync");
    mr = await getMr<Json>(kube, def, name);
    expect(mr?.spec.forProvider.labels).toEqual({ plain: "a" });

    // Drift of a plain label: put back, the key still there.
    bed.fake.mutate(where, { labels: { plain: "console", service_key: key } });
    await settle(bed.reconciler, keyOf(def, name));
    expect(bed.fake.resource(where)?.labels).toEqual({ plain: "a", service_key: key });

    const events = await kube.listEvents<Json>("default");
    const shown = JSON.stringify([await getMr<Json>(kube, def, name), events]) + lines.join("\n");
    expect(shown).not.toContain(key);
    expect(shown).not.toContain(key.slice(-4));

    await kube.delete(def, name);
    await settle(bed.reconciler, keyOf(def, name));
    await settle(bed.reconciler, keyOf(def, name));
    expect(bed.fake.resource(where)).toBeUndefined();
    expect(await getMr(kube, def, name)).toBeUndefined();
  });

  it("makes a WireGroup under the CrossSiteNetwork its crossSiteNetworkRef names; drift; delete", {
    timeout: 90_000,
  }, async () => {
    const [n, w] = [uniqueName("csn"), uniqueName("wg")];
    await kube.create(
      wg,
      managedObject(wg, w, PC, {
        forProvider: { description: "w", crossSiteNetworkRef: { name: n } },
        connectionSecret: false,
      }),
    );
    await bed.reconciler.reconcile(keyOf(wg, w));
    // The parent does not exist yet: nothing is made, and Synced says why.
    expect(conditionOf(await getMr(kube, wg, w), "Synced")).toMatchObject({ status: "False" });
    await kube.create(
      csn,
      managedObject(csn, n, PC, { forProvider: { description: "c" }, connectionSecret: false }),
    );
    await settle(bed.reconciler, keyOf(csn, n));
    await settle(bed.reconciler, keyOf(csn, n));
    await settle(bed.reconciler, keyOf(wg, w));
    await settle(bed.reconciler, keyOf(wg, w));
    const got = await getMr<Json>(kube, wg, w);
    expect(conditionOf(got, "Ready"), JSON.stringify(got?.status)).toMatchObject({ status: "True" });
    expect(got?.spec.forProvider.crossSiteNetwork).toBe(n);
    const where = `/compute/v1/projects/${gcpProject()}/global/crossSiteNetworks/${n}/wireGroups/${w}`;
    expect(bed.fake.resource(where)).toMatchObject({ name: w, description: "w" });

    bed.fake.mutate(where, { description: "console" });
    await settle(bed.reconciler, keyOf(wg, w));
    expect(bed.fake.resource(where)?.description).toBe("w");

    for (const [d, x] of [
      [wg, w],
      [csn, n],
    ] as const) {
      await kube.delete(d, x);
      await settle(bed.reconciler, keyOf(d, x));
      await settle(bed.reconciler, keyOf(d, x));
      expect(await getMr(kube, d, x)).toBeUndefined();
    }
    expect(bed.fake.resource(where)).toBeUndefined();
  });
});
