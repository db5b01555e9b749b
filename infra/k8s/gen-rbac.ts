// Generates infra/k8s/rbac.yaml from the kind registry and the claim bindings: RBAC has no wildcard API
// groups, so least privilege means naming every managed, claim and class kind's group and plural. `node infra/k8s/gen-rbac.ts` writes it;
// `--check` fails when the checked-in file is stale. `--secret-namespaces=a,b` prints (to stdout) a
// tighter variant whose reconciler reaches Secrets only in those namespaces (see SECRETS below). `--awscc`
// prints the ClusterRoles of the generated AWS kinds DRIFTLESS_ACTIVATE selects (awsccRbacObjects), and
// `--googleapis` those of the generated Google Cloud kinds it selects (googleapisRbacObjects), `--azure` those
// of the generated Azure kinds (azureGenRbacObjects).
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { awsccKindOf } from "../../shared/api/awscc/kind.ts";
import { azureGenKindOf } from "../../shared/api/azure-gen/kind.ts";
import { isGeneratedGroup } from "../../shared/api/generated-catalog.ts";
import { googleKindOf } from "../../shared/api/googleapis/kind.ts";
import { namespacedVariantOf } from "../../shared/api/managed.ts";
import type { ResourceType } from "../../shared/api/meta.ts";
import {
  ActivationPolicy,
  CrossplaneActivationPolicy,
  CrossplaneManagedResourceDefinition,
} from "../../shared/api/pkg/activation-policy.ts";
import { Provider } from "../../shared/api/pkg/provider.ts";
import { usageTypes } from "../../shared/api/protection/usage.ts";
import { type ClaimKinds, claimKindsOf } from "../../shared/claims/kinds.ts";
import { activatedAwsccSpecs } from "../../shared/providers/awscc/activated.ts";
import { activatedAzureGenSpecs } from "../../shared/providers/azure/arm-generic/activated.ts";
import { activatedGoogleSpecs } from "../../shared/providers/gcp/generic/activated.ts";
import { managedKinds, providerConfigKinds } from "../../shared/providers/index.ts";
import { SHAPE_MARKS_REF } from "../../shared/reconciler/shape-marks.ts";

export const NAMESPACE = "driftless-system";
export const FORWARDER = "driftless-forwarder";
export const RECONCILER = "driftless-reconciler";
/** The drift sweep's health writes on Provider objects; the sweep's reads are the forwarder's role. */
export const PROVIDER_STATUS = "driftless-provider-status";
/**
 * Crossplane v2 interop: Crossplane's own ClusterRole aggregates every ClusterRole carrying
 * rbac.crossplane.io/aggregate-to-crossplane, so Compositions may compose driftless kinds. Crossplane's RBAC
 * manager gives it every verb on a provider's kinds; here they are named (no wildcard), and nothing else.
 */
export const AGGREGATE_TO_CROSSPLANE = "driftless:aggregate-to-crossplane";
const CROSSPLANE_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];
/** The Kubernetes user the deploy guides map the sweep function's cloud identity to. */
export const SWEEP_USER = "driftless-sweep";

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** One rule per API group, resources sorted: a stable file that diffs well when a kind is added. */
function rulesFor(types: readonly ResourceType[], verbs: string[], suffix = ""): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const t of types) {
    const set = byGroup.get(t.group) ?? new Set<string>();
    set.add(`${t.plural}${suffix}`);
    byGroup.set(t.group, set);
  }
  return [...byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...resources].sort(),
      verbs: [...verbs],
    }));
}

/**
 * SECRETS. The reconciler reads ProviderConfig credentials (by convention in driftless-system), reads
 * masterPasswordSecretRef Secrets, and writes connection Secrets wherever writeConnectionSecretToRef
 * (or a claim's namespace) says. It may get, create, update and delete Secrets by name only: no list,
 * no watch, and no patch (shared/kube/client.ts reads, creates, replaces and deletes Secrets;
 * test/unit/rbac-verbs.test.ts keeps the two equal) — and by default only in driftless-system, through a
 * Role and RoleBinding per namespace. Each namespace that should receive connection Secrets or claims'
 * copies is onboarded by generating with `--secret-namespaces=a,b` (driftless-system is always included);
 * elsewhere the API server refuses and Synced=False says so. `--secret-namespaces=*` restores the
 * cluster-wide grant for platforms that want it.
 */
