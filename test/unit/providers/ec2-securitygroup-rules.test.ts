import { describe, expect, it } from "vitest";
import { InvalidSpecError } from "../../../shared/api/external.ts";
import {
  canonicalProtocol,
  cloudAtoms,
  ruleChanges,
  rulesInSync,
  specAtoms,
} from "../../../shared/providers/aws/ec2-securitygroup.ts";

describe("security group rules as sets", () => {
  it("spells protocols the way AWS reports them", () => {
    expect(["6", "TCP", "17", "1", "58", "all", "-1", "50"].map(canonicalProtocol)).toEqual([
      "tcp",
      "tcp",
      "udp",
      "icmp",
      "icmpv6",
      "-1",
      "-1",
      "50",
    ]);
  });

  it("finds a spec and the cloud in sync whatever the order, grouping and spelling", () => {
    const spec = specAtoms(
      [
        { protocol: "6", fromPort: 443, toPort: 443, ipv6CidrBlocks: ["2001:DB8:0:0::/32"] },
        { protocol: "tcp", fromPort: 5432, toPort: 5432, cidrBlocks: ["10.1.0.0/16", "10.0.0.0/16"] },
        { protocol: "icmp", cidrBlocks: ["10.0.0.0/8"] },
        { protocol: "all", sourceSecurityGroupIds: ["sg-1"] },
      ],
      "ingress",
    );
    const cloud = cloudAtoms([
      { IpProtocol: "-1", UserIdGroupPairs: [{ GroupId: "sg-1", UserId: "123" }] },
      { IpProtocol: "icmp", FromPort: -1, ToPort: -1, IpRanges: [{ CidrIp: "10.0.0.0/8" }] },
      {
        IpProtocol: "tcp",
        FromPort: 5432,
        ToPort: 5432,
        IpRanges: [{ CidrIp: "10.0.0.0/16" }, { CidrIp: "10.1.0.0/16", Description: "not managed" }],
      },
      { IpProtocol: "tcp", FromPort: 443, ToPort: 443, Ipv6Ranges: [{ CidrIpv6: "2001:db8::/32" }] },
    ]);
    expect(rulesInSync(spec, cloud)).toBe(true);
    expect(ruleChanges(spec, cloud)).toEqual({ authorize: [], redescribe: [], revoke: [] });
  });

  it("compares host bits away, as AWS does with CIDRs", () => {
    const spec = specAtoms(
      [{ protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: ["10.0.0.1/8"] }],
      "ingress",
    );
    const cloud = cloudAtoms([
      { IpProtocol: "tcp", FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: "10.0.0.0/8" }] },
    ]);
    expect(rulesInSync(spec, cloud)).toBe(true);
  });

  it("authorizes what is missing, revokes what is extra (in the cloud's spelling) and fixes managed descriptions", () => {
    const spec = specAtoms(
      [
        { protocol: "tcp", fromPort: 80, toPort: 80, cidrBlocks: ["0.0.0.0/0"], description: "web" },
        { protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: ["0.0.0.0/0"] },
      ],
      "egress",
    );
    const cloud = cloudAtoms([
      { IpProtocol: "-1", IpRanges: [{ CidrIp: "0.0.0.0/0" }] },
      {
        IpProtocol: "tcp",
        FromPort: 80,
        ToPort: 80,
        IpRanges: [{ CidrIp: "0.0.0.0/0", Description: "old" }],
      },
    ]);
    const changes = ruleChanges(spec, cloud);
    expect(rulesInSync(spec, cloud)).toBe(false);
    expect(changes.authorize).toEqual([
      { protocol: "tcp", fromPort: 443, toPort: 443, peer: "cidr", value: "0.0.0.0/0" },
    ]);
    expect(changes.redescribe).toEqual([
      { protocol: "tcp", fromPort: 80, toPort: 80, peer: "cidr", value: "0.0.0.0/0", description: "web" },
    ]);
    expect(changes.revoke).toEqual([{ protocol: "-1", peer: "cidr", value: "0.0.0.0/0" }]);
  });

  it("refuses rules the cloud could never hold", () => {
    expect(() => specAtoms([{ protocol: "tcp", cidrBlocks: ["10.0.0.0/8"] }], "ingress")).toThrow(
      InvalidSpecError,
    );
    expect(() =>
      specAtoms([{ protocol: "tcp", fromPort: 9, toPort: 1, cidrBlocks: ["10.0.0.0/8"] }], "ingress"),
    ).toThrow("fromPort is greater than toPort");
    expect(() => specAtoms([{ protocol: "-1" }], "egress")).toThrow("allows nothing");
  });
});
