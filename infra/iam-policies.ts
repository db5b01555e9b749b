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

const resolved = (text: string, stage: Stage) =>
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
