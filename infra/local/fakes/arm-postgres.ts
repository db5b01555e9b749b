// The Azure Database for PostgreSQL flexible-server part of the ARM fake (arm-fake.ts): servers, their
// firewall rules and databases with ARM's URL shapes, long-running operations the way the resource
// provider runs them (202 + Azure-AsyncOperation and Location headers, an operation status resource going
// InProgress → Succeeded, the server's state Provisioning → Ready), and its error answers. Operations move
// on by being looked at (a poll of the operation or a read of its resource), never by the clock, so tests
// see every state deterministically.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

type Json = Record<string, unknown>;

/** What the PostgreSQL part uses of the ARM fake that hosts it. */
export interface PostgresHost {
  /** Every resource of the fake by lower-cased id (shared: deleting a group removes its servers too). */
  resources: Map<string, { doc: Json; rg: string; deletingOp?: string }>;
  send(res: ServerResponse, status: number, body?: unknown, headers?: Record<string, string>): void;
  body(req: IncomingMessage): Promise<Json>;
  /** The fake's error type: thrown, it becomes ARM's `{error: {code, message}}` answer. */
  fail(status: number, code: string, message: string): Error;
  /** The resource group document, or 404 ResourceGroupNotFound. */
  group(sub: string, name: string): { doc: Json; deletingOp?: string };
  /** One page of a list as ARM links them (nextLink). */
  page(items: Json[], url: URL, base: string): Json;
}

export interface PostgresOptions {
  /** Looks at an operation (polls, reads of its resource) after which it completes (default 3). */
  polls?: number;
  /** vCores a subscription may run per region before creates fail with QuotaExceeded (default 64). */
  vCoreQuota?: number;
}

export const POSTGRES_NAMESPACE = "microsoft.dbforpostgresql";
const SERVER_TYPE = "Microsoft.DBforPostgreSQL/flexibleServers";
const CHILD_TYPES: Record<string, string> = { firewallrules: "firewallRules", databases: "databases" };
const DELEGATION_SERVICE = "microsoft.dbforpostgresql/flexibleservers";
const VERSIONS: Record<string, string> = {
  "12": "22",
  "13": "21",
  "14": "18",
  "15": "13",
  "16": "9",
  "17": "5",
  "18": "1",
};
const DEFAULT_VERSION = "17";
const STORAGE_SIZES = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32767];
const TIER_FAMILY: Record<string, RegExp> = {
  Burstable: /^Standard_B\d+/,
  GeneralPurpose: /^Standard_D\d+/,
  MemoryOptimized: /^Standard_E\d+/,
};
const RESERVED_LOGINS = [
  "azure_superuser",
  "azure_pg_admin",
  "admin",
  "administrator",
  "root",
  "guest",
  "public",
];
const SERVER_NAME = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/;

interface Operation {
  id: string;
  /** Lower-cased id of the resource it works on. */
  target: string;
  action: "create" | "update" | "delete";
  location: string;
  looks: number;
  status: "InProgress" | "Succeeded" | "Failed";
  startTime: string;
  endTime?: string;
}

const ipNumber = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
const vCoresOf = (sku: Json | undefined) => Number(/_[A-Z](\d+)/.exec(String(sku?.["name"] ?? ""))?.[1] ?? 2);

