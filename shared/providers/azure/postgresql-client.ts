// The Azure Database for PostgreSQL kinds' shared pieces: the flexible-server client of a ProviderConfig
// and what the server's children (firewall rules, databases) do alike: where they live, "busy" answers.
import { PostgreSQLManagementFlexibleServerClient } from "@azure/arm-postgresql-flexible";
import type { ConnectContext } from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import {
  armClientOptions,
  azureCredential,
  azureEndpoints,
  ClientCache,
  classifyAzureError,
  codeIs,
  isNotFound,
} from "./config.ts";

const clients = new ClientCache<PostgreSQLManagementFlexibleServerClient>();

/** The PostgreSQL flexible-server client of a ProviderConfig, cached per credential and endpoint. */
export async function postgresClient(
  ctx: ConnectContext<AzureProviderConfigSpec>,
): Promise<PostgreSQLManagementFlexibleServerClient> {
  const spec = ctx.providerConfig.spec;
  const { credential, cacheKey } = await azureCredential(ctx);
  // The checked, normalised URL (endpoints.ts), never the raw text.
  const endpoint = azureEndpoints(spec).resourceManager?.url;
  return clients.get(`${cacheKey}/${spec.subscriptionID}/${endpoint}`, () => {
    return new PostgreSQLManagementFlexibleServerClient(
      credential,
      spec.subscriptionID,
      armClientOptions(endpoint),
    );
  });
}

/** Something other than a missing resource that answers 404 (a missing subscription) is an error. */
export const isGone = (err: unknown) => isNotFound(err) && !codeIs(err, "SubscriptionNotFound");

// Answers while another operation runs on the server (create, scale, restart): wait, then send again.
const BUSY = ["ServerBusy", "OperationInProgress", "AnotherOperationInProgress", "ServerIsBusy"];

/** Runs a write on a server (or its children): a busy server is a wait, said plainly; other errors classified. */
export async function onServer<T>(server: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (codeIs(err, ...BUSY)) {
      throw new Error(
        `another operation runs on flexible server ${server}; the change is sent once it is done`,
        {
          cause: err,
        },
      );
    }
    if (codeIs(err, "ServerNameAlreadyExists")) {
      throw new InvalidSpecError(
        `ServerNameAlreadyExists: ${(err as Error).message} Server names are unique across Azure: choose another crossplane.io/external-name.`,
        { cause: err },
      );
    }
    const classified = classifyAzureError(err);
    const code = (err as { code?: string }).code;
    // What has no class of its own (QuotaExceeded, a conflict) keeps ARM's code in the condition.
    throw classified === err && code
      ? new Error(`${code}: ${(err as Error).message}`, { cause: err })
      : classified;
  }
}

/** Where a server's child lives; undefined until both names are known (set or resolved from references). */
export function serverOf(fp: { resourceGroupName?: string; serverName?: string }) {
  const { resourceGroupName: rg, serverName: server } = fp;
  return rg && server ? { rg, server } : undefined;
}

export const serverKey = (p: { rg: string; server: string }) => `${p.rg}/${p.server}`.toLowerCase();

export const requireServer = (fp: { resourceGroupName?: string; serverName?: string }) => {
  const parent = serverOf(fp);
  if (!parent) {
    throw new InvalidSpecError(
      "spec.forProvider.resourceGroupName and serverName (or their Ref/Selector) are required",
    );
  }
  return parent;
};

/** Two ARM ids name the same resource (ARM ids are case-insensitive). */
export const sameId = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
