// The IAM statements of a generated kind: the service calls Cloud Control's handlers make as the caller
// (the registry schema's handlers.*.permissions), scoped by what AWS's Service Authorization Reference
// says each action acts on (the kind spec's `iam`, from infra/awscc/iam-facts.json.gz).
import type { AwsccIamScope, AwsccKindSpec } from "../../api/awscc/spec.ts";
import type { IamStatement } from "../../api/external.ts";
import { DefaultTagKey } from "../../api/external-tags.ts";
import { namespacedGroupOf } from "../../api/managed.ts";
import { API_DOMAIN } from "../../api/meta.ts";
import { IN_STAGE_REGION, isGlobalAction } from "../aws/global-services.ts";

/**
 * How one action's statement is shaped: by resource ARNs, by those and the default tag on the resource
 * (`owned`) or in the create request (`created`), or `*`.
 */
export type ScopeClass = "scoped" | "owned" | "created" | "any" | "unlisted";

/** An action's class in a kind's scope; a spec without one (older data) leaves every action `unlisted`. */
export function scopeClassOf(scope: AwsccIamScope | undefined, action: string): ScopeClass {
  const s = scope?.actions[action];
  if (s === undefined || s === "unlisted") return "unlisted";
  if (s === "any") return "any";
  if (scope?.created?.includes(action)) return "created";
  return scope?.owned?.includes(action) ? "owned" : "scoped";
}

const CLASSES: readonly ScopeClass[] = ["scoped", "owned", "created", "any", "unlisted"];
const SUFFIX: Record<ScopeClass, string> = {
  scoped: "",
  owned: "Owned",
  created: "Create",
  any: "Any",
  unlisted: "Unlisted",
};
/** The second statement of a `created` action: its calls that carry no tags (the handler tags later). */
const UNTAGGED = "Untagged";

const COMMENT: Record<ScopeClass, (service: string) => string> = {
  scoped: (s) =>
    `The service calls Cloud Control makes for the activated ${s} kinds (registry schemas' handler permissions), ` +
    "on the resource types the Service Authorization Reference names for each, in the stage's account.",
  owned: (s) =>
    `The ${s} kinds' delete calls, on their own resource type only, and only on resources carrying the ` +
    `default tag ${DefaultTagKey.kind} of a driftless kind (every resource they create carries it; an ` +
    "imported one gets it on its first update).",
  created: (s) =>
    `The ${s} kinds' create calls that can carry tags (Service Authorization Reference), of types whose ` +
    "registry schema says they pass their tags to the create API (tagOnCreate): only with the default tag " +
    `${DefaultTagKey.kind} of a driftless kind among the request's tags (aws:RequestTag); the same calls ` +
    `without any tags are the ${UNTAGGED} statement's, since the registry does not say whether a handler tags ` +
    "in the create call or afterwards.",
  any: (s) =>
    `The ${s} kinds' calls that have no resource-level permissions (Service Authorization Reference): ` +
    'only "Resource": "*" matches them.',
  unlisted: (s) =>
    `The ${s} kinds' handler permissions the Service Authorization Reference snapshot does not name as one ` +
    'action (a wildcard such as ec2:Describe*, or an action it does not list): "*", as the registry asks.',
};

/** Whether an action names a resource pattern that is not in the stage's account (`arn:…:s3:::*`, `arn:…:*:*:*:*:*`). */
const actsElsewhere = (spec: AwsccKindSpec, action: string) => {
  const at = spec.iam?.actions[action];
  return Array.isArray(at) && at.some((i) => !spec.iam?.arns[i]?.includes(":{account}:"));
};

/**
 * `actions` in statements that may merge exactly: first those whose patterns are all in the stage's account
 * (merged across kinds and widened, docs/adr/0014), then one part per distinct set of patterns among the
 * others — each such part allows its actions on exactly their own patterns.
 */
function partsOf(spec: AwsccKindSpec, actions: readonly string[]): string[][] {
  const here = actions.filter((a) => !actsElsewhere(spec, a));
  const sets = new Map<string, string[]>();
  for (const a of actions.filter((a) => actsElsewhere(spec, a))) {
    const key = JSON.stringify(
      [...((spec.iam?.actions[a] as number[]) ?? [])].map((i) => spec.iam?.arns[i]).sort(),
    );
    sets.set(key, [...(sets.get(key) ?? []), a]);
  }
  return [here, ...sets.values()];
}

