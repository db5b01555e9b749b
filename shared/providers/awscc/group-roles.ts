// Which role a generated kind's calls go out as under an InjectedIdentity ProviderConfig: its service's role
// group (role-groups.ts, generated with serverless.yml's `AwsccRole<n>`), named by the deployment
// (DRIFTLESS_AWSCC_ROLE_ARN_PREFIX + n). None when the deployment names no roles (`driftless run`, a
// deployment without generated kinds' IAM): the ambient identity acts itself, as before (docs/adr/0014).
import { AWSCC_ROLE_GROUPS } from "./role-groups.ts";

export const ROLE_ARN_PREFIX_ENV = "DRIFTLESS_AWSCC_ROLE_ARN_PREFIX";

/** The role a generated kind of `service` (`ec2` of `ec2.awscc`) acts as, or undefined for the ambient identity. */
export function groupRoleArn(
  service: string,
  env: Record<string, string | undefined> = process.env,
  groups: ReadonlyArray<readonly string[]> | undefined = AWSCC_ROLE_GROUPS,
): string | undefined {
  const prefix = env[ROLE_ARN_PREFIX_ENV];
  if (!prefix) return undefined;
  const at = (groups ?? AWSCC_ROLE_GROUPS).findIndex((g) => g.includes(service));
  return at === -1 ? undefined : `${prefix}${at + 1}`;
}
