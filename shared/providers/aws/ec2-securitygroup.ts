import {
  AuthorizeSecurityGroupEgressCommand,
  AuthorizeSecurityGroupIngressCommand,
  type SecurityGroup as CloudGroup,
  CreateSecurityGroupCommand,
  type CreateSecurityGroupCommandOutput,
  DeleteSecurityGroupCommand,
  DescribeSecurityGroupsCommand,
  type DescribeSecurityGroupsCommandOutput,
  type IpPermission,
  RevokeSecurityGroupEgressCommand,
  RevokeSecurityGroupIngressCommand,
  type TagSpecification,
  UpdateSecurityGroupRuleDescriptionsEgressCommand,
  UpdateSecurityGroupRuleDescriptionsIngressCommand,
} from "@aws-sdk/client-ec2";
import type { z } from "zod";
import {
  type EgressRule,
  type IngressRule,
  SecurityGroup,
  type SecurityGroupAtProvider,
  type SecurityGroupForProvider,
} from "../../api/aws/ec2.ts";
import type { ExternalObservation } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import { defined } from "../../api/json.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { codeIs, type Ec2Kind, Ec2KindClient, ec2Provider } from "./ec2-common.ts";

type F = z.infer<typeof SecurityGroupForProvider>;
type A = z.infer<typeof SecurityGroupAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
type Rule = z.infer<typeof IngressRule> & z.infer<typeof EgressRule>;
type Direction = "ingress" | "egress";

export const DEFAULT_GROUP_DESCRIPTION = "Managed by driftless";

// The group as observe() read it, handed to update() (the engine passes the very same observation).
const groupOf = new WeakMap<Observation, CloudGroup>();

// ---------------------------------------------------------------------------------------------------
// Rules as sets. AWS stores a group's rules as atomic permissions (one protocol, port range and peer
// each) and reports them merged per protocol and ports, in its own order. Both the spec and the cloud
// are taken apart into such atoms with one canonical spelling, so order, grouping and spelling ("6" or
// "tcp", "2001:DB8::/32" or "2001:db8::/32") never look like drift.
// ---------------------------------------------------------------------------------------------------

type PeerKind = "cidr" | "cidr6" | "prefixList" | "group";

interface Atom {
  protocol: string;
  fromPort?: number;
  toPort?: number;
  peer: PeerKind;
  /** As the cloud or the user spelled it: revoke sends the cloud's spelling back. */
  value: string;
  description?: string;
}

const PROTOCOL_NAMES: Record<string, string> = {
  all: "-1",
  "-1": "-1",
  "6": "tcp",
  "17": "udp",
  "1": "icmp",
  "58": "icmpv6",
};

export function canonicalProtocol(p: string): string {
  const lower = p.trim().toLowerCase();
  return PROTOCOL_NAMES[lower] ?? lower;
}

/** Ports as AWS keeps them: a range for tcp/udp, type and code for ICMP (-1: all), none otherwise. */
function portsOf(protocol: string, from: number | undefined, to: number | undefined) {
  if (protocol === "tcp" || protocol === "udp") return { fromPort: from, toPort: to };
  if (protocol === "icmp" || protocol === "icmpv6") return { fromPort: from ?? -1, toPort: to ?? -1 };
  return {};
}

function canonicalIpv4(cidr: string): string | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(cidr.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const ip = octets.reduce((n, o) => n * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  const net = Math.floor(ip / size) * size;
  return `${[24, 16, 8, 0].map((s) => Math.floor(net / 2 ** s) % 256).join(".")}/${prefix}`;
}

function canonicalIpv6(cidr: string): string | undefined {
  const [addr = "", prefixText = ""] = cidr.trim().toLowerCase().split("/");
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > 128 || addr.includes(".")) return undefined;
  const halves = addr.split("::");
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined) => (s ? s.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0 || (halves.length === 1 && head.length !== 8)) return undefined;
  const groups = [...head, ...Array<string>(fill).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  let value = groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
  const hostBits = BigInt(128 - prefix);
  value = (value >> hostBits) << hostBits;
  const words = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(16 * (7 - i))) & 0xffffn));
  // RFC 5952: the longest run (two or more) of zero groups becomes "::", the first one on a tie.
  let best = { start: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > best.len && j - i >= 2) best = { start: i, len: j - i };
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  const text =
    best.start < 0
      ? hex.join(":")
      : `${hex.slice(0, best.start).join(":")}::${hex.slice(best.start + best.len).join(":")}`;
  return `${text}/${prefix}`;
}