// list: the batched drift check reads the connection Secrets of a namespace with one LIST by the
// app.kubernetes.io/managed-by=driftless label instead of one GET each. Where `get` on every Secret of a
// namespace is granted already, list reads nothing more (it also shows the names).
const SECRET_VERBS = ["get", "list", "create", "update", "delete"];
/** driftless objects are only merge-patched (PATCH), never replaced (PUT): patch, no update. */
const READ_PATCH = ["get", "list", "watch", "patch"];

/**
 * Provider objects (shared/api/pkg/provider.ts): created when first missing and their status merge-patched
 * — by the reconcile functions (the revision) and the sweep (health). Never updated, listed or deleted.
 */
/**
 * Activation policies (driftless's and Crossplane's) and Crossplane's ManagedResourceDefinitions: read by everything that decides what is served; the
 * status of driftless's own (what each activates) is written by `driftless run` and `driftless crds apply`.
 */
const POLICY_READ = rulesFor(
  [ActivationPolicy, CrossplaneActivationPolicy, CrossplaneManagedResourceDefinition],
  ["get", "list", "watch"],
);
const POLICY_STATUS = rulesFor([ActivationPolicy], ["patch"], "/status");
/**
 * Usages: read (the engine, before deleting a managed resource), their finalizer, selected names and owner
 * bound, Ready written, and a Usage whose user is gone deleted (what the garbage collector does).
 */
const USAGE_RULES = [
  ...rulesFor(usageTypes(), [...READ_PATCH, "delete"]),
  ...rulesFor(usageTypes(), ["patch"], "/status"),
];

const PROVIDER_RULES: PolicyRule[] = [
  ...rulesFor([Provider], ["get", "create"]),
  ...rulesFor([Provider], ["patch"], "/status"),
];

/** Where the shipped rbac.yaml lets the reconciler reach Secrets: ProviderConfig credentials and claims' sources. */
export const DEFAULT_SECRET_NAMESPACES: readonly string[] = [NAMESPACE];

export interface RbacOptions {
  /** The namespaces where the reconciler may reach Secrets (default driftless-system); "*": cluster-wide. */
  secretNamespaces?: readonly string[] | "*";
  /** The claim, class and made managed kinds the claim reconciler touches (default: every class binding). */
  claims?: ClaimKinds;
}

