// The Azure Database for PostgreSQL kinds' shared pieces: the flexible servers' api-version and paths,
// "busy" answers, and the server's children (firewall rules, databases) as ARM child kinds.
import type { z } from "zod";
import { type ConnectionDetails, InvalidSpecError } from "../../api/external.ts";
import type { AnyObjectSchema, ManagedKindDef } from "../../api/managed.ts";
import { armChildProvider, type ChildMapping, type ChildParent } from "./arm-child.ts";
import type { ArmRest } from "./arm-rest.ts";
import { classifyAzureError, codeIs } from "./config.ts";

/** The Microsoft.DBforPostgreSQL api-version the hand-written PostgreSQL kinds speak. */
export const POSTGRES_API = "2025-08-01";

/** The path of the flexible servers of group `rg`, or of server `name`. */
export const serverPath = (arm: ArmRest, rg: string, name?: string) =>
  arm.sub(
    `/resourceGroups/${encodeURIComponent(rg)}/providers/Microsoft.DBforPostgreSQL/flexibleServers${name === undefined ? "" : `/${encodeURIComponent(name)}`}`,
  );

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

type Parent = { rg: string; server: string };

/** Every flexible server of the subscription, resource group by resource group. */
export async function* eachServer(arm: ArmRest): AsyncGenerator<Parent> {
  for await (const { group, item } of arm.eachInGroups<{ name?: string }>(
    (rg) => serverPath(arm, rg),
    POSTGRES_API,
  ))
    if (item.name) yield { rg: group, server: item.name };
}

/** Where a server's child lives: its server, once both names are known (set or resolved from references). */
const SERVER: ChildParent<{ resourceGroupName?: string; serverName?: string }, Parent> = {
  of: ({ resourceGroupName: rg, serverName: server }) => (rg && server ? { rg, server } : undefined),
  key: (p) => `${p.rg}/${p.server}`.toLowerCase(),
  fields: (p) => ({ resourceGroupName: p.rg, serverName: p.server }),
  missing: "spec.forProvider.resourceGroupName and serverName (or their Ref/Selector) are required",
};

/**
 * What a server's child kind maps: its own members as observed (its server's names and its id are the
 * template's), its connection details, and the bodies that create or update one.
 */
type ServerChildMapping<F, A, T> = Omit<ChildMapping<F, A, Parent, T>, "observationOf"> & {
  observed(child: T): Partial<F>;
  connectionDetails?(child: T): ConnectionDetails | undefined;
};

/**
 * A flexible server's child kind (firewall rule, database): its definition, ARM's name of its
 * collection (the cloud events, the external name in a resource URI and its path under the server), its
 * list call's name in Azure's REST reference and its field mapping; its writes wait while the server is busy.
 */
export function serverChildProvider<
  FS extends AnyObjectSchema,
  AS extends AnyObjectSchema,
  T extends { id?: string; name?: string },
>(o: {
  definition: ManagedKindDef<FS, AS>;
  collection: string;
  listCall: string;
  mapping: ServerChildMapping<z.infer<FS>, z.infer<AS>, T>;
}) {
  const { observed, connectionDetails, ...writes } = o.mapping;
  const mapping: ChildMapping<z.infer<FS>, z.infer<AS>, Parent, T> = {
    ...writes,
    observationOf: (_fp, parent, child) => {
      const details = connectionDetails?.(child);
      return {
        resourceExists: true,
        observed: { ...SERVER.fields(parent), ...observed(child) } as Partial<z.infer<FS>>,
        atProvider: (child.id ? { id: child.id } : {}) as z.infer<AS>,
        availability: "Available",
        ...(details ? { connectionDetails: details } : {}),
      };
    },
  };
  return armChildProvider<FS, AS, Parent, T>({
    definition: o.definition,
    resourceType: `Microsoft.DBforPostgreSQL/flexibleServers/${o.collection}`,
    listCall: o.listCall,
    homeParents: { serverName: "server" },
    kind: (arm) => {
      const path = (p: Parent, name?: string) =>
        `${serverPath(arm, p.rg, p.server)}/${o.collection}${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;
      return {
        parent: SERVER,
        parents: () => eachServer(arm),
        calls: {
          get: (p, name) => arm.call<T>("GET", path(p, name), POSTGRES_API),
          list: (p) => arm.pages<T>(path(p), POSTGRES_API),
          put: (p, name, body) => arm.call("PUT", path(p, name), POSTGRES_API, body),
          remove: (p, name) => arm.call("DELETE", path(p, name), POSTGRES_API),
        },
        mapping,
        writes: { guard: (p, call) => onServer(p.server, call) },
      };
    },
  });
}

/** Two ARM ids name the same resource (ARM ids are case-insensitive). */
export const sameId = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/** `o` without its undefined and empty members (unlike api/json.ts's `defined`, "" goes too). */
export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
