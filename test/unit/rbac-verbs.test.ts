// The reconciler's generated RBAC grants the verbs the code really uses, and no more. The verbs are
// derived from the HTTP methods of shared/kube/client.ts, the only way driftless writes to the API
// server: Secrets are read, created, replaced (PUT) and deleted — never patched; managed resources,
// ProviderConfigs and claims are merge-patched — never replaced (PUT), so no `update`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RECONCILER, rbacObjects } from "../../infra/k8s/gen-rbac.ts";
import { REPO_ROOT } from "../../infra/local/stack.ts";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
type Obj = { kind: string; metadata: { name: string }; rules?: Rule[] };

const VERB_OF: Record<string, string> = {
  GET: "get",
  POST: "create",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};
const client = readFileSync(join(REPO_ROOT, "shared/kube/client.ts"), "utf8");

/** The verbs of the Kube methods whose name matches, from their `method: "…"` lines. */
function verbsOf(methodName: RegExp): Set<string> {
  const verbs = new Set<string>();
  for (const m of client.matchAll(/\n {2}(?:async )?(\w+)(?:<[^>]*>)?\([^)]*\)[^{]*\{([\s\S]*?)\n {2}\}/g)) {
    if (!methodName.test(m[1] ?? "")) continue;
    // A GET of a collection (list…) is the list verb.
    const list = (m[1] ?? "").startsWith("list");
    for (const h of (m[2] ?? "").matchAll(/method: "(\w+)"/g))
      verbs.add(list && h[1] === "GET" ? "list" : (VERB_OF[h[1] ?? ""] ?? "?"));
  }
  return verbs;
}

const reconcilerRules = () =>
  (rbacObjects() as Obj[])
    .filter((o) => (o.kind === "ClusterRole" || o.kind === "Role") && o.metadata.name.startsWith(RECONCILER))
    .flatMap((o) => o.rules ?? []);

describe("reconciler RBAC verbs", () => {
  it("grants on Secrets exactly the verbs the Secret calls use (no patch)", () => {
    const used = verbsOf(/Secrets?$/);
    expect([...used].sort()).toEqual(["create", "delete", "get", "list", "update"]);
    const granted = new Set(
      reconcilerRules()
        .filter((r) => r.apiGroups.includes("") && r.resources.includes("secrets"))
        .flatMap((r) => r.verbs),
    );
    expect([...granted].sort()).toEqual([...used].sort());
  });

  it("never grants update (PUT) on driftless kinds or their status: objects are only merge-patched", () => {
    const used = verbsOf(/^(get|list|create|patch|patchStatus|delete)$/);
    expect(used.has("update")).toBe(false);
    const driftless = reconcilerRules().filter((r) => r.apiGroups.some((g) => g.endsWith("driftless.dev")));
    expect(driftless.length).toBeGreaterThan(5);
    for (const r of driftless) expect(r.verbs).not.toContain("update");
  });
});