/** The RBAC objects for the forwarder and the reconcile functions, for these kinds. */
export function rbacObjects(
  // The generated kinds' rules are awsccRbacObjects' (their own ClusterRoles): rbac.yaml never changes
  // with DRIFTLESS_ACTIVATE.
  managed: readonly ResourceType[] = managedKinds
    .map((k) => k.definition)
    .filter((d) => !isGeneratedGroup(d.group)),
  providerConfigTypes: readonly ResourceType[] = providerConfigKinds.map((k) => k.type),
  opts: RbacOptions = {},
): object[] {
  const labels = { "app.kubernetes.io/part-of": "driftless" };
  const claims = opts.claims ?? claimKindsOf();
  const watched = [...managed, ...providerConfigTypes, ...claims.claims, ...claims.classes, ...usageTypes()];
  const namespaces = opts.secretNamespaces ?? DEFAULT_SECRET_NAMESPACES;
  const scoped = namespaces !== "*";
  const secretRoles = (scoped ? namespaces : []).flatMap((namespace) => [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: `${RECONCILER}-secrets`, namespace, labels },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: [...SECRET_VERBS] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `${RECONCILER}-secrets`, namespace, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${RECONCILER}-secrets` },
      subjects: [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: RECONCILER },
        { kind: "ServiceAccount", name: RECONCILER, namespace: NAMESPACE },
      ],
    },
  ]);
  return [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: FORWARDER, labels },
      // Keys only: the forwarder reads managed resources, ProviderConfigs, claims and classes, and
      // writes nothing.
      rules: [...rulesFor(watched, ["get", "list", "watch"]), ...POLICY_READ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: FORWARDER, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: FORWARDER },
      subjects: [{ kind: "ServiceAccount", name: FORWARDER, namespace: NAMESPACE }],
    },
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: RECONCILER, namespace: NAMESPACE, labels },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: RECONCILER, labels },
      rules: [
        // Managed resources: read fresh, then external-name / create-pending annotations and finalizers.
        ...rulesFor(managed, READ_PATCH),
        // Ready and Synced conditions, atProvider.
        ...rulesFor(managed, ["patch"], "/status"),
        // Credentials; the ProviderConfig reconciler also keeps an in-use finalizer and status on them.
        ...rulesFor(providerConfigTypes, READ_PATCH),
        ...rulesFor(providerConfigTypes, ["patch"], "/status"),
        // Claims: read fresh; their finalizer and the chosen spec.classRef; Ready, Synced and Bound.
        ...rulesFor(claims.claims, READ_PATCH),
        ...rulesFor(claims.claims, ["patch"], "/status"),
        // Classes: read only (chosen for a claim; the template is read when its resources are made).
        ...rulesFor(claims.classes, ["get", "list", "watch"]),
        // The managed kinds classes make, and only those, are created and deleted (for claims): no
        // other managed resource is ever created or deleted by driftless.
        ...rulesFor(claims.made, ["create", "delete"]),
        ...USAGE_RULES,
        // Credential Secrets (read) and connection Secrets (written, owned by their managed resource).
        ...(scoped ? [] : [{ apiGroups: [""], resources: ["secrets"], verbs: [...SECRET_VERBS] }]),
        { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
        // Its deployment's Provider: the function version it runs (a new revision on upgrade).
        ...PROVIDER_RULES,
        // Which generated kinds are activated (read at cold start), and what each policy activates.
        ...POLICY_READ,
        ...POLICY_STATUS,
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: RECONCILER, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: RECONCILER },
      subjects: [
        // Functions map their cloud identity to this user (EKS access entry / aws-auth; GKE: bind the
        // Google service account's email instead); in-cluster and kubeconfig-token setups use the SA.
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: RECONCILER },
        { kind: "ServiceAccount", name: RECONCILER, namespace: NAMESPACE },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: PROVIDER_STATUS, labels },
      rules: PROVIDER_RULES,
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: PROVIDER_STATUS, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: PROVIDER_STATUS },
      // The sweep reads with the forwarder's role; GKE: bind the sweep's Google service account too.
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: SWEEP_USER }],
    },
    // The sweep's Lease (shared/pipeline/sweep-lease.ts): one sweep per window however many containers run.
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: SWEEP_USER, namespace: NAMESPACE, labels },
      rules: [
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "patch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: SWEEP_USER, namespace: NAMESPACE, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: SWEEP_USER },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: SWEEP_USER }],
    },
    // The shapes' marks (shared/reconciler/shape-marks.ts): one ConfigMap the engine and the cloud-event
    // resolver read and write (a shape's first label, a shape checked once).
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: `${RECONCILER}-shapes`, namespace: NAMESPACE, labels },
      rules: [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [SHAPE_MARKS_REF.name],
          verbs: ["get", "patch"],
        },
        // create takes no resourceNames (the name is in the body).
        { apiGroups: [""], resources: ["configmaps"], verbs: ["create"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: `${RECONCILER}-shapes`, namespace: NAMESPACE, labels },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${RECONCILER}-shapes` },
      subjects: [
        { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: RECONCILER },
        { kind: "ServiceAccount", name: RECONCILER, namespace: NAMESPACE },
      ],
    },
    ...secretRoles,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: {
        name: AGGREGATE_TO_CROSSPLANE,
        labels: { ...labels, "rbac.crossplane.io/aggregate-to-crossplane": "true" },
      },
      rules: rulesFor([...managed, ...providerConfigTypes], CROSSPLANE_VERBS),
    },
  ];
}

/** The ClusterRoles of the activated generated AWS kinds: beside rbac.yaml's, for the same identities. */
export const AWSCC_FORWARDER = `${FORWARDER}-awscc`;
export const AWSCC_RECONCILER = `${RECONCILER}-awscc`;

/**
 * RBAC for exactly these generated (Cloud Control) kinds, apart from rbac.yaml: the forwarder's identity
 * may read and watch them, the reconciler's read, patch (annotations, finalizers) and patch their status —
 * the same verbs as a hand-written kind's. Activating a kind adds these rules; rbac.yaml, which holds the
 * hand-written kinds, does not change. `node infra/k8s/gen-rbac.ts --awscc` prints them for
 * DRIFTLESS_ACTIVATE.
 */
export function awsccRbacObjects(managed: readonly ResourceType[]): object[] {
  return generatedRbacObjects(managed, "awscc");
}

/** The same for exactly these generated Google Cloud kinds (`--googleapis`): ClusterRoles `…-googleapis`. */
export function googleapisRbacObjects(managed: readonly ResourceType[]): object[] {
  return generatedRbacObjects(managed, "googleapis");
}

