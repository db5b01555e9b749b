import {
  type ContainerClient,
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  type PublicAccessType,
  SASProtocol,
} from "@azure/storage-blob";
import type { z } from "zod";
import { Container, type ContainerAtProvider, type ContainerForProvider } from "../../api/azure/storage.ts";
import type {
  ConnectContext,
  ConnectionDetails,
  ExternalClient,
  ExternalListing,
  ExternalObservation,
  ObserveManyItem,
} from "../../api/external.ts";
import { defineProvider, InvalidSpecError } from "../../api/external.ts";
import type { ManagedResource } from "../../api/managed.ts";
import type { AzureProviderConfigSpec } from "../../api/provider-config.ts";
import { deleted } from "../deleted.ts";
import { armEvents } from "./arm-provider.ts";
import { azure, type BlobService, blobService, codeIs, isNotFound } from "./config.ts";
import { eachPage } from "./network-client.ts";

type F = z.infer<typeof ContainerForProvider>;
type A = z.infer<typeof ContainerAtProvider>;
type MR = ManagedResource<F, A>;
type Observation = ExternalObservation<F, A>;
type PublicAccess = NonNullable<F["publicAccess"]>;

const DAY_MS = 86_400_000;
/** A published SAS is valid this long after the UTC day it was signed in starts. */
export const SAS_VALIDITY_MS = 7 * DAY_MS;
/** Read, add, create, write, delete, list: what an application using the container needs; no ACL changes. */
const SAS_PERMISSIONS = "racwdl";
/** Containers per List Containers page: the most the Blob service returns in one response. */
const LIST_PAGE_SIZE = 5000;

const toWire = (p: PublicAccess | undefined): PublicAccessType | undefined =>
  p === "Blob" ? "blob" : p === "Container" ? "container" : undefined;
const fromWire = (p: string | undefined): PublicAccess =>
  p === "blob" ? "Blob" : p === "container" ? "Container" : "None";

/** The cloud's metadata with names in the spec's spelling: Azure names are case-insensitive and come back lower-case. */
function metadataAsSpec(
  cloud: Record<string, string>,
  spec: Record<string, string> | undefined,
): Record<string, string> {
  const spelling = new Map(Object.keys(spec ?? {}).map((k) => [k.toLowerCase(), k]));
  return Object.fromEntries(Object.entries(cloud).map(([k, v]) => [spelling.get(k.toLowerCase()) ?? k, v]));
}

const sameMap = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/** The longest prefix all names share: the list asks only for those (ours usually share a naming prefix). */
function commonPrefix(names: readonly string[]): string {
  let prefix = names[0] ?? "";
  for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}

class ContainerExternal implements ExternalClient<F, A> {
  readonly #blob: BlobService;
  readonly #rateLimit: (() => Promise<void>) | undefined;
  constructor(blob: BlobService, rateLimit: (() => Promise<void>) | undefined) {
    this.#blob = blob;
    this.#rateLimit = rateLimit;
  }