function canonicalPeer(peer: PeerKind, value: string): string {
  if (peer === "cidr") return canonicalIpv4(value) ?? value.trim();
  if (peer === "cidr6") return canonicalIpv6(value) ?? value.trim().toLowerCase();
  return value.trim();
}

const keyOf = (a: Atom) =>
  `${a.protocol}|${a.fromPort ?? ""}|${a.toPort ?? ""}|${a.peer}:${canonicalPeer(a.peer, a.value)}`;

function peersOf(rule: Rule, direction: Direction): Array<[PeerKind, string]> {
  const groups = direction === "ingress" ? rule.sourceSecurityGroupIds : rule.destinationSecurityGroupIds;
  return [
    ...(rule.cidrBlocks ?? []).map((v) => ["cidr", v] as [PeerKind, string]),
    ...(rule.ipv6CidrBlocks ?? []).map((v) => ["cidr6", v] as [PeerKind, string]),
    ...(rule.prefixListIds ?? []).map((v) => ["prefixList", v] as [PeerKind, string]),
    ...(groups ?? []).map((v) => ["group", v] as [PeerKind, string]),
  ];
}

/** The spec's rules as atoms, keyed; a rule the cloud could never accept is an InvalidSpecError. */
export function specAtoms(rules: Rule[], direction: Direction): Map<string, Atom> {
  const out = new Map<string, Atom>();
  rules.forEach((rule, i) => {
    const where = `spec.forProvider.${direction}[${i}]`;
    const protocol = canonicalProtocol(rule.protocol);
    const ports = portsOf(protocol, rule.fromPort, rule.toPort);
    if (
      (protocol === "tcp" || protocol === "udp") &&
      (ports.fromPort === undefined || ports.toPort === undefined)
    )
      throw new InvalidSpecError(`${where}: ${protocol} needs fromPort and toPort`);
    if ((protocol === "tcp" || protocol === "udp") && (ports.fromPort ?? 0) > (ports.toPort ?? 0))
      throw new InvalidSpecError(`${where}: fromPort is greater than toPort`);
    const peers = peersOf(rule, direction);
    if (peers.length === 0) {
      throw new InvalidSpecError(
        `${where}: names no cidrBlocks, ipv6CidrBlocks, prefixListIds or security groups, so it allows nothing`,
      );
    }
    for (const [peer, value] of peers) {
      const atom: Atom = { protocol, ...ports, peer, value, ...defined({ description: rule.description }) };
      out.set(keyOf(atom), atom);
    }
  });
  return out;
}

/** The cloud's permissions as atoms, keyed. */
export function cloudAtoms(permissions: IpPermission[] | undefined): Map<string, Atom> {
  const out = new Map<string, Atom>();
  for (const p of permissions ?? []) {
    const protocol = canonicalProtocol(p.IpProtocol ?? "-1");
    const ports = portsOf(protocol, p.FromPort, p.ToPort);
    const add = (peer: PeerKind, value: string | undefined, description: string | undefined) => {
      if (!value) return;
      const atom: Atom = { protocol, ...ports, peer, value, ...(description ? { description } : {}) };
      out.set(keyOf(atom), atom);
    };
    for (const r of p.IpRanges ?? []) add("cidr", r.CidrIp, r.Description);
    for (const r of p.Ipv6Ranges ?? []) add("cidr6", r.CidrIpv6, r.Description);
    for (const r of p.PrefixListIds ?? []) add("prefixList", r.PrefixListId, r.Description);
    for (const r of p.UserIdGroupPairs ?? []) add("group", r.GroupId, r.Description);
  }
  return out;
}

/** Descriptions are compared only where the spec sets one. */
const describedAlike = (want: Atom, got: Atom) =>
  want.description === undefined || want.description === (got.description ?? "");

export function rulesInSync(desired: Map<string, Atom>, cloud: Map<string, Atom>): boolean {
  if (desired.size !== cloud.size) return false;
  for (const [k, want] of desired) {
    const got = cloud.get(k);
    if (!got || !describedAlike(want, got)) return false;
  }
  return true;
}

/** The cloud's rules in the spec's shape, merged per protocol, ports and description, sorted. */
function rulesOf(atoms: Map<string, Atom>, direction: Direction): Rule[] {
  const byRule = new Map<string, Rule>();
  for (const key of [...atoms.keys()].sort()) {
    const a = atoms.get(key) as Atom;
    const ruleKey = JSON.stringify([a.protocol, a.fromPort, a.toPort, a.description]);
    let rule = byRule.get(ruleKey);
    if (!rule) {
      rule = {
        protocol: a.protocol,
        ...defined({ fromPort: a.fromPort, toPort: a.toPort, description: a.description }),
      } as Rule;
      byRule.set(ruleKey, rule);
    }
    const field =
      a.peer === "cidr"
        ? "cidrBlocks"
        : a.peer === "cidr6"
          ? "ipv6CidrBlocks"
          : a.peer === "prefixList"
            ? "prefixListIds"
            : direction === "ingress"
              ? "sourceSecurityGroupIds"
              : "destinationSecurityGroupIds";
    rule[field] = [...(rule[field] ?? []), canonicalPeer(a.peer, a.value)];
  }
  return [...byRule.values()];
}