/** The same for exactly these generated Azure kinds (`--azure`): ClusterRoles `…-azure-gen`; their Azure role: infra/azure/gen-role.ts. */
export function azureGenRbacObjects(managed: readonly ResourceType[]): object[] {
  return generatedRbacObjects(managed, "azure-gen");
}

function generatedRbacObjects(
  managed: readonly ResourceType[],
  family: "awscc" | "googleapis" | "azure-gen",
): object[] {
  const labels = { "app.kubernetes.io/part-of": "driftless", "driftless.dev/rbac": family };
  const [forwarder, reconciler] = [`${FORWARDER}-${family}`, `${RECONCILER}-${family}`];
  const role = (name: string, rules: PolicyRule[]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name, labels },
    rules,
  });
  const binding = (name: string, subjects: object[]) => ({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
    subjects,
  });
  return [
    role(forwarder, rulesFor(managed, ["get", "list", "watch"])),
    binding(forwarder, [{ kind: "ServiceAccount", name: FORWARDER, namespace: NAMESPACE }]),
    role(reconciler, [...rulesFor(managed, READ_PATCH), ...rulesFor(managed, ["patch"], "/status")]),
    binding(reconciler, [
      { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: RECONCILER },
      { kind: "ServiceAccount", name: RECONCILER, namespace: NAMESPACE },
    ]),
  ];
}

/** The activated generated kinds (DRIFTLESS_ACTIVATE), both shapes. */
export function activatedAwsccTypes(): ResourceType[] {
  return activatedAwsccSpecs().flatMap((s) => {
    const def = awsccKindOf(s);
    return [def, namespacedVariantOf(def)];
  });
}

/** The activated generated Google Cloud kinds (DRIFTLESS_ACTIVATE), both shapes. */
export function activatedGoogleapisTypes(): ResourceType[] {
  return activatedGoogleSpecs().flatMap((s) => {
    const def = googleKindOf(s);
    return [def, namespacedVariantOf(def)];
  });
}

/** The activated generated Azure kinds (DRIFTLESS_ACTIVATE), both shapes. */
export function activatedAzureGenTypes(): ResourceType[] {
  return activatedAzureGenSpecs().flatMap((s) => {
    const def = azureGenKindOf(s);
    return [def, namespacedVariantOf(def)];
  });
}

export function rbacYaml(objects: object[] = rbacObjects()): string {
  return `# Generated by infra/k8s/gen-rbac.ts from shared/providers/index.ts and shared/claims/bindings — do not edit.\n${objects
    .map((o) => stringify(o))
    .join("---\n")}`;
}

if (import.meta.main) {
  const file = join(dirname(fileURLToPath(import.meta.url)), "rbac.yaml");
  const text = rbacYaml();
  const scopedArg = process.argv.find((a) => a.startsWith("--secret-namespaces="));
  if (process.argv.includes("--azure")) {
    const types = activatedAzureGenTypes();
    if (types.length === 0) {
      console.error("no generated Azure kind is activated: set DRIFTLESS_ACTIVATE (docs/azure-generated.md)");
      process.exit(1);
    }
    process.stdout.write(rbacYaml(azureGenRbacObjects(types)));
  } else if (process.argv.includes("--googleapis")) {
    const types = activatedGoogleapisTypes();
    if (types.length === 0) {
      console.error(
        "no generated Google Cloud kind is activated: set DRIFTLESS_ACTIVATE (docs/gcp-generated.md)",
      );
      process.exit(1);
    }
    process.stdout.write(rbacYaml(googleapisRbacObjects(types)));
  } else if (process.argv.includes("--awscc")) {
    const types = activatedAwsccTypes();
    if (types.length === 0) {
      console.error("no generated kind is activated: set DRIFTLESS_ACTIVATE (docs/awscc.md)");
      process.exit(1);
    }
    process.stdout.write(rbacYaml(awsccRbacObjects(types)));
  } else if (scopedArg) {
    const list = scopedArg.split("=")[1]?.split(",").filter(Boolean) ?? [];
    const secretNamespaces = list.includes("*") ? "*" : [...new Set([NAMESPACE, ...list])];
    process.stdout.write(rbacYaml(rbacObjects(undefined, undefined, { secretNamespaces })));
  } else if (process.argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(file, "utf8");
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error("infra/k8s/rbac.yaml is stale. Run node infra/k8s/gen-rbac.ts.");
      process.exit(1);
    }
  } else {
    writeFileSync(file, text);
    console.log(`wrote ${file}`);
  }
}