  #container(name: string): ContainerClient {
    return this.#blob.client.getContainerClient(name);
  }

  /**
   * endpoint, accountName and containerName; with an account key also a container-scoped read-write SAS.
   * The SAS is signed for the current UTC day (expiry = day start + 7 days), so it is identical all day and
   * the connection Secret is rewritten once a day, not on every reconcile. The account key is never published.
   */
  #details(container: ContainerClient, name: string): ConnectionDetails {
    const details: ConnectionDetails = {
      endpoint: container.url,
      accountName: this.#blob.accountName,
      containerName: name,
    };
    const key = this.#blob.sharedKey;
    if (!key) return details;
    const expiresOn = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + SAS_VALIDITY_MS);
    const sas = generateBlobSASQueryParameters(
      {
        containerName: name,
        permissions: ContainerSASPermissions.parse(SAS_PERMISSIONS),
        expiresOn,
        // Plain http is allowed only when the account's endpoint itself is http (a local emulator).
        protocol: container.url.startsWith("https:") ? SASProtocol.Https : SASProtocol.HttpsAndHttp,
      },
      key,
    ).toString();
    return {
      ...details,
      sasToken: sas,
      sasUrl: `${container.url}?${sas}`,
      sasExpiresOn: expiresOn.toISOString(),
    };
  }

  #checkAccount(fp: F) {
    const account = this.#blob.accountName;
    if (fp.storageAccountName !== undefined && fp.storageAccountName !== account) {
      throw new InvalidSpecError(
        `spec.forProvider.storageAccountName "${fp.storageAccountName}" is not the ProviderConfig's storage account "${account}": use a ProviderConfig for that account`,
      );
    }
  }

  /**
   * What observe reports of a container from what the Blob service returned, by Get Container Properties
   * or in a List Containers page: its public access level (wire form) and metadata.
   */
  #observationOf(
    fp: F,
    name: string,
    access: string | undefined,
    metadata: Record<string, string>,
  ): Observation {
    const container = this.#container(name);
    const observed: Partial<F> = {
      storageAccountName: this.#blob.accountName,
      publicAccess: fromWire(access),
    };
    // No metadata and none managed: nothing to compare, and no empty map late-initialized into the spec.
    if (fp.metadata !== undefined || Object.keys(metadata).length > 0)
      observed.metadata = metadataAsSpec(metadata, fp.metadata);
    return {
      resourceExists: true,
      observed,
      atProvider: {
        url: container.url,
        storageAccountName: this.#blob.accountName,
        ...(fp.resourceGroupName ? { resourceGroupName: fp.resourceGroupName } : {}),
      },
      availability: "Available",
      connectionDetails: this.#details(container, name),
    };
  }

  async observe(mr: MR, name: string | undefined): Promise<Observation> {
    if (!name) return { resourceExists: false };
    const container = this.#container(name);
    return azure(async () => {
      let props: Awaited<ReturnType<ContainerClient["getProperties"]>>;
      try {
        props = await container.getProperties();
      } catch (err) {
        if (isNotFound(err)) return { resourceExists: false };
        throw err;
      }
      return this.#observationOf(mr.spec.forProvider, name, props.blobPublicAccess, props.metadata ?? {});
    });
  }

  /**
   * List Containers of the account with metadata, narrowed to the names' common prefix, one request per
   * page: each item carries the public access level and metadata observe reads, nothing else is needed.
   */
  async observeMany(items: ReadonlyArray<ObserveManyItem<F, A>>): Promise<Observation[]> {
    const listed = new Map<string, { access: string | undefined; metadata: Record<string, string> }>();
    const prefix = commonPrefix(items.map((i) => i.externalName));
    await azure(async () => {
      const pages = this.#blob.client
        .listContainers({ includeMetadata: true, ...(prefix ? { prefix } : {}) })
        .byPage({ maxPageSize: LIST_PAGE_SIZE });
      for await (const page of eachPage(pages, this.#rateLimit)) {
        for (const c of page.containerItems) {
          // Get Container Properties carries metadata in headers, whose names arrive lower-cased; the
          // list's XML keeps the case they were set in.
          const metadata = Object.fromEntries(
            Object.entries(c.metadata ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
          );
          listed.set(c.name, { access: c.properties.publicAccess, metadata });
        }
      }
    });
    return items.map(({ mr, externalName }) => {
      const c = listed.get(externalName);
      return c
        ? this.#observationOf(mr.spec.forProvider, externalName, c.access, c.metadata)
        : { resourceExists: false };
    });
  }

  /**
   * Every container of the ProviderConfig's storage account (`driftless import`), List Containers page by
   * page: the one account its credentials reach (another account needs its own ProviderConfig).
   */
  async list(): Promise<ExternalListing[]> {
    const out: ExternalListing[] = [];
    const storageAccountName = this.#blob.accountName;
    await azure(async () => {
      const pages = this.#blob.client.listContainers().byPage({ maxPageSize: LIST_PAGE_SIZE });
      for await (const page of eachPage(pages, this.#rateLimit))
        for (const c of page.containerItems)
          out.push({ externalName: c.name, forProvider: { storageAccountName } });
    });
    return out;
  }

  async create(mr: MR, name: string | undefined) {
    if (!name) throw new Error("a container needs a name (crossplane.io/external-name)");
    const fp = mr.spec.forProvider;
    // Never create in another account than the one the spec (late-initialized after the first create) names.
    this.#checkAccount(fp);
    const container = this.#container(name);
    const access = toWire(fp.publicAccess);
    await azure(async () => {
      try {
        await container.create({
          ...(fp.metadata ? { metadata: fp.metadata } : {}),
          ...(access ? { access } : {}),
        });
      } catch (err) {
        // Ours already (a retried create): the next observe compares and updates.
        if (!codeIs(err, "ContainerAlreadyExists")) throw err;
      }
    });
    return { connectionDetails: this.#details(container, name) };
  }

  async update(mr: MR, name: string, obs: ExternalObservation<F, A>) {
    const fp = mr.spec.forProvider;
    const seen = obs.observed ?? {};
    const container = this.#container(name);
    await azure(async () => {
      if (fp.metadata !== undefined && !sameMap(fp.metadata, seen.metadata ?? {})) {
        await container.setMetadata(fp.metadata);
      }
      if (fp.publicAccess !== undefined && fp.publicAccess !== seen.publicAccess) {
        // Setting the access level rewrites the whole ACL: keep the stored access policies someone set.
        const acl = await container.getAccessPolicy();
        await container.setAccessPolicy(toWire(fp.publicAccess), acl.signedIdentifiers);
      }
    });
    return {};
  }

  async delete(_mr: MR, name: string) {
    await azure(() => deleted(() => this.#container(name).delete(), isNotFound));
  }
}

export const containerProvider = defineProvider({
  definition: Container,
  // Only changes made through Resource Manager (az storage container-rm, templates, the portal's
  // management path) are resource events; Blob service (data-plane) calls are not.
  cloudEvents: armEvents("Microsoft.Storage/storageAccounts/blobServices/containers"),
  observeMany: {
    calls: "List Containers with metadata, by the names' common prefix",
    maxItems: LIST_PAGE_SIZE,
  },
  async connect(ctx: ConnectContext<AzureProviderConfigSpec>) {
    return new ContainerExternal(await blobService(ctx), ctx.rateLimit);
  },
});