export function createPostgresFake(host: PostgresHost, opts: PostgresOptions = {}) {
  const polls = opts.polls ?? 3;
  const quota = opts.vCoreQuota ?? 64;
  const { resources, send, fail } = host;
  const operations = new Map<string, Operation>();
  /** The operation in progress per lower-cased resource id. */
  const running = new Map<string, string>();

  const invalid = (message: string) => fail(400, "InvalidParameterValue", message);
  const props = (doc: Json) => (doc["properties"] ?? {}) as Json;

  const complete = (op: Operation) => {
    op.status = "Succeeded";
    op.endTime = new Date().toISOString();
    running.delete(op.target);
    const r = resources.get(op.target);
    if (op.action === "delete") {
      for (const id of [...resources.keys()])
        if (id === op.target || id.startsWith(`${op.target}/`)) resources.delete(id);
      return;
    }
    if (r && r.doc["type"] === SERVER_TYPE) props(r.doc)["state"] = "Ready";
  };

  /** Someone looked at the operation or its resource: it moves one step, completing at the Nth look. */
  const look = (op: Operation | undefined) => {
    if (op?.status !== "InProgress") return;
    op.looks += 1;
    if (op.looks >= polls) complete(op);
  };
  const lookAt = (id: string) => look(operations.get(running.get(id) ?? ""));

  const start = (
    res: ServerResponse,
    base: string,
    sub: string,
    target: string,
    action: Operation["action"],
    location: string,
    apiVersion: string,
  ) => {
    const id = randomUUID();
    const op: Operation = {
      id,
      target,
      action,
      location,
      looks: 0,
      status: "InProgress",
      startTime: new Date().toISOString(),
    };
    operations.set(id, op);
    running.set(target, id);
    accepted(res, base, sub, op, apiVersion);
  };

  const accepted = (res: ServerResponse, base: string, sub: string, op: Operation, apiVersion: string) => {
    const at = `${base}/subscriptions/${sub}/providers/Microsoft.DBforPostgreSQL/locations/${op.location}`;
    send(res, 202, undefined, {
      "azure-asyncoperation": `${at}/azureAsyncOperation/${op.id}?api-version=${apiVersion}`,
      location: `${at}/operationResults/${op.id}?api-version=${apiVersion}`,
      "retry-after": "0",
    });
  };

  const serversOf = (sub: string) =>
    [...resources.values()].filter(
      (r) =>
        r.doc["type"] === SERVER_TYPE &&
        String(r.doc["id"]).toLowerCase().startsWith(`/subscriptions/${sub}/`.toLowerCase()),
    );

  const checkSku = (sku: unknown) => {
    const s = sku as Json | undefined;
    const tier = String(s?.["tier"] ?? "");
    const name = String(s?.["name"] ?? "");
    if (!s || !name || !tier) throw fail(400, "InvalidParameterValue", "The sku name and tier are required.");
    const family = TIER_FAMILY[tier];
    if (!family)
      throw invalid(`The sku tier '${tier}' is not valid: Burstable, GeneralPurpose or MemoryOptimized.`);
    if (!family.test(name)) throw invalid(`The sku '${name}' is not offered in tier '${tier}'.`);
  };

  const checkPassword = (pw: unknown) => {
    if (typeof pw !== "string" || pw.length < 8 || pw.length > 128)
      throw fail(400, "PasswordTooShort", "The administrator password must be 8 to 128 characters long.");
    const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^a-zA-Z0-9]/].filter((c) => c.test(pw)).length;
    if (classes < 3) {
      throw fail(
        400,
        "PasswordNotComplex",
        "The password must contain characters from three of the following categories: uppercase letters, lowercase letters, numbers, and non-alphanumeric characters.",
      );
    }
  };

  const checkStorage = (gb: unknown, current?: number) => {
    if (gb === undefined) return;
    if (typeof gb !== "number" || !STORAGE_SIZES.includes(gb))
      throw invalid(`The storage size ${String(gb)} GiB is not supported: ${STORAGE_SIZES.join(", ")}.`);
    if (current !== undefined && gb < current)
      throw fail(
        400,
        "StorageSizeDecreaseNotSupported",
        `Storage cannot be decreased from ${current} GiB to ${gb} GiB.`,
      );
  };

  const checkRetention = (days: unknown) => {
    if (days !== undefined && (typeof days !== "number" || days < 7 || days > 35))
      throw invalid(`The backup retention period ${String(days)} is not valid: 7 to 35 days.`);
  };

  /** The network section of a new server: the delegated subnet must exist and be delegated to PostgreSQL. */
  const networkOf = (network: Json | undefined): Json => {
    const subnet = network?.["delegatedSubnetResourceId"];
    const dnsZone = network?.["privateDnsZoneArmResourceId"];
    if (!subnet) {
      if (dnsZone) throw invalid("A private DNS zone needs a delegated subnet (private access).");
      return { publicNetworkAccess: network?.["publicNetworkAccess"] ?? "Enabled" };
    }
    const r = resources.get(String(subnet).toLowerCase());
    if (!r || !/\/virtualnetworks\/[^/]+\/subnets\/[^/]+$/i.test(String(subnet)))
      throw invalid(`The subnet '${String(subnet)}' could not be found.`);
    const delegations = (props(r.doc)["delegations"] ?? []) as Json[];
    const delegated = delegations.some(
      (d) => String(props(d)["serviceName"] ?? d["serviceName"] ?? "").toLowerCase() === DELEGATION_SERVICE,
    );
    if (!delegated) {
      throw fail(
        400,
        "SubnetNotDelegated",
        `The subnet '${String(subnet)}' is not delegated to Microsoft.DBforPostgreSQL/flexibleServers.`,
      );
    }
    if (network?.["publicNetworkAccess"] === "Enabled")
      throw invalid("A server in a delegated subnet cannot have public network access.");
    if (
      dnsZone &&
      !/\/providers\/microsoft\.network\/privatednszones\/[^/]+\.postgres\.database\.azure\.com$/i.test(
        String(dnsZone),
      )
    )
      throw invalid(
        `The private DNS zone '${String(dnsZone)}' must be a zone whose name ends with .postgres.database.azure.com.`,
      );
    return {
      publicNetworkAccess: "Disabled",
      delegatedSubnetResourceId: subnet,
      ...(dnsZone ? { privateDnsZoneArmResourceId: dnsZone } : {}),
    };
  };

  const createServer = (sub: string, rgDoc: Json, name: string, id: string, body: Json): Json => {
    if (!SERVER_NAME.test(name))
      throw fail(
        400,
        "InvalidResourceName",
        `The server name '${name}' is invalid: 3-63 lowercase letters, digits and hyphens.`,
      );
    const taken = [...resources.entries()].find(
      ([rid, r]) =>
        r.doc["type"] === SERVER_TYPE &&
        String(r.doc["name"]).toLowerCase() === name.toLowerCase() &&
        rid !== id,
    );
    if (taken) throw fail(409, "ServerNameAlreadyExists", `Specified server name '${name}' is already used.`);
    const location =
      typeof body["location"] === "string" ? body["location"].replace(/\s+/g, "").toLowerCase() : "";
    if (!location)
      throw fail(400, "LocationRequired", "The location property is required for this definition.");
    const p = (body["properties"] ?? {}) as Json;
    checkSku(body["sku"]);
    const login = p["administratorLogin"];
    if (typeof login !== "string" || !login)
      throw invalid("The administrator login is required to create a server.");
    if (RESERVED_LOGINS.includes(login.toLowerCase()) || login.toLowerCase().startsWith("pg_"))
      throw invalid(`The administrator login '${login}' is reserved.`);
    checkPassword(p["administratorLoginPassword"]);
    const version = String(p["version"] ?? DEFAULT_VERSION);
    if (!VERSIONS[version]) throw invalid(`The PostgreSQL version '${version}' is not supported.`);
    const storage = (p["storage"] ?? {}) as Json;
    checkStorage(storage["storageSizeGB"]);
    const backup = (p["backup"] ?? {}) as Json;
    checkRetention(backup["backupRetentionDays"]);
    const used = serversOf(sub)
      .filter((r) => r.doc["location"] === location)
      .reduce((n, r) => n + vCoresOf(r.doc["sku"] as Json), 0);
    const wanted = vCoresOf(body["sku"] as Json);
    if (used + wanted > quota) {
      throw fail(
        409,
        "QuotaExceeded",
        `Operation results in exceeding quota limits of Core. Maximum allowed: ${quota}, Current in use: ${used}, Additional requested: ${wanted}. Please request a quota increase.`,
      );
    }
    return {
      id: `${rgDoc["id"] as string}/providers/${SERVER_TYPE}/${name}`,
      name,
      type: SERVER_TYPE,
      location,
      ...(body["tags"] ? { tags: body["tags"] } : {}),
      sku: { name: (body["sku"] as Json)["name"], tier: (body["sku"] as Json)["tier"] },
      properties: {
        administratorLogin: login,
        version,
        minorVersion: VERSIONS[version],
        state: "Provisioning",
        fullyQualifiedDomainName: `${name}.postgres.database.azure.com`,
        storage: {
          storageSizeGB: storage["storageSizeGB"] ?? 32,
          autoGrow: "Disabled",
          tier: "P4",
          iops: 120,
        },
        backup: {
          backupRetentionDays: backup["backupRetentionDays"] ?? 7,
          geoRedundantBackup: backup["geoRedundantBackup"] ?? "Disabled",
          earliestRestoreDate: new Date().toISOString(),
        },
        network: networkOf(p["network"] as Json | undefined),
        highAvailability: { mode: "Disabled", state: "NotEnabled" },
        availabilityZone: p["availabilityZone"] ?? "1",
        replicationRole: "Primary",
        replicaCapacity: 5,
        authConfig: { activeDirectoryAuth: "Disabled", passwordAuth: "Enabled" },
        dataEncryption: { type: "SystemManaged" },
        maintenanceWindow: { customWindow: "Disabled", dayOfWeek: 0, startHour: 0, startMinute: 0 },
      },
    };
  };

  /** A PATCH (or a PUT of an existing server): what may change changes now, the server shows Updating. */
  const updateServer = (doc: Json, body: Json, fullPut: boolean) => {
    const p = props(doc);
    const next = (body["properties"] ?? {}) as Json;
    if (p["state"] !== "Ready" && p["state"] !== "Stopped") {
      throw fail(
        409,
        "AnotherOperationInProgress",
        `An operation is in progress on server '${doc["name"] as string}' (state ${String(p["state"])}); retry once it is done.`,
      );
    }
    if (
      fullPut &&
      body["location"] &&
      String(body["location"]).replace(/\s+/g, "").toLowerCase() !== doc["location"]
    ) {
      throw fail(
        409,
        "InvalidResourceLocation",
        `The resource '${doc["name"] as string}' already exists in location '${doc["location"] as string}'. A resource with the same name cannot be created in location '${String(body["location"])}'.`,
      );
    }
    if (next["administratorLogin"] !== undefined && next["administratorLogin"] !== p["administratorLogin"])
      throw invalid("The administrator login of a server cannot be changed.");
    const network = next["network"] as Json | undefined;
    const current = p["network"] as Json;
    for (const k of ["delegatedSubnetResourceId", "privateDnsZoneArmResourceId"]) {
      if (
        network?.[k] !== undefined &&
        String(network[k]).toLowerCase() !== String(current[k] ?? "").toLowerCase()
      )
        throw invalid(`The network setting ${k} cannot be changed after the server is created.`);
    }
    if (current["delegatedSubnetResourceId"] && network?.["publicNetworkAccess"] === "Enabled")
      throw invalid("A server in a delegated subnet cannot have public network access.");
    if (body["sku"] !== undefined) checkSku(body["sku"]);
    if (next["administratorLoginPassword"] !== undefined) checkPassword(next["administratorLoginPassword"]);
    const version = next["version"];
    if (version !== undefined) {
      const v = String(version);
      if (!VERSIONS[v]) throw invalid(`The PostgreSQL version '${v}' is not supported.`);
      if (Number(v) < Number(p["version"]))
        throw fail(
          400,
          "InvalidParameterValue",
          `Downgrading PostgreSQL from ${String(p["version"])} to ${v} is not supported.`,
        );
    }
    const storage = next["storage"] as Json | undefined;
    checkStorage(storage?.["storageSizeGB"], (p["storage"] as Json)["storageSizeGB"] as number);
    const backup = next["backup"] as Json | undefined;
    checkRetention(backup?.["backupRetentionDays"]);
    if (
      backup?.["geoRedundantBackup"] !== undefined &&
      backup["geoRedundantBackup"] !== (p["backup"] as Json)["geoRedundantBackup"]
    )
      throw invalid("Geo-redundant backup can only be chosen when the server is created.");

    if (body["sku"] !== undefined) doc["sku"] = body["sku"];
    if (body["tags"] !== undefined) {
      if (body["tags"]) doc["tags"] = body["tags"];
      else delete doc["tags"];
    }
    if (version !== undefined) {
      p["version"] = String(version);
      p["minorVersion"] = VERSIONS[String(version)];
    }
    if (storage?.["storageSizeGB"] !== undefined)
      (p["storage"] as Json)["storageSizeGB"] = storage["storageSizeGB"];
    if (backup?.["backupRetentionDays"] !== undefined)
      (p["backup"] as Json)["backupRetentionDays"] = backup["backupRetentionDays"];
    p["state"] = "Updating";
  };

  const checkFirewallRule = (server: Json, body: Json) => {
    if (((props(server)["network"] as Json)["publicNetworkAccess"] ?? "") !== "Enabled") {
      throw fail(
        400,
        "FirewallRuleNotSupported",
        `Firewall rules are not supported on server '${server["name"] as string}': it has no public network access (private access in a delegated subnet).`,
      );
    }
    const p = (body["properties"] ?? {}) as Json;
    const [from, to] = [p["startIpAddress"], p["endIpAddress"]];
    if (typeof from !== "string" || !IPV4.test(from) || typeof to !== "string" || !IPV4.test(to))
      throw invalid("The firewall rule's startIpAddress and endIpAddress must be IPv4 addresses.");
    if (ipNumber(from) > ipNumber(to))
      throw invalid(`The firewall rule's start address ${from} is after its end address ${to}.`);
    return { startIpAddress: from, endIpAddress: to };
  };

  const checkDatabase = (existing: Json | undefined, body: Json, name: string) => {
    const p = (body["properties"] ?? {}) as Json;
    const want = { charset: p["charset"] ?? "UTF8", collation: p["collation"] ?? "en_US.utf8" };
    if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(name))
      throw invalid(`The database name '${name}' is invalid.`);
    if (existing) {
      const have = props(existing);
      if (have["charset"] !== want.charset || have["collation"] !== want.collation)
        throw invalid("The charset and collation of a database cannot be changed.");
    }
    return want;
  };

  /** /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.DBforPostgreSQL/flexibleServers[/{name}[/{child}[/{childName}]]] */
  const resource = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    sub: string,
    rgName: string,
    pairs: string[],
  ) => {
    const method = req.method ?? "GET";
    const base = `https://${req.headers.host}`;
    const apiVersion = url.searchParams.get("api-version") ?? "";
    const [type = "", serverName, childCollection, childName] = pairs;
    const childType = childCollection ? CHILD_TYPES[childCollection.toLowerCase()] : undefined;
    if (type.toLowerCase() !== "flexibleservers" || (childCollection && !childType) || pairs.length > 4) {
      throw fail(
        404,
        "InvalidResourceType",
        `The resource type '${pairs.filter((_, i) => i % 2 === 0).join("/")}' could not be found in the namespace 'Microsoft.DBforPostgreSQL' for api version '${apiVersion}'.`,
      );
    }
    const rg = host.group(sub, rgName);
    const rgDoc = rg.doc;
    const rgId = String(rgDoc["id"]).toLowerCase();
    const serversPath = `${rgDoc["id"] as string}/providers/${SERVER_TYPE}`;
    if (rg.deletingOp && method !== "GET")
      throw fail(
        409,
        "ResourceGroupBeingDeleted",
        `The resource group '${rgName}' is in deprovisioning state and cannot perform this operation.`,
      );
    const list = (prefix: string) => {
      const items = [...resources.entries()]
        .filter(([id]) => id.startsWith(prefix.toLowerCase()) && !id.slice(prefix.length).includes("/"))
        .map(([id, r]) => {
          lookAt(id);
          return r.doc;
        });
      return send(res, 200, host.page(items, url, base));
    };
    const notFound = (what: string, name: string) =>
      fail(
        404,
        "ResourceNotFound",
        `The Resource '${what}/${name}' under resource group '${rgDoc["name"] as string}' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix`,
      );

    if (!serverName) {
      if (method !== "GET") throw fail(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
      return list(`${serversPath}/`);
    }
    const serverId = `${serversPath}/${serverName}`.toLowerCase();
    const server = resources.get(serverId);

    if (!childType) {
      switch (method) {
        case "GET":
          if (!server) throw notFound(SERVER_TYPE, serverName);
          lookAt(serverId);
          return send(res, 200, server.doc);
        case "PUT": {
          const body = await host.body(req);
          if (server) {
            if (running.get(serverId) && operations.get(running.get(serverId) ?? "")?.action === "delete")
              throw fail(409, "AnotherOperationInProgress", `Server '${serverName}' is being deleted.`);
            updateServer(server.doc, body, true);
            return start(res, base, sub, serverId, "update", String(server.doc["location"]), apiVersion);
          }
          const doc = createServer(sub, rgDoc, serverName, serverId, body);
          resources.set(serverId, { doc, rg: rgId });
          return start(res, base, sub, serverId, "create", String(doc["location"]), apiVersion);
        }
        case "PATCH": {
          if (!server) throw notFound(SERVER_TYPE, serverName);
          updateServer(server.doc, await host.body(req), false);
          return start(res, base, sub, serverId, "update", String(server.doc["location"]), apiVersion);
        }
        case "DELETE": {
          // Deleting what does not exist is done at once, as ARM answers.
          if (!server) return send(res, 204);
          const op = operations.get(running.get(serverId) ?? "");
          // A repeated DELETE joins the delete under way.
          if (op?.action === "delete") return accepted(res, base, sub, op, apiVersion);
          props(server.doc)["state"] = "Dropping";
          return start(res, base, sub, serverId, "delete", String(server.doc["location"]), apiVersion);
        }
        default:
          throw fail(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
      }
    }

    const what = `${SERVER_TYPE}/${serverName}/${childType}`;
    if (!server) {
      throw fail(
        404,
        "ParentResourceNotFound",
        `Failed to perform '${method === "GET" ? "read" : "write"}' on resource(s) of type '${SERVER_TYPE}/${childType}', because the parent resource '${serversPath}/${serverName}' could not be found.`,
      );
    }
    const collection = `${server.doc["id"] as string}/${childType}`;
    if (!childName) {
      if (method !== "GET") throw fail(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
      return list(`${collection}/`);
    }
    const childId = `${collection}/${childName}`.toLowerCase();
    const child = resources.get(childId);
    const location = String(server.doc["location"]);
    switch (method) {
      case "GET":
        if (!child) throw notFound(what, childName);
        lookAt(childId);
        return send(res, 200, child.doc);
      case "PUT": {
        const body = await host.body(req);
        if (props(server.doc)["state"] !== "Ready")
          throw fail(
            409,
            "AnotherOperationInProgress",
            `Server '${serverName}' is ${String(props(server.doc)["state"])}; retry once it is Ready.`,
          );
        const properties =
          childType === "firewallRules"
            ? checkFirewallRule(server.doc, body)
            : checkDatabase(child?.doc, body, childName);
        const doc = {
          id: child ? child.doc["id"] : `${collection}/${childName}`,
          name: child ? child.doc["name"] : childName,
          type: `${SERVER_TYPE}/${childType}`,
          properties,
        };
        resources.set(childId, { doc, rg: rgId });
        return start(res, base, sub, childId, child ? "update" : "create", location, apiVersion);
      }
      case "DELETE": {
        if (!child) return send(res, 204);
        const op = operations.get(running.get(childId) ?? "");
        if (op?.action === "delete") return accepted(res, base, sub, op, apiVersion);
        return start(res, base, sub, childId, "delete", location, apiVersion);
      }
      default:
        throw fail(405, "MethodNotAllowed", `The method '${method}' is not allowed.`);
    }
  };

  /**
   * /subscriptions/{sub}/providers/Microsoft.DBforPostgreSQL/locations/{location}/azureAsyncOperation/{id}
   * (the operation status) and …/operationResults/{id} (202 until done, then the result).
   */
  const operation = (
    res: ServerResponse,
    base: string,
    sub: string,
    kind: string,
    opId: string,
    apiVersion: string,
  ) => {
    const op = operations.get(opId);
    if (!op) throw fail(404, "OperationNotFound", `The operation '${opId}' could not be found.`);
    look(op);
    if (kind === "azureasyncoperation") {
      return send(res, 200, {
        name: op.id,
        status: op.status,
        startTime: op.startTime,
        ...(op.endTime ? { endTime: op.endTime } : {}),
      });
    }
    if (op.status === "InProgress") return accepted(res, base, sub, op, apiVersion);
    const r = resources.get(op.target);
    return r && op.action !== "delete" ? send(res, 200, r.doc) : send(res, 204);
  };

  return { resource, operation, lookAt };
}
