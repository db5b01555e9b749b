// How a managed kind is found from a cloud's audit event (CloudTrail via EventBridge, Cloud Audit Logs,
// Event Grid resource events), and the index label that makes one label-selected LIST find it.
//
// The label holds a hash of the kind (group/kind) and its external name, lower-cased, without a scope
// (region, project, resource group): the engine writes it knowing only the annotation, so every kind gets
// it the same way, and a spec.region change does not move it. Names the cloud treats as different (same
// queue name in two regions, "Q" and "q") then share a label value: the event finds both, and the one it
// was not about gets one extra level-triggered reconcile that finds nothing to do — never a wrong write.
import { createHash } from "node:crypto";

/** The index label on managed resources: hash of group/kind and the lower-cased external name. */
export const EXTERNAL_KEY_LABEL = "driftless.dev/external-key";

/**
 * What driftless's SDK clients put in their User-Agent, so a person reading an audit log sees driftless's
 * calls. Never a reason to drop an event: any caller may send it (the principal decides, resolve.ts).
 */
export const DRIFTLESS_USER_AGENT = "driftless";

/** The index label's value for a kind's external name: 40 hex digits (a label value allows 63). */
export function externalKeyOf(kind: { group: string; kind: string }, externalName: string): string {
  return createHash("sha256")
    .update(`${kind.group}/${kind.kind}/${externalName.toLowerCase()}`)
    .digest("hex")
    .slice(0, 40);
}

/** The parts of a CloudTrail record (the `detail` of an "AWS API Call via CloudTrail" event) a kind reads. */
export interface CloudTrailCall {
  eventSource: string;
  eventName: string;
  awsRegion?: string | undefined;
  requestParameters: Record<string, unknown>;
  responseElements: Record<string, unknown>;
}

/** The parts of a Cloud Audit Logs entry (its AuditLog protoPayload) a kind reads. */
export interface AuditLogCall {
  serviceName: string;
  methodName: string;
  /** e.g. `projects/p/topics/t`, `projects/_/buckets/b`. */
  resourceName: string;
}

/** The parts of an Event Grid resource event (ResourceWriteSuccess, ResourceDeleteSuccess) a kind reads. */
export interface ArmResourceCall {
  /** e.g. `Microsoft.Network/virtualNetworks/write`. */
  operationName: string;
  /** e.g. `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v`. */
  resourceUri: string;
}

/**
 * A kind's cloud events: which audited calls can change (or delete) a resource of the kind, and how to
 * read the resource's external name from one. Only mutating calls: reads are never audited as changes.
 * `externalNames` returns [] for a call about something else (a CreateTags of a subnet, asked of VPC).
 */
export interface CloudEventsDeclaration {
  aws?: {
    /** The EventBridge source, e.g. `aws.sqs`. */
    source: `aws.${string}`;
    eventNames: readonly string[];
    externalNames(call: CloudTrailCall): string[];
  };
  gcp?: {
    /** e.g. `pubsub.googleapis.com`. */
    serviceName: string;
    methodNames: readonly string[];
    externalNames(call: AuditLogCall): string[];
  };
  azure?: {
    /** ARM operations (compared case-insensitively), e.g. `Microsoft.Network/virtualNetworks/write`. */
    operations: readonly string[];
    externalNames(call: ArmResourceCall): string[];
  };
}

// --- helpers the kinds' declarations share ---------------------------------------------------------------

/** A string field of a request/response object, or undefined. */
export function stringAt(obj: unknown, ...path: string[]): string | undefined {
  let at: unknown = obj;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return typeof at === "string" && at !== "" ? at : undefined;
}

/** The string values of `field` in the items of a CloudTrail list (`{ items: [{ field }] }`). */
export function itemsAt(obj: unknown, list: string, field: string): string[] {
  const items = (obj as Record<string, { items?: unknown }> | undefined)?.[list]?.items;
  if (!Array.isArray(items)) return [];
  return items.map((i) => stringAt(i, field)).filter((v): v is string => v !== undefined);
}

/** The last path segment of a URL (an SQS queue URL's queue name). */
export function lastSegment(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const parts = url.split("?")[0]?.split("/").filter(Boolean) ?? [];
  return parts.at(-1);
}

/** The name in an ARN whose resource part is `<type>:<name>` (RDS: `db:mydb`, `subgrp:mygroup`). */
export function arnName(arn: string | undefined, type: string): string | undefined {
  const parts = arn?.split(":") ?? [];
  return parts.length === 8 && parts[0] === "arn" && parts[6] === type ? parts[7] : undefined;
}

/** The segment after `collection` in a resource path (`projects/p/topics/t`, ARM ids), or undefined. */
export function segmentAfter(path: string, collection: string, last = true): string | undefined {
  const parts = path.split("/").filter(Boolean);
  const at = parts.findIndex((p) => p.toLowerCase() === collection.toLowerCase());
  if (at === -1 || at + 1 >= parts.length) return undefined;
  // `last`: the collection's item must end the path (a subnet event is not its network's event).
  if (last && at + 2 !== parts.length) return undefined;
  return parts[at + 1];
}

/** Ids among `values` that start with `prefix` (EC2 CreateTags names resources of every type). */
export const withPrefix = (values: readonly string[], prefix: string) =>
  values.filter((v) => v.startsWith(prefix));

/** The first name given, as the list `externalNames` returns ([] when none). */
export function firstName(...candidates: Array<string | undefined>): string[] {
  const name = candidates.find((c) => c !== undefined && c !== "");
  return name === undefined ? [] : [name];
}

/** A GCP kind's external name: the id after `collection` in the entry's resourceName. */
export const byResourceName =
  (collection: string) =>
  (call: AuditLogCall): string[] =>
    firstName(segmentAfter(call.resourceName, collection));

/** A Google kind's cloud events: `serviceName`'s `methodNames`, the resource named after `collection`. */
export const googleAuditEvents = (
  serviceName: string,
  methodNames: readonly string[],
  collection: string,
): CloudEventsDeclaration => ({
  gcp: { serviceName, methodNames, externalNames: byResourceName(collection) },
});

/** An Azure kind's external name: the name after `collection` in the event's resourceUri. */
export const byResourceUri =
  (collection: string) =>
  (call: ArmResourceCall): string[] =>
    firstName(segmentAfter(call.resourceUri, collection));
