import type { z } from "zod";
import {
  FlexibleServer,
  type FlexibleServerAtProvider,
  type FlexibleServerForProvider,
} from "../../api/azure/dbforpostgresql.ts";
import type {
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import { availabilityTable } from "../availability.ts";
import { ConnectionPassword, PASSWORD_KEY } from "../connection-password.ts";
import { armProvider } from "./arm-provider.ts";
import type { ArmResource, ArmRest } from "./arm-rest.ts";
import { azure, isGone } from "./config.ts";
import { listInGroups, observedLocation, observeInGroups } from "./in-group.ts";
import { nameInId } from "./network-client.ts";
import { defined, onServer, POSTGRES_API, sameId, serverPath } from "./postgresql-client.ts";

type F = z.infer<typeof FlexibleServerForProvider>;
type A = z.infer<typeof FlexibleServerAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;

/** A flexible server as ARM's REST API answers it (the members read here). */
interface CloudServer
  extends ArmResource<{
    administratorLogin?: string;
    version?: string;
    minorVersion?: string;
    state?: string;
    fullyQualifiedDomainName?: string;
    availabilityZone?: string;
    storage?: { storageSizeGB?: number };
    backup?: { backupRetentionDays?: number; geoRedundantBackup?: string };
    network?: {
      publicNetworkAccess?: string;
      delegatedSubnetResourceId?: string;
      privateDnsZoneArmResourceId?: string;
    };
  }> {
  sku?: { name?: string; tier?: string };
}

/** The PATCH body of a server (Servers - Update): sku and tags beside, the rest under properties. */
interface ServerPatch {
  sku?: F["sku"];
  tags?: F["tags"];
  properties?: {
    administratorLoginPassword?: string;
    version?: string;
    storage?: { storageSizeGB?: number };
    backup?: { backupRetentionDays?: number };
  };
}

/** The port every flexible server listens on. */
const POSTGRES_PORT = "5432";

/** Server states in which Azure takes a change (a stopped server must be started first). */
const CHANGEABLE = new Set(["Ready"]);

const availabilityOf = availabilityTable(
  // An update (scaling, a new password) keeps the server serving most of the time.
  { Ready: "Available", Updating: "Available", Provisioning: "Creating", Dropping: "Deleting" },
  (state) =>
    state === undefined
      ? { availability: "Creating" }
      : { availability: "Unavailable", message: `Azure reports the server ${state}` },
);

/** The cloud's value when it names the spec's resource id in another case: the spec's spelling. */
const asSpecified = (spec: string | undefined, cloud: string | undefined) =>
  sameId(spec, cloud) ? spec : cloud || undefined;

/** What observe reports of a server as ARM returned it, by a GET or in a list page of group `rg`. */
function observationOf(fp: F, rg: string, s: CloudServer): Observation {
  const tags = s.tags ?? {};
  const p = s.properties ?? {};
  const state = p.state;
  const host = p.fullyQualifiedDomainName;
  return {
    resourceExists: true,
    observed: defined({
      resourceGroupName: nameInId(s.id, "resourceGroups", rg) ?? rg,
      // ARM stores "westeurope": the user's "West Europe" names the same region and is no drift.
      location: observedLocation(fp.location, s.location),
      administratorLogin: p.administratorLogin,
      version: p.version,
      sku: s.sku?.name ? { name: s.sku.name, tier: s.sku.tier as NonNullable<F["sku"]>["tier"] } : undefined,
      storageSizeGB: p.storage?.storageSizeGB,
      backupRetentionDays: p.backup?.backupRetentionDays,
      geoRedundantBackup: p.backup?.geoRedundantBackup as F["geoRedundantBackup"],
      availabilityZone: p.availabilityZone,
      publicNetworkAccess: p.network?.publicNetworkAccess as F["publicNetworkAccess"],
      delegatedSubnetId: asSpecified(fp.delegatedSubnetId, p.network?.delegatedSubnetResourceId),
      privateDnsZoneId: asSpecified(fp.privateDnsZoneId, p.network?.privateDnsZoneArmResourceId),
      tags: fp.tags !== undefined || Object.keys(tags).length > 0 ? tags : undefined,
    }),
    atProvider: defined({
      id: s.id,
      state,
      fullyQualifiedDomainName: host,
      minorVersion: p.minorVersion,
    }),
    ...availabilityOf(state),
    connectionDetails: defined({
      host,
      port: POSTGRES_PORT,
      username: p.administratorLogin,
    }) as Record<string, string>,
  };
}

/** The PATCH that brings the server to the spec: only what differs, so an in-sync field is never resent. */
function patchOf(
  fp: F,
  observed: Partial<F>,
  name: string,
): NonNullable<ServerPatch["properties"]> & ServerPatch {
  const patch: NonNullable<ServerPatch["properties"]> & ServerPatch = {};
  const differs = (a: unknown, b: unknown) => a !== undefined && JSON.stringify(a) !== JSON.stringify(b);
  if (differs(fp.sku, observed.sku)) patch.sku = fp.sku;
  if (differs(fp.version, observed.version)) {
    if (observed.version && Number(fp.version) < Number(observed.version)) {
      throw new InvalidSpecError(
        `Azure cannot downgrade PostgreSQL: spec.forProvider.version is ${fp.version}, server ${name} runs ${observed.version}; set it to ${observed.version} or later`,
      );
    }
    patch.version = fp.version;
  }
  if (differs(fp.storageSizeGB, observed.storageSizeGB)) {
    if (observed.storageSizeGB && (fp.storageSizeGB ?? 0) < observed.storageSizeGB) {
      throw new InvalidSpecError(
        `Azure cannot shrink storage: spec.forProvider.storageSizeGB is ${fp.storageSizeGB}, server ${name} has ${observed.storageSizeGB}; set it to ${observed.storageSizeGB} or more`,
      );
    }
    patch.storage = { storageSizeGB: fp.storageSizeGB };
  }
  if (differs(fp.backupRetentionDays, observed.backupRetentionDays))
    patch.backup = { backupRetentionDays: fp.backupRetentionDays };
  if (differs(fp.tags, observed.tags)) patch.tags = fp.tags;
  return patch;
}

class FlexibleServerClient implements ExternalClient<F, A> {
  readonly #arm: ArmRest;
  readonly #password: ConnectionPassword<F, A>;
  constructor(arm: ArmRest, password: ConnectionPassword<F, A>) {
    this.#arm = arm;
    this.#password = password;
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    const rg = mr.spec.forProvider.resourceGroupName;
    if (!name || !rg) return { resourceExists: false };
    const server = await azure(async () => {
      try {
        return await this.#arm.call<CloudServer>("GET", serverPath(this.#arm, rg, name), POSTGRES_API);
      } catch (err) {
        if (isGone(err)) return undefined;
        throw err;
      }
    });
    return this.#observed(mr, rg, server);
  }

  /** A server as read, or its absence, as observe reports it (password rotation checked). */
  async #observed(mr: MR, rg: string, server: CloudServer | undefined): Promise<Observation> {
    const fp = mr.spec.forProvider;
    if (!server) {
      const details = await this.#password.absent(mr, fp.administratorPasswordSecretRef);
      return { resourceExists: false, ...(details ? { connectionDetails: details } : {}) };
    }
    const obs = observationOf(fp, rg, server);
    await this.#password.observe(mr, fp.administratorPasswordSecretRef, obs);
    return obs;
  }

  /** Servers - List By Resource Group of each group the items name, one request per page. */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Array<Observation | Error>> {
    return observeInGroups(
      items,
      (rg) => this.#arm.pages<CloudServer>(serverPath(this.#arm, rg), POSTGRES_API),
      (mr, rg, server) => this.#observed(mr, rg, server),
    );
  }

  /** Every flexible server of the subscription, Servers - List By Resource Group group by group (`driftless import`). */
  list(): Promise<ExternalListing[]> {
    return listInGroups(this.#arm, (rg) => serverPath(this.#arm, rg), POSTGRES_API);
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a flexible server needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    const rg = fp.resourceGroupName;
    if (!rg) {
      throw new InvalidSpecError(
        "spec.forProvider.resourceGroupName (or resourceGroupNameRef, resourceGroupNameSelector) is required",
      );
    }
    for (const field of ["location", "administratorLogin", "sku"] as const) {
      if (!fp[field])
        throw new InvalidSpecError(`spec.forProvider.${field} is required to create a flexible server`);
    }
    const password = await this.#password.forCreate(mr, fp.administratorPasswordSecretRef);
    const backup = defined({
      backupRetentionDays: fp.backupRetentionDays,
      geoRedundantBackup: fp.geoRedundantBackup,
    });
    const network = defined({
      publicNetworkAccess: fp.publicNetworkAccess,
      delegatedSubnetResourceId: fp.delegatedSubnetId,
      privateDnsZoneArmResourceId: fp.privateDnsZoneId,
    });
    const server = {
      location: fp.location ?? "",
      sku: fp.sku,
      ...defined({ tags: fp.tags }),
      properties: {
        administratorLogin: fp.administratorLogin,
        administratorLoginPassword: password,
        createMode: "Create",
        ...defined({ version: fp.version, availabilityZone: fp.availabilityZone }),
        ...(fp.storageSizeGB ? { storage: { storageSizeGB: fp.storageSizeGB } } : {}),
        ...(Object.keys(backup).length ? { backup } : {}),
        ...(Object.keys(network).length ? { network } : {}),
      },
    };
    // Only the PUT is sent; the operation is not waited for: observe follows the server's state
    // (Provisioning → Ready) on later reconciles.
    await onServer(name, () => this.#arm.call("PUT", serverPath(this.#arm, rg, name), POSTGRES_API, server));
    this.#password.wasSet(mr, password);
    return {
      connectionDetails: {
        ...defined({ username: fp.administratorLogin, port: POSTGRES_PORT }),
        [PASSWORD_KEY]: password,
      },
    };
  }

  async update(mr: MR, name: string, obs: Observation) {
    const fp = mr.spec.forProvider;
    const rg = fp.resourceGroupName ?? "";
    const { sku, tags, ...props } = patchOf(fp, obs.observed ?? {}, name);
    const password = this.#password.pending(obs);
    if (password !== undefined) props.administratorLoginPassword = password;
    const patch: ServerPatch = {
      ...defined({ sku, tags }),
      ...(Object.keys(props).length > 0 ? { properties: props } : {}),
    };
    if (Object.keys(patch).length === 0) return {};
    const state = obs.atProvider?.state;
    if (state && !CHANGEABLE.has(state)) {
      throw new Error(`flexible server ${name} is ${state}: the change is sent once it is Ready`);
    }
    // Started, not waited for: the server shows the change (state Updating) at once.
    await onServer(name, () => this.#arm.call("PATCH", serverPath(this.#arm, rg, name), POSTGRES_API, patch));
    if (password === undefined) return {};
    this.#password.wasSet(mr, password);
    return { connectionDetails: { ...obs.connectionDetails, [PASSWORD_KEY]: password } };
  }

  async delete(mr: MR, name: string) {
    const rg = mr.spec.forProvider.resourceGroupName;
    if (!rg) return;
    try {
      // Started, never waited for: the engine requeues (Ready=False, Deleting) until observe finds no server.
      await this.#arm.call("DELETE", serverPath(this.#arm, rg, name), POSTGRES_API);
    } catch (err) {
      if (isGone(err)) return;
      await onServer(name, () => Promise.reject(err));
    }
  }
}

export const flexibleServerProvider = armProvider({
  definition: FlexibleServer,
  resourceType: "Microsoft.DBforPostgreSQL/flexibleServers",
  listCall: "Servers - List By Resource Group",
  client: (arm, ctx) =>
    new FlexibleServerClient(
      arm,
      new ConnectionPassword<F, A>((ref) => ctx.readSecretKey(ref), "administratorPasswordSecretRef"),
    ),
});
