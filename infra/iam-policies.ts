// The reconcile role's policy sizes as IAM counts them, and the generated kinds' statements packed into
// managed policies that each fit IAM's limit. IAM quotas (docs.aws.amazon.com/IAM/latest/UserGuide/
// reference_iam-quotas.html): a managed policy holds 6,144 characters, a role's inline policies 10,240 in
// all, and a role takes 10 managed policies by default (20 at most, by a quota increase); whitespace is not
// counted.
import type { IamStatement } from "../shared/api/external.ts";

export const IAM_LIMITS = {
  managedPolicyChars: 6_144,
  inlineRoleChars: 10_240,
  managedPoliciesPerRole: 10,
  managedPoliciesPerRoleMax: 20,
} as const;

/**
 * The values a statement's placeholders take when sizes are measured: the longest a stage can give (the
 * `aws-us-gov` partition, a 14-character region, a 12-digit account), so a policy that fits here fits in
 * every partition and region.
 */
export const WORST_CASE_STAGE = {
  partition: "aws-us-gov",
  account: "123456789012",
  region: "ap-southeast-7",
  namePrefix: "driftless-production-",
};

/** Where a policy's ARNs and conditions point: the placeholders of IamStatement resolved. */
export type Stage = typeof WORST_CASE_STAGE;

/** `text` with the statement placeholders resolved for `stage`. */
export const resolved = (text: string, stage: Stage) =>
  text
    .replaceAll("{partition}", stage.partition)
    .replaceAll("{account}", stage.account)
    .replaceAll("{region}", stage.region)
    .replaceAll("{namePrefix}", stage.namePrefix);

/** A statement as it stands in a policy document (the comment is not part of it). */
function documentStatement(s: IamStatement, stage: Stage) {
  return {
    Sid: s.sid,
    Effect: "Allow",
    Action: s.actions,
    Resource: s.resources.map((r) => resolved(r, stage)),
    ...(s.condition ? { Condition: JSON.parse(resolved(JSON.stringify(s.condition), stage)) } : {}),
  };
}

/** A policy document's size as IAM counts it: its JSON without whitespace. */
export function policySize(statements: readonly IamStatement[], stage: Stage = WORST_CASE_STAGE): number {
  return JSON.stringify({
    Version: "2012-10-17",
    Statement: statements.map((s) => documentStatement(s, stage)),
  }).length;
}

const SID_SUFFIX_ROOM = 8;
/** `list` in two halves, in order. */
const halve = <T>(list: readonly T[]): [T[], T[]] => {
  const at = Math.ceil(list.length / 2);
  return [list.slice(0, at), list.slice(at)];
};

/**
 * A statement in two that together allow exactly what it does: its largest list halved — its actions, its
 * resources, or the values of one condition key (a key's values are alternatives) — of those with more
 * than one member; undefined when none has.
 */
function split(s: IamStatement): [IamStatement, IamStatement] | undefined {
  const choices: Array<{ size: number; halves: () => [IamStatement, IamStatement] }> = [];
  const add = <T>(list: readonly T[], put: (part: T[]) => IamStatement) => {
    if (list.length > 1)
      choices.push({
        size: JSON.stringify(list).length,
        halves: () => {
          const [a, b] = halve(list);
          return [put(a), put(b)];
        },
      });
  };
  add(s.actions, (actions) => ({ ...s, actions }));
  add(s.resources, (resources) => ({ ...s, resources }));
  for (const [op, keys] of Object.entries(s.condition ?? {}))
    for (const [key, value] of Object.entries(keys))
      if (Array.isArray(value))
        add(value, (values) => ({ ...s, condition: { ...s.condition, [op]: { ...keys, [key]: values } } }));
  const largest = choices.sort((a, b) => b.size - a.size)[0];
  return largest?.halves();
}

/** A statement too large for one policy as parts that each fit `limit` alone; sids get `P1`, `P2`… in order. */
function parts(s: IamStatement, limit: number, stage: Stage): IamStatement[] {
  // Room for the `P<n>` a part's sid gets.
  if (policySize([s], stage) + SID_SUFFIX_ROOM <= limit) return [s];
  const halves = split(s);
  if (!halves) throw new Error(`IAM statement ${s.sid} alone exceeds ${limit} characters`);
  return halves.flatMap((h) => parts(h, limit, stage)).map((p, i) => ({ ...p, sid: `${s.sid}P${i + 1}` }));
}

/**
 * `statements` packed into policy documents of at most `limit` characters each (IAM's count), in a way that
 * depends only on the statements and their order: each (part of a) statement goes into the first document
 * it fits, a new one when none has room.
 */
export function packPolicies(
  statements: readonly IamStatement[],
  limit: number = IAM_LIMITS.managedPolicyChars,
  stage: Stage = WORST_CASE_STAGE,
): IamStatement[][] {
  const docs: Array<{ statements: IamStatement[]; size: number }> = [];
  // A document's size is its frame, its statements' sizes and the commas between them.
  const frame = policySize([], stage);
  for (const s of statements)
    for (const p of parts(s, limit, stage)) {
      const size = JSON.stringify(documentStatement(p, stage)).length;
      const fits = docs.find((d) => d.size + 1 + size <= limit);
      if (fits) {
        fits.statements.push(p);
        fits.size += 1 + size;
      } else docs.push({ statements: [p], size: frame + size });
    }
  return docs.map((d) => d.statements);
}

