// Where an AWS resource lives (api/external.ts Home): the account the ProviderConfig's credentials
// resolve to (STS GetCallerIdentity, cached per ProviderConfig and credentials), the region the client
// would use, and the endpoint when the ProviderConfig overrides it.
import type { ConnectContext, Home } from "../../api/external.ts";
import type { AwsProviderConfigSpec } from "../../api/provider-config.ts";
import { type AwsClientConfig, awsClientConfig, ClientCache, sdkOptions } from "./config.ts";

/** How long an account id is trusted before STS is asked again (credentials may be rotated to another account). */
export const ACCOUNT_TTL_MS = 15 * 60_000;

interface CachedAccount {
  at: number;
  account: Promise<string>;
}

const accounts = new Map<string, CachedAccount>();
const MAX_ACCOUNTS = 256;

type StsCache = ClientCache<import("@aws-sdk/client-sts").STSClient>;
let stsClients: StsCache | undefined;

/** Asks STS who these credentials are; the one call per ProviderConfig and credentials per ACCOUNT_TTL_MS. */
async function callerAccount(cfg: AwsClientConfig): Promise<string> {
  // Loaded on first use, as the ProviderConfig check does: bundles without a home call skip it.
  const { STSClient, GetCallerIdentityCommand } = await import("@aws-sdk/client-sts");
  stsClients ??= new ClientCache((c) => new STSClient(sdkOptions(c)));
  const sts = stsClients.get(cfg);
  const out = await sts.send(new GetCallerIdentityCommand({}));
  if (!out.Account) throw new Error("STS GetCallerIdentity answered without an account id");
  return out.Account;
}

/** The account the ProviderConfig's credentials resolve to, cached per ProviderConfig generation and credentials. */
export async function awsAccount(
  ctx: ConnectContext<AwsProviderConfigSpec>,
  now: () => number = Date.now,
): Promise<string> {
  const cfg = await awsClientConfig(ctx, undefined);
  // The cache key covers uid, generation, endpoint and a fingerprint of the credentials.
  const key = cfg.cacheKey;
  const hit = accounts.get(key);
  if (hit && now() - hit.at < ACCOUNT_TTL_MS) return hit.account;
  const account = callerAccount(cfg);
  if (accounts.size >= MAX_ACCOUNTS) accounts.clear();
  accounts.set(key, { at: now(), account });
  // A failed call is not remembered: the next reconcile asks again.
  account.catch(() => {
    if (accounts.get(key)?.account === account) accounts.delete(key);
  });
  return account;
}

/** An AWS resource's home: account, region (`region` or the ProviderConfig's) and the endpoint override. */
export async function awsHome(
  ctx: ConnectContext<AwsProviderConfigSpec>,
  region: string | undefined,
): Promise<Home> {
  const cfg = await awsClientConfig(ctx, region);
  return {
    account: await awsAccount(ctx),
    region: cfg.region,
    ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
  };
}