/** The rules to report as observed: the spec's own list when the sets agree, else the cloud's. */
function observedRules(
  spec: Rule[] | undefined,
  permissions: IpPermission[] | undefined,
  direction: Direction,
) {
  if (spec === undefined) return undefined;
  const cloud = cloudAtoms(permissions);
  let desired: Map<string, Atom> | undefined;
  try {
    desired = specAtoms(spec, direction);
  } catch {
    // A rule the cloud cannot hold is drift; update() names the problem.
    desired = undefined;
  }
  return desired && rulesInSync(desired, cloud) ? spec : rulesOf(cloud, direction);
}

/** One atom as an IpPermission: what AuthorizeSecurityGroup*, Revoke* and UpdateSecurityGroupRuleDescriptions* take. */
function permissionOf(a: Atom, withDescription: boolean): IpPermission {
  const description = withDescription && a.description !== undefined ? { Description: a.description } : {};
  const base: IpPermission = {
    IpProtocol: a.protocol,
    ...(a.fromPort !== undefined ? { FromPort: a.fromPort } : {}),
    ...(a.toPort !== undefined ? { ToPort: a.toPort } : {}),
  };
  switch (a.peer) {
    case "cidr":
      return { ...base, IpRanges: [{ CidrIp: a.value, ...description }] };
    case "cidr6":
      return { ...base, Ipv6Ranges: [{ CidrIpv6: a.value, ...description }] };
    case "prefixList":
      return { ...base, PrefixListIds: [{ PrefixListId: a.value, ...description }] };
    default:
      return { ...base, UserIdGroupPairs: [{ GroupId: a.value, ...description }] };
  }
}

/** What makes the cloud's rules equal the spec's: authorize the missing, fix descriptions, revoke the rest. */
export function ruleChanges(desired: Map<string, Atom>, cloud: Map<string, Atom>) {
  const authorize = [...desired].filter(([k]) => !cloud.has(k)).map(([, a]) => a);
  const redescribe = [...desired]
    .filter(([k, a]) => {
      const got = cloud.get(k);
      return got !== undefined && !describedAlike(a, got);
    })
    .map(([, a]) => a);
  const revoke = [...cloud].filter(([k]) => !desired.has(k)).map(([, a]) => a);
  return { authorize, redescribe, revoke };
}

/** The security groups as the EC2 template (ec2-common.ts) reads them. */
const GROUPS: Ec2Kind<CloudGroup, DescribeSecurityGroupsCommandOutput, CreateSecurityGroupCommandOutput> = {
  noun: "security group",
  type: "security-group",
  idPrefix: "sg",
  idFilter: "group-id",
  notFound: ["InvalidGroup.NotFound", "InvalidGroupId.NotFound"],
  describe: ({ ids, ...input }) =>
    new DescribeSecurityGroupsCommand({ ...input, ...(ids ? { GroupIds: ids } : {}) }),
  page: (out) => ({ items: out.SecurityGroups, nextToken: out.NextToken }),
  idOf: (g) => g.GroupId,
  create: { call: "CreateSecurityGroup", idField: "GroupId", idOf: (out) => out.GroupId },
  remove: (id) => new DeleteSecurityGroupCommand({ GroupId: id }),
  inUse: ["InvalidGroup.InUse"],
  iam: {
    describe: ["DescribeSecurityGroups"],
    manage: [
      "DeleteSecurityGroup",
      "AuthorizeSecurityGroupIngress",
      "AuthorizeSecurityGroupEgress",
      "RevokeSecurityGroupIngress",
      "RevokeSecurityGroupEgress",
      "UpdateSecurityGroupRuleDescriptionsIngress",
      "UpdateSecurityGroupRuleDescriptionsEgress",
    ],
    inVpc: true,
  },
  eventIdField: "groupId",
  calls: "DescribeSecurityGroups (group-id filter; rules included)",
};

class SecurityGroupClient extends Ec2KindClient<
  F,
  A,
  CloudGroup,
  DescribeSecurityGroupsCommandOutput,
  CreateSecurityGroupCommandOutput