/**
 * One statement per service and shape: `Awscc<Service>` (scoped to the actions' resource ARNs),
 * `…Owned<Kind>` (those ARNs and the kind's default tag), `…Create<Kind>` and `…CreateUntagged` (those ARNs,
 * and the kind's default tag or no tags in the request), `…Any` and `…Unlisted` (`*`); kinds of one service
 * merge into them by sid, except the tag-held ones, which are each kind's own. Regional statements
 * hold to the stage's region (`aws:RequestedRegion`); a global service's actions (GLOBAL_SERVICES) go to
 * `…Global` statements without it. Every action is in exactly one statement, a `created` one in its pair.
 */
export function handlerIam(spec: AwsccKindSpec): IamStatement[] {
  const actions = [...new Set(Object.values(spec.permissions).flat())].sort();
  const service = spec.group.split(".")[0] ?? "";
  const base = `Awscc${service.charAt(0).toUpperCase()}${service.slice(1)}`.replace(/[^A-Za-z0-9]/g, "");
  const group = `${spec.group}.${API_DOMAIN}`;
  // The value defaultTagsOf writes for this kind, in both shapes.
  const kindTag = [group, namespacedGroupOf(group)].map((g) => `${spec.kind}.${g}`.toLowerCase());
  const kindName = spec.kind.replace(/[^A-Za-z0-9]/g, "");
  const statements: IamStatement[] = [];
  for (const cls of CLASSES)
    for (const global of [false, true])
      for (const [part, mine] of partsOf(
        spec,
        actions.filter((a) => scopeClassOf(spec.iam, a) === cls && isGlobalAction(a) === global),
      ).entries()) {
        if (mine.length === 0) continue;
        const elsewhere = part > 0;
        const resources = mine.flatMap((a) => {
          const at = spec.iam?.actions[a];
          if (!Array.isArray(at)) return ["*"];
          return at.map((i) => {
            const arn = spec.iam?.arns[i];
            if (!arn) throw new Error(`${spec.typeName}: ${a} names ARN ${i}, which its spec lacks`);
            return arn;
          });
        });
        const keys = {
          ...(global ? {} : IN_STAGE_REGION.StringEquals),
          ...(cls === "owned" ? { [`aws:ResourceTag/${DefaultTagKey.kind}`]: kindTag } : {}),
          ...(cls === "created" ? { [`aws:RequestTag/${DefaultTagKey.kind}`]: kindTag } : {}),
        };
        const where = global ? "Global" : "";
        // A statement held to the kind's own tag is the kind's alone: merged with another kind's by sid, it
        // would allow each kind's calls under the other's tag (docs/adr/0014).
        const held = cls === "owned" || cls === "created" ? kindName : "";
        // A statement with patterns outside the stage's account is the kind's alone too: merged, another
        // action would get them (backup:CreateBackupSelection on any account's backup plan, by the
        // arn:*:*:*:*:* of backup:TagResource), and no widening can tell them apart (docs/adr/0014).
        const apart = elsewhere ? `${held ? "" : kindName}Elsewhere${part > 1 ? part : ""}` : "";
        const shape = {
          actions: mine,
          resources: [...new Set(resources)].sort(),
          comment: `${COMMENT[cls](service)}${global ? " A global service: no region condition." : ""}`,
        };
        statements.push({
          sid: `${base}${SUFFIX[cls]}${held}${apart}${where}`,
          ...shape,
          ...(Object.keys(keys).length > 0 ? { condition: { StringEquals: keys } } : {}),
        });
        if (cls === "created")
          statements.push({
            sid: `${base}${SUFFIX[cls]}${UNTAGGED}${elsewhere ? `${kindName}Elsewhere${part > 1 ? part : ""}` : ""}${where}`,
            ...shape,
            condition: {
              ...(global ? {} : IN_STAGE_REGION),
              Null: { "aws:TagKeys": "true" },
            },
            comment: `The ${service} kinds' create calls of the ${base}${SUFFIX[cls]}${held}${apart}${where} statement, when they carry no tags.`,
          });
      }
  return statements;
}