/** Policy documents as IAM takes them, every placeholder resolved for `stage` (another account's role). */
export function policyDocuments(docs: readonly IamStatement[][], stage: Stage) {
  return docs.map((d) => ({ Version: "2012-10-17", Statement: d.map((s) => documentStatement(s, stage)) }));
}

/** An ARN pattern's segments up to the account: `arn:{partition}:<service>:<region>:<account>:`. */
const ARN_HEAD = /^(arn:\{partition\}:[a-z0-9-]+:(?:\*|):\{account\}:).+$/;

/**
 * A statement's resources with every pattern in the stage's account widened to its service's every
 * resource there (`arn:{partition}:ec2:*:{account}:*`). It allows exactly what the statement did when every
 * action in it lists the patterns of every resource type the Service Authorization Reference names for it
 * (handlerIam's statements do): a call acts only on resources of its action's types, all of which the
 * statement already allowed in the stage's account, and the wider pattern adds no other account.
 */
function widenedResources(resources: readonly string[]): string[] {
  return [...new Set(resources.map((r) => r.replace(ARN_HEAD, "$1*")))];
}

const sameCondition = (s: IamStatement) => JSON.stringify(s.condition ?? {});

/**
 * The generated kinds' statements in fewer characters, allowing exactly the same calls (docs/adr/0014):
 * statements with the same condition merge (actions and resources unioned: each action already lists all of
 * its resource types, see widenedResources), and so do statements that differ only in the values of one
 * condition key (the values are alternatives); resources are widened to their service in the stage's
 * account. Never merged: statements with different conditions otherwise — a kind's call held to its own
 * tag stays held to it alone. Sids: a group keeps its first member's sid when alone, otherwise
 * `Awscc<Scoped|Any><Untagged?><Global?>` by shape (numbered after the first).
 */
export function compactStatements(statements: readonly IamStatement[]): IamStatement[] {
  const byCondition = new Map<string, IamStatement[]>();
  for (const s of statements) {
    const key = `${s.resources.includes("*") ? "*" : "arn"} ${sameCondition(s)}`;
    byCondition.set(key, [...(byCondition.get(key) ?? []), s]);
  }
  const sids = new Map<string, number>();
  const sidOf = (group: readonly IamStatement[]) => {
    const first = group[0] as IamStatement;
    if (group.length === 1) return first.sid;
    const shape = `Awscc${first.resources.includes("*") ? "Any" : "Scoped"}${first.condition?.Null ? "Untagged" : ""}${first.condition?.StringEquals?.["aws:RequestedRegion"] ? "" : "Global"}`;
    const n = (sids.get(shape) ?? 0) + 1;
    sids.set(shape, n);
    return n === 1 ? shape : `${shape}${n}`;
  };
  const merged = [...byCondition.values()].flatMap((group): IamStatement[] => {
    const one = (members: readonly IamStatement[], resources: string[], sid: string): IamStatement => ({
      sid,
      actions: [...new Set(members.flatMap((s) => s.actions))],
      resources,
      ...(members[0]?.condition ? { condition: members[0].condition } : {}),
      comment:
        members.length === 1
          ? members[0]?.comment
          : `${members.length} statements of the generated kinds with this condition and these resources, merged (docs/adr/0014): ${members.map((s) => s.sid).join(", ")}.`,
    });
    if (group.some((s) => s.resources.includes("*"))) return [one(group, ["*"], sidOf(group))];
    // Merged only where the widened resources are the same: a union of resources across statements
    // would repeat every service's ARNs beside every action, and split past a policy's size.
    const bySet = new Map<string, IamStatement[]>();
    for (const s of group) {
      const key = JSON.stringify(widenedResources(s.resources).sort());
      bySet.set(key, [...(bySet.get(key) ?? []), s]);
    }
    return [...bySet.entries()].map(([key, members]) =>
      one(members, JSON.parse(key) as string[], sidOf(members)),
    );
  });
  // Statements alike but for one condition key's values: one statement with the values unioned.
  const alike = new Map<string, IamStatement>();
  const out: IamStatement[] = [];
  for (const s of merged) {
    const multi = Object.entries(s.condition ?? {}).flatMap(([op, keys]) =>
      Object.entries(keys)
        .filter(([, v]) => Array.isArray(v))
        .map(([k]) => [op, k] as const),
    );
    if (multi.length !== 1) {
      out.push(s);
      continue;
    }
    const [op, k] = multi[0] as readonly [string, string];
    const rest = { ...s.condition, [op]: { ...s.condition?.[op], [k]: null } };
    const key = JSON.stringify([[...s.actions].sort(), [...s.resources].sort(), op, k, rest]);
    const had = alike.get(key);
    if (!had) {
      const copy = structuredClone(s);
      alike.set(key, copy);
      out.push(copy);
      continue;
    }
    const keys = had.condition?.[op] as Record<string, string[]>;
    keys[k] = [...new Set([...(keys[k] ?? []), ...((s.condition?.[op]?.[k] as string[]) ?? [])])];
    had.comment = `${had.comment ?? ""}\n${s.comment ?? ""}`.trim();
  }
  return out;
}
