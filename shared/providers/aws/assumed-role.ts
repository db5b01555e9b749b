// Temporary credentials of a role the function's own identity assumes (STS AssumeRole), shared by every
// client that acts as that role: one AssumeRole per role while its credentials last, a new one some
// minutes before they expire, concurrent callers waiting on the same call. Used for the generated kinds'
// roles (docs/adr/0014): the reconcile role is past IAM's quotas with every kind's statements on it.
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from "@smithy/types";
import { CredentialsError } from "../../api/external.ts";
import { type AwsClientConfig, classifyAwsError } from "./config.ts";

/** Credentials are renewed this long before they expire, so no request is signed with ones about to lapse. */
export const REFRESH_BEFORE_MS = 5 * 60_000;
/** The session name CloudTrail shows for a generated kind's calls (the role's ARN says which group). */
export const SESSION_NAME = "driftless-awscc";

interface Held {
  credentials: Promise<AwsCredentialIdentity & { expiration: Date }>;
}

const held = new Map<string, Held>();

/** Where STS is asked: the ambient identity's region (and endpoint, in tests). */
export interface AssumeOptions {
  region: string;
  now?: () => number;
}

async function assume(roleArn: string, opts: AssumeOptions) {
  const { STSClient, AssumeRoleCommand } = await import("@aws-sdk/client-sts");
  // The ambient identity (the function's execution role) asks; the SDK finds its credentials.
  const sts = new STSClient({ region: opts.region, maxAttempts: 3 });
  try {
    const out = await sts.send(new AssumeRoleCommand({ RoleArn: roleArn, RoleSessionName: SESSION_NAME }));
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.Expiration)
      throw new CredentialsError(`STS AssumeRole of ${roleArn} answered without credentials`);
    return {
      accessKeyId: c.AccessKeyId,
      secretAccessKey: c.SecretAccessKey,
      ...(c.SessionToken ? { sessionToken: c.SessionToken } : {}),
      expiration: c.Expiration,
    };
  } catch (err) {
    // AccessDenied (the role is not the reconcile role's to assume) becomes a CredentialsError.
    throw classifyAwsError(err);
  } finally {
    sts.destroy();
  }
}

/**
 * The credentials of `roleArn` as an SDK credentials provider: the held ones while they have more than
 * REFRESH_BEFORE_MS left, else one new AssumeRole for every caller; a failed call is not held.
 */
export function assumedRoleCredentials(roleArn: string, opts: AssumeOptions): AwsCredentialIdentityProvider {
  const now = opts.now ?? Date.now;
  // Per role, not per region: credentials from a regional STS endpoint are valid in every region.
  const key = roleArn;
  return async () => {
    const had = held.get(key);
    if (had) {
      const c = await had.credentials.catch(() => undefined);
      if (c && c.expiration.getTime() - now() > REFRESH_BEFORE_MS) return c;
      if (held.get(key) !== had) return (held.get(key) as Held).credentials;
    }
    const credentials = assume(roleArn, opts);
    const entry = { credentials };
    held.set(key, entry);
    credentials.catch(() => {
      if (held.get(key) === entry) held.delete(key);
    });
    return credentials;
  };
}

/** `cfg` acting as `roleArn`: the role's credentials, and a client of its own (the cache key names the role). */
export function asRole(cfg: AwsClientConfig, roleArn: string, now?: () => number): AwsClientConfig {
  return {
    ...cfg,
    credentials: assumedRoleCredentials(roleArn, { region: cfg.region, ...(now ? { now } : {}) }),
    cacheKey: `${cfg.cacheKey}/${roleArn}`,
  };
}