> {
  /**
   * What observe reports of a group as DescribeSecurityGroups returned it: its rules are in that answer
   * (IpPermissions, IpPermissionsEgress), so nothing else is read. The group is kept for update().
   */
  protected observationOf(fp: F, groupId: string, group: CloudGroup): Observation {
    const obs: Observation = {
      resourceExists: true,
      externalName: groupId,
      observed: defined({
        region: this.region,
        groupName: group.GroupName,
        description: group.Description,
        vpcId: group.VpcId,
        // Unset rule lists are not managed: not reported, so neither late-initialized nor drift.
        ingress: observedRules(fp.ingress, group.IpPermissions, "ingress"),
        egress: observedRules(fp.egress, group.IpPermissionsEgress, "egress"),
      }),
      atProvider: defined({ groupId, arn: group.SecurityGroupArn, ownerId: group.OwnerId }),
      availability: "Available",
      connectionDetails: defined({ id: groupId, arn: group.SecurityGroupArn }) as Record<string, string>,
    };
    groupOf.set(obs, group);
    return obs;
  }

  protected createCommand(mr: MR, TagSpecifications: TagSpecification[]) {
    const fp = mr.spec.forProvider;
    const vpcId = fp.vpcId;
    if (!vpcId)
      throw new InvalidSpecError(
        "spec.forProvider.vpcId (or vpcIdRef, vpcIdSelector) is required to create a security group",
      );
    // Rules are applied by update on the next reconcile, as a diff against what AWS put in the new group.
    return new CreateSecurityGroupCommand({
      GroupName: fp.groupName ?? mr.metadata.name,
      Description: fp.description ?? DEFAULT_GROUP_DESCRIPTION,
      VpcId: vpcId,
      TagSpecifications,
    });
  }

  protected async updateFields(mr: MR, id: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const group = groupOf.get(obs) ?? (await this.find(mr, id));
    if (!group) throw new Error(`security group ${id} disappeared during update`);
    if (fp.ingress !== undefined) {
      const changes = ruleChanges(specAtoms(fp.ingress, "ingress"), cloudAtoms(group.IpPermissions));
      await this.#apply(id, "ingress", changes);
    }
    if (fp.egress !== undefined) {
      const changes = ruleChanges(specAtoms(fp.egress, "egress"), cloudAtoms(group.IpPermissionsEgress));
      await this.#apply(id, "egress", changes);
    }
  }

  /** New permissions first, removals last, so traffic the spec allows is never cut off in between. */
  async #apply(id: string, direction: Direction, changes: ReturnType<typeof ruleChanges>) {
    const ingress = direction === "ingress";
    const { authorize, redescribe, revoke } = changes;
    if (authorize.length > 0) {
      const send = (IpPermissions: IpPermission[]) =>
        ingress
          ? this.ec2.send(new AuthorizeSecurityGroupIngressCommand({ GroupId: id, IpPermissions }))
          : this.ec2.send(new AuthorizeSecurityGroupEgressCommand({ GroupId: id, IpPermissions }));
      try {
        await send(authorize.map((a) => permissionOf(a, true)));
      } catch (err) {
        if (!codeIs(err, "InvalidPermission.Duplicate")) throw err;
        // A stale read (EC2 is eventually consistent) missed a rule that is there: one call fails for
        // all, so authorize one by one; already there is what we wanted.
        for (const a of authorize) {
          await send([permissionOf(a, true)]).catch((e: unknown) => {
            if (!codeIs(e, "InvalidPermission.Duplicate")) throw e;
          });
        }
      }
    }
    if (redescribe.length > 0) {
      const IpPermissions = redescribe.map((a) => permissionOf(a, true));
      if (ingress)
        await this.ec2.send(
          new UpdateSecurityGroupRuleDescriptionsIngressCommand({ GroupId: id, IpPermissions }),
        );
      else
        await this.ec2.send(
          new UpdateSecurityGroupRuleDescriptionsEgressCommand({ GroupId: id, IpPermissions }),
        );
    }
    if (revoke.length > 0) {
      // The cloud's own spelling of each permission, so it matches exactly.
      const IpPermissions = revoke.map((a) => permissionOf(a, false));
      try {
        if (ingress)
          await this.ec2.send(new RevokeSecurityGroupIngressCommand({ GroupId: id, IpPermissions }));
        else await this.ec2.send(new RevokeSecurityGroupEgressCommand({ GroupId: id, IpPermissions }));
      } catch (err) {
        // Already gone is what we wanted; the next observe shows anything left.
        if (!codeIs(err, "InvalidPermission.NotFound")) throw err;
      }
    }
  }
}

export const securityGroupProvider = ec2Provider(SecurityGroup, GROUPS, SecurityGroupClient);
